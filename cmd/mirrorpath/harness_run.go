package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

func init() {
	register(command{
		name:    "run",
		summary: "scenario catalog under every strategy + benchmark ratios with intervals and an A/A canary; writes results/tmp/run/ (--readme: results/run/)",
		harness: true,
		run:     runCommand(runCatalog),
	})
}

// Benchmark selection of `mirrorpath run` (docs/measuring.md): the append path
// under each strategy, the physical limit, the producer-state update and the
// as-is mirror fetch of 64 and 16 batches a call (AppendFetch). The
// quick default keeps BenchmarkAppend at producers=1000 (the charted count);
// the other counts, a million producers above all, need seconds of warm-up
// each. -bench patterns are matched per name level, and a pattern deeper than
// a benchmark's name would turn it into a parent that measures nothing, so
// the quick selection is several patterns run one after the other.
//
// The producer-state updates at 100,000 and 1,000,000 producers run a fixed
// number of updates (runFixedBenchtime) instead of a time: how many
// collections, page faults of the heap's growth and laps over the producers
// a sample of the reference Model holds depends on how many updates it
// made, so a sample of fixed time measures a different mix on a faster or
// slower moment (docs/measuring.md, "Producer-state updates"). A fixed count
// gives every sample the same mix.
var (
	runQuickPatterns = []string{"^BenchmarkAppend$/.*/.*/.*/^producers=1000$", "^BenchmarkLimit$", "^BenchmarkLimitRing$", "^BenchmarkLimitFused$", "^BenchmarkLimitRingFused$", "^BenchmarkLimitLocked$", "^BenchmarkCopyRing$",
		"^BenchmarkAppendFetch$/^strategy=asis$/.*/^batches=(16|64)$",
		"^BenchmarkUpdate(One)?$/.*/^producers=1000$", runLargeUpdates}
	runFullPatterns = []string{"^Benchmark(Append|AppendFetch|Limit|LimitRing|LimitFused|LimitRingFused|LimitLocked|CopyRing)$",
		"^BenchmarkUpdate(One)?$/.*/^producers=1000$", runLargeUpdates}
	runLargeUpdates = "^BenchmarkUpdate(One)?$/.*/^producers=(100000|1000000)$"
	// runFixedBenchtime: 200,000 updates, over 20 ms of CPU time for the
	// Store at 100,000 producers (cputime's least), one collection of the
	// Model at a million; --full: 1,000,000, one lap of a million producers.
	runFixedBenchtime = map[bool]string{false: "200000x", true: "1000000x"}
)

// runCommand returns `mirrorpath run` running its scenario catalog with
// catalog.
func runCommand(catalog catalogRunner) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int { return runRun(args, stdout, stderr, catalog) }
}

// runRun is `mirrorpath run`, its scenario catalog run by catalog.
func runRun(args []string, stdout, stderr io.Writer, catalog catalogRunner) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	full := fs.Bool("full", false, "publication-grade counts: 10 interleaved rounds of 1 s over every Append, Limit and Update configuration (tens of minutes)")
	out := fs.String("out", "", "output `DIR`, its earlier run files replaced (default results/tmp/run under the module, which git ignores; with --readme results/run)")
	bench := fs.String("bench", "", "benchmarks to run (`RE`, as go test -bench, in go test rounds; default: Append at producers=1000, Limit, Update, interleaved in 2 ms slices; with --full every Append, Limit, Update)")
	benchtime := fs.String("benchtime", "", "measure in go test rounds of -benchtime `D` or Nx (default: the quick selection interleaved in 2 ms slices, 50 ms a configuration a round; 1s with --full)")
	count := fs.Int("count", 0, "interleaved rounds = samples per configuration (`N`; default 20 for the quick selection in slices, 10 in go test rounds: benchmath's 95% interval of a median needs 6)")
	readme := fs.Bool("readme", false, "write the committed run results/run/ (unless --out) and rewrite the generated sections of README.md and results/ from it; with --no-bench (--no-scenarios) the benchmarks (scenario results) of the run already there are kept, so only the verdict (benchmark) tables change")
	failNoisy := fs.Bool("fail-noisy", false, "exit 3 when the report is noisy (docs/measuring.md, \"Noise\"); without it a noisy report exits 0 and says NOISY")
	pkgs := fs.String("pkg", "./appendpath ./psm", "benchmark `PACKAGES` (space or comma separated; the Append, Limit and Update benchmarks live in these two)")
	scen := fs.String("scenarios", "scenarios", "scenario catalog `DIR` (every *.scn in it), relative to the module")
	noBench := fs.Bool("no-bench", false, "skip the benchmarks")
	noScen := fs.Bool("no-scenarios", false, "skip the scenario catalog")
	dir := fs.String("dir", "", "module `DIR` (default: the module enclosing the current directory)")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath run [--full] [--out DIR] [--bench RE] [--pkg PACKAGES] [--scenarios DIR] [--no-bench | --no-scenarios] [--readme] [--fail-noisy]"); !ok {
		return code
	}
	cfg := runConfig{patterns: runQuickPatterns, benchtime: "100ms", count: 10, pkgs: splitList(*pkgs), scenarios: *scen,
		noBench: *noBench, noScenarios: *noScen, full: *full, args: args, readme: *readme, failNoisy: *failNoisy,
		runCatalog: catalog}
	if *full {
		cfg.benchtime, cfg.count, cfg.patterns = "1s", 10, runFullPatterns
	}
	cfg.fixed = map[string]string{runLargeUpdates: runFixedBenchtime[*full]}
	if *bench != "" {
		cfg.patterns, cfg.fixed = []string{*bench}, nil
	}
	if *benchtime != "" {
		cfg.benchtime, cfg.fixed = *benchtime, nil
	}
	// The quick selection is measured interleaved in slices within each
	// package's process; a selection of the user's, another -benchtime or
	// --full runs go test's benchmarks in interleaved rounds.
	cfg.interleave = !*full && *bench == "" && *benchtime == ""
	if cfg.interleave {
		cfg.count = runInterleavePlan.Rounds
	}
	if *count < 0 {
		return usageError(fs, stderr, "--count must be positive")
	}
	if *readme && *noBench && *noScen {
		return usageError(fs, stderr, "--readme with --no-bench and --no-scenarios has nothing to write")
	}
	if *count > 0 {
		cfg.count = *count
	}
	if err := checkBenchtime(cfg.benchtime); err != nil {
		return usageError(fs, stderr, err.Error())
	}
	root, err := moduleRoot(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 2
	}
	cfg.root = root
	if !cfg.noScenarios {
		if _, err := cfg.catalog(); err != nil {
			fmt.Fprintf(stderr, "run: %v\n", err)
			return 2
		}
	}
	cfg.out = *out
	switch {
	case cfg.out == "" && *readme:
		cfg.out = filepath.Join(root, committedRun)
	case cfg.out == "":
		cfg.out = filepath.Join(root, scratchRun)
	}
	return cfg.do(stdout, stderr)
}

// The run directories under the module: scratchRun is where `run` writes by
// default, inside results/tmp/, which .gitignore lists, so that a run leaves
// the checkout clean; committedRun is the run the generated sections of the
// README and results/ are built from, written only with --readme (or --out).
var (
	scratchRun   = filepath.Join("results", "tmp", "run")
	committedRun = filepath.Join("results", "run")
)

// catalog returns the *.scn files of the scenario directory, an error
// saying which when the directory is missing or holds none.
func (c runConfig) catalog() ([]string, error) {
	dir := c.scenarios
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.root, dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--scenarios %s: %w", c.scenarios, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--scenarios %s: not a directory", c.scenarios)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.scn"))
	if err != nil {
		return nil, fmt.Errorf("--scenarios %s: %w", c.scenarios, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("--scenarios %s: no *.scn file in it (--no-scenarios skips the catalog)", c.scenarios)
	}
	return files, nil
}

type runConfig struct {
	root, out, benchtime, scenarios string
	patterns                        []string
	fixed                           map[string]string // pattern → its own -benchtime
	count                           int
	pkgs                            []string
	noBench, noScenarios, full      bool
	interleave                      bool // the quick selection by TestInterleavedFigures (interleaved)
	readme, failNoisy               bool
	args                            []string
	runCatalog                      catalogRunner
}

// The files a run writes into its directory, by half; each run removes
// them first, so that the directory holds one run and nothing of an earlier
// one (a chart without data, a skipped half). The exception is --readme
// with a half skipped: that half's files stay, and the report says which
// run they come from (keptHalves).
var (
	runFiles      = []string{report.MetaFile, report.ReportFile}
	scenarioFiles = []string{report.ScenarioFile}
	benchFiles    = []string{report.BenchFile, "append-throughput.svg", "strategy-over-asis.svg", "psm-update.svg"}
)

// keptHalves returns the earlier run of the directory whose skipped half
// this run keeps, or nil: only --readme keeps a half (the committed run,
// whose verdict tables must not churn with the benchmarks, nor the other
// way round), and only one the earlier run has.
func (c runConfig) keptHalves() (earlier *report.Report, keepScenarios, keepBench bool) {
	if !c.readme || (!c.noBench && !c.noScenarios) {
		return nil, false, false
	}
	earlier, err := report.LoadMeta(c.out)
	if err != nil {
		return nil, false, false
	}
	keepScenarios = c.noScenarios && slices.Contains(earlier.RawFiles, report.ScenarioFile)
	keepBench = c.noBench && slices.Contains(earlier.RawFiles, report.BenchFile)
	return earlier, keepScenarios, keepBench
}

func (c runConfig) do(stdout, stderr io.Writer) int {
	start := time.Now()
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 1
	}
	now := time.Now().UTC()
	rep := &report.Report{
		Title:   "mirrorpath run " + now.Format("2006-01-02 15:04 MST"),
		Date:    now.Format("2006-01-02 15:04"),
		Commit:  gitCommit(c.root), // before the old files go: removing committed ones would read as +dirty
		Command: strings.TrimSpace("mirrorpath run " + strings.Join(c.args, " ")),
	}
	earlier, keepScenarios, keepBench := c.keptHalves()
	remove := slices.Clone(runFiles)
	if !keepScenarios {
		remove = append(remove, scenarioFiles...)
	}
	if !keepBench {
		remove = append(remove, benchFiles...)
	}
	for _, f := range remove {
		if err := os.Remove(filepath.Join(c.out, f)); err != nil && !os.IsNotExist(err) {
			fmt.Fprintf(stderr, "run: %v\n", err)
			return 1
		}
	}
	mode := "quick"
	if c.full {
		mode = "full"
	}
	if c.interleave {
		p := runInterleavePlan
		rep.Settings = append(rep.Settings, fmt.Sprintf("mode %s: %d rounds of the quick selection, each configuration of a ratio's group in %d slices of about %s a round, alternating within a process (`%s` of %s; appendpath's in a process per round)",
			mode, c.count, p.Slices, p.Slice, strings.Trim(runInterleaveTest, "^$"), strings.Join(c.pkgs, " ")))
	} else {
		rep.Settings = append(rep.Settings, fmt.Sprintf("mode %s: %d interleaved rounds of `-benchtime %s`, `-bench '%s'`",
			mode, c.count, c.benchtime, strings.Join(c.patterns, "'` then `'")))
		for _, pat := range c.patterns {
			if bt, ok := c.fixed[pat]; ok {
				rep.Settings = append(rep.Settings, fmt.Sprintf("`'%s'` at a fixed `-benchtime %s`", pat, bt))
			}
		}
	}
	rep.Env = append(rep.Env, fmt.Sprintf("%s/%s, %d CPUs, toolchain %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), goVersion(c.root)))
	if la, err := os.ReadFile("/proc/loadavg"); err == nil { // Linux: say how busy the machine was
		if f := strings.Fields(string(la)); len(f) >= 3 {
			rep.Env = append(rep.Env, fmt.Sprintf("load average at start %s %s %s (1, 5, 15 min): wall-clock figures are only as steady as this allows", f[0], f[1], f[2]))
		}
	}
	rep.CPU, rep.Kernel, rep.Features = cpuModel(), codec.CRCKernel(), cpuFeatures()

	// 1. Scenario catalog. A catalog the simulator cannot run (a file
	// that does not parse, a panic) ends the run before the
	// benchmarks: the report is written, with the reason, and the exit
	// status says so.
	failed := 0
	var failure string
	switch {
	case keepScenarios:
		st := earlier.ScenarioStamp()
		rep.ScenarioRun = &st
		rep.RawFiles = append(rep.RawFiles, report.ScenarioFile)
		rep.Notes = append(rep.Notes, fmt.Sprintf("scenario catalog not run (--no-scenarios): the scenario results of %s UTC, commit %s are kept", st.Date, st.Commit))
	case c.noScenarios:
		rep.Notes = append(rep.Notes, "scenario catalog skipped (--no-scenarios)")
	default:
		m, code, why := c.scenarioMatrix(rep, stderr)
		if m != nil {
			rep.RawFiles = append(rep.RawFiles, report.ScenarioFile)
		}
		if code != 0 {
			failed, failure = code, "scenario catalog: "+why
		}
	}

	// 2. Benchmarks.
	switch {
	case keepBench:
		// The benchmarks' half of the report is the earlier run's: its
		// settings, machine and charts with its raw samples.
		st := earlier.BenchStamp()
		rep.BenchRun = &st
		rep.Settings, rep.Env, rep.Charts = earlier.Settings, earlier.Env, earlier.Charts
		rep.CPU, rep.Kernel, rep.Features = earlier.CPU, earlier.Kernel, earlier.Features
		rep.RawFiles = append(rep.RawFiles, report.BenchFile)
		rep.Notes = append(rep.Notes, fmt.Sprintf("benchmarks not run (--no-bench): the benchmarks of %s UTC, commit %s are kept", st.Date, st.Commit))
	case c.noBench:
		rep.Notes = append(rep.Notes, "benchmarks skipped (--no-bench)")
	case failed != 0:
		rep.Notes = append(rep.Notes, "benchmarks not run: the scenario catalog failed")
	default:
		var benchFailure string
		rep.Figures, benchFailure = c.benchmarks(rep, stderr)
		if benchFailure != "" {
			failed, failure = 1, benchFailure
		}
		if rep.Figures != nil && rep.Figures.Results > 0 {
			rep.RawFiles = append(rep.RawFiles, report.BenchFile)
			if rep.CPU == "" {
				rep.CPU = benchCPU(filepath.Join(c.out, report.BenchFile))
			}
			c.charts(rep, stderr)
		}
	}

	// 3. The report, rebuilt from what was written, as `mirrorpath report` does.
	if err := rep.SaveMeta(c.out); err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 1
	}
	code := writeReports(c.root, c.out, c.readme, stdout, stderr)
	if code != 0 {
		return code
	}
	fmt.Fprintf(stdout, "(%s)\n", time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "run: results in %s\n", displayPath(c.root, c.out))
	if failed != 0 {
		fmt.Fprintf(stderr, "run: %s\n", failure)
		return failed
	}
	return c.exitStatus(c.out, stderr)
}

// exitStatus is 1 when an expect line of the catalog failed, 3 when the
// report is noisy and --fail-noisy is set, else 0.
func (c runConfig) exitStatus(dir string, stderr io.Writer) int {
	rep, err := report.Load(dir)
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 1
	}
	if rep.Matrix != nil {
		if unmet := rep.Matrix.Unmet(); len(unmet) > 0 {
			fmt.Fprintf(stderr, "run: %d scenario expectations did not hold: %s\n", len(unmet), strings.Join(unmet, ", "))
			return 1
		}
	}
	if n := rep.Noise(); n != nil && n.Noisy {
		fmt.Fprintf(stderr, "run: %s (docs/measuring.md, \"Noise\")\n", n.Verdict())
		if n.Host != "" {
			fmt.Fprintf(stderr, "run: the core ran the 100-byte limit at two speeds across the rounds: `mirrorpath hostspeed` says whether it still does (docs/measuring.md, \"The host's two speeds\")\n")
		}
		if c.failNoisy {
			return 3
		}
	}
	return 0
}
