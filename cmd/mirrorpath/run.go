package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

// parseFlags sets fs to print to stderr, its usage being usageLine and then
// the flags, and parses args. ok is false when the command must stop, with
// code 0 after -h and 2 after a flag error (flag has printed the error and
// the usage).
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usageLine string) (code int, ok bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usageLine)
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// parseHarnessFlags parses args into fs for one of the harness commands. It
// returns ok=false with the exit status when the command must stop: 0 after
// -h (the flags are printed to stderr), 2 on a bad flag or a stray argument.
func parseHarnessFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usageLine string) (code int, ok bool) {
	if code, ok := parseFlags(fs, args, stderr, usageLine); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0))), false
	}
	return 0, true
}

// usageError prints msg and the flags, and returns exit status 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), msg)
	fs.Usage()
	return 2
}

// splitList splits a flag value on spaces and commas.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func init() {
	register(command{
		name:    "run",
		summary: "scenario catalog under every strategy + benchmark ratios with intervals and an A/A canary; writes results/run/",
		run:     runRun,
	})
}

// Benchmark selection of `mirrorpath run` (docs/measuring.md): the append path
// under each strategy, the physical limit, the producer-state update and the
// as-is mirror fetch of 64 and 16 batches a call (AppendFetch). The
// quick default keeps BenchmarkAppend at producers=1000 (the charted count);
// the other counts, a million producers above all, need seconds of warm-up
// each. -bench patterns are matched per name level, and a pattern deeper than
// a benchmark's name would turn it into a parent that measures nothing, so
// the quick selection is three patterns run one after the other.
var (
	runQuickPatterns = []string{"^BenchmarkAppend$/.*/.*/.*/^producers=1000$", "^BenchmarkLimit$", "^BenchmarkLimitRing$", "^BenchmarkLimitFused$", "^BenchmarkLimitRingFused$", "^BenchmarkLimitLocked$", "^BenchmarkCopyRing$", "^BenchmarkUpdate$", "^BenchmarkUpdateOne$", "^BenchmarkAppendFetch$/^strategy=asis$/.*/^batches=(16|64)$"}
	runFullPatterns  = []string{"^Benchmark(Append|AppendFetch|Limit|LimitRing|LimitFused|LimitRingFused|LimitLocked|CopyRing|Update|UpdateOne)$"}
)

// runRun is `mirrorpath run`.
func runRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	full := fs.Bool("full", false, "publication-grade counts: 10 interleaved rounds of 1 s over every Append, Limit and Update configuration (tens of minutes)")
	out := fs.String("out", "", "output `DIR`, its earlier run files replaced (default results/run under the module)")
	bench := fs.String("bench", "", "benchmarks to run (`RE`, as go test -bench; default: Append at producers=1000, Limit, Update; with --full every Append, Limit, Update)")
	benchtime := fs.String("benchtime", "", "override -benchtime (`D` or Nx; default 100ms, 1s with --full)")
	count := fs.Int("count", 0, "interleaved rounds = samples per configuration (`N`; default 10: benchmath's 95% interval of a median needs 6)")
	readme := fs.Bool("readme", false, "also rewrite the marked sections of README.md and results/scenarios.md under the module from this run")
	failNoisy := fs.Bool("fail-noisy", false, "exit 3 when the report is noisy (docs/measuring.md, \"Noise\"); without it a noisy report exits 0 and says NOISY")
	pkgs := fs.String("pkg", "./appendpath ./psm", "benchmark `PACKAGES` (space or comma separated; the Append, Limit and Update benchmarks live in these two)")
	scen := fs.String("scenarios", "scenarios", "scenario catalog `DIR` (every *.scn in it), relative to the module")
	noBench := fs.Bool("no-bench", false, "skip the benchmarks")
	noScen := fs.Bool("no-scenarios", false, "skip the scenario catalog")
	dir := fs.String("dir", "", "module `DIR` (default: the module enclosing the current directory)")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath run [--full] [--out DIR] [--bench RE] [--pkg PACKAGES] [--scenarios DIR] [--readme] [--fail-noisy]"); !ok {
		return code
	}
	cfg := runConfig{patterns: runQuickPatterns, benchtime: "100ms", count: 10, pkgs: splitList(*pkgs), scenarios: *scen,
		noBench: *noBench, noScenarios: *noScen, full: *full, args: args, readme: *readme, failNoisy: *failNoisy}
	if *full {
		cfg.benchtime, cfg.count, cfg.patterns = "1s", 10, runFullPatterns
	}
	if *bench != "" {
		cfg.patterns = []string{*bench}
	}
	if *benchtime != "" {
		cfg.benchtime = *benchtime
	}
	if *count < 0 {
		return usageError(fs, stderr, "--count must be positive")
	}
	if *readme && (*noBench || *noScen) {
		return usageError(fs, stderr, "--readme rewrites both generated sections: it needs the benchmarks and the scenario catalog")
	}
	if *count > 0 {
		cfg.count = *count
	}
	root, err := moduleRoot(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "run: %v\n", err)
		return 2
	}
	cfg.root = root
	cfg.out = *out
	if cfg.out == "" {
		cfg.out = filepath.Join(root, "results", "run")
	}
	return cfg.do(stdout, stderr)
}

type runConfig struct {
	root, out, benchtime, scenarios string
	patterns                        []string
	count                           int
	pkgs                            []string
	noBench, noScenarios, full      bool
	readme, failNoisy               bool
	args                            []string
}

// moduleRoot returns dir, or the nearest directory at or above the current
// one that holds a go.mod.
func moduleRoot(dir string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			return "", fmt.Errorf("%s holds no go.mod", dir)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s (use --dir)", wd)
		}
	}
}

// runFiles are the files a run writes into its directory; each run removes
// them first, so that the directory holds one run and nothing of an earlier
// one (a chart without data, a skipped half).
var runFiles = []string{report.MetaFile, report.BenchFile, report.ScenarioFile, report.ReportFile,
	"append-throughput.svg", "strategy-over-asis.svg", "psm-update.svg"}

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
	for _, f := range runFiles {
		if err := os.Remove(filepath.Join(c.out, f)); err != nil && !os.IsNotExist(err) {
			fmt.Fprintf(stderr, "run: %v\n", err)
			return 1
		}
	}
	mode := "quick"
	if c.full {
		mode = "full"
	}
	rep.Settings = append(rep.Settings, fmt.Sprintf("mode %s: %d interleaved rounds of `-benchtime %s`, `-bench '%s'`",
		mode, c.count, c.benchtime, strings.Join(c.patterns, "'` then `'")))
	rep.Env = append(rep.Env, fmt.Sprintf("%s/%s, %d CPUs, toolchain %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), goVersion(c.root)))
	if la, err := os.ReadFile("/proc/loadavg"); err == nil { // Linux: say how busy the machine was
		if f := strings.Fields(string(la)); len(f) >= 3 {
			rep.Env = append(rep.Env, fmt.Sprintf("load average at start %s %s %s (1, 5, 15 min): wall-clock figures are only as steady as this allows", f[0], f[1], f[2]))
		}
	}
	rep.CPU, rep.Kernel, rep.Features = cpuModel(), codec.CRCKernel(), cpuFeatures()

	// 1. Scenario catalog.
	if c.noScenarios {
		rep.Notes = append(rep.Notes, "scenario catalog skipped (--no-scenarios)")
	} else if m := c.scenarioMatrix(rep, stderr); m != nil {
		rep.RawFiles = append(rep.RawFiles, report.ScenarioFile)
	}

	// 2. Benchmarks.
	if c.noBench {
		rep.Notes = append(rep.Notes, "benchmarks skipped (--no-bench)")
	} else {
		rep.Figures = c.benchmarks(rep, stderr)
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
		if c.failNoisy {
			return 3
		}
	}
	return 0
}

// writeReports loads the run directory dir, writes its report.md, prints
// the text report with the noise verdict and, with readme, rewrites the
// marked sections of README.md and results/scenarios.md under root.
func writeReports(root, dir string, readme bool, stdout, stderr io.Writer) int {
	rep, err := report.Load(dir)
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return 1
	}
	if err := rep.WriteReportFile(dir); err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return 1
	}
	rep.WriteText(stdout)
	if n := rep.Noise(); n != nil && n.Noisy {
		fmt.Fprintf(stdout, "\n*** NOISY report: %d noise checks failed (above); ratios marked ‼ are not to be quoted ***\n", len(n.Reasons))
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", filepath.Join(dir, report.ReportFile))
	if !readme {
		return 0
	}
	from, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(from, "..") {
		fmt.Fprintf(stderr, "report: --readme needs the run directory inside the module (%s is not under %s)\n", dir, root)
		return 2
	}
	for _, doc := range []string{"README.md", filepath.Join("results", "scenarios.md")} {
		done, err := rep.RewriteSections(filepath.Join(root, doc), filepath.ToSlash(from))
		if err != nil {
			fmt.Fprintf(stderr, "report: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "rewrote %s: sections %s\n", doc, strings.Join(done, ", "))
	}
	return 0
}

// scenarioMatrix runs every *.scn of the catalog through the scenario
// command compiled into this binary (`scenario run --json`), writes its JSON
// lines to scenarios.jsonl and parses the verdict matrix. It returns nil,
// with a note saying why, when the catalog or the command is missing.
func (c runConfig) scenarioMatrix(rep *report.Report, stderr io.Writer) *report.Matrix {
	dir := c.scenarios
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.root, dir)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.scn"))
	if len(files) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("no scenario catalog: %s holds no *.scn file", c.scenarios))
		return nil
	}
	sc, ok := commands["scenario"]
	if !ok {
		rep.Notes = append(rep.Notes, "the scenario command is not built into this binary yet (cmd/mirrorpath/scenario.go); verdict matrix skipped")
		return nil
	}
	step := progress(stderr, "run", fmt.Sprintf("scenario catalog: %d files × every strategy", len(files)), nil)
	var jsonOut, errOut bytes.Buffer
	code, panicked := callCommand(sc, append([]string{"run", "--json"}, files...), &jsonOut, &errOut)
	step(fmt.Sprintf("exit %d", code))
	// Paths relative to the module, so that the committed file names no machine.
	rel := bytes.ReplaceAll(jsonOut.Bytes(), []byte(`"file":"`+c.root+string(filepath.Separator)), []byte(`"file":"`))
	os.WriteFile(filepath.Join(c.out, report.ScenarioFile), rel, 0o644)
	if panicked != "" {
		rep.Notes = append(rep.Notes, "scenario run panicked: "+panicked)
	}
	if code == 2 {
		rep.Notes = append(rep.Notes, "scenario run reported a usage or file error: "+firstLines(errOut.String(), 3))
	}
	m, err := report.ParseScenarios(&jsonOut)
	if err != nil || len(m.Files) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("scenario run produced no JSON result lines (exit %d): %s", code, firstLines(errOut.String(), 3)))
		return nil
	}
	m.ShortenFiles()
	if m.Malformed > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d malformed JSON lines in the scenario output were skipped", m.Malformed))
	}
	return m
}

// callCommand runs a registered command in-process, turning a panic into a message.
func callCommand(c command, args []string, stdout, stderr io.Writer) (code int, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			code, panicked = 1, fmt.Sprint(r)
		}
	}()
	return c.run(args, stdout, stderr), ""
}

// benchmarks builds one test binary per package (so that a package that
// does not build or has no benchmark does not hide the others), then runs
// c.count rounds; each round runs every binary once per pattern with
// -test.count 1. Spreading the samples of every configuration over the
// whole run, as the gate does, keeps machine drift out of the ratios, which
// compare configurations measured at different moments. The output goes to
// bench.txt and is parsed.
func (c runConfig) benchmarks(rep *report.Report, stderr io.Writer) *report.Figures {
	raw, err := os.Create(filepath.Join(c.out, report.BenchFile))
	if err != nil {
		rep.Notes = append(rep.Notes, "bench.txt: "+err.Error())
		return nil
	}
	defer raw.Close()
	binDir, err := os.MkdirTemp("", "mirrorpath-run-")
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return nil
	}
	defer os.RemoveAll(binDir)

	ctx := context.Background()
	tree := benchgate.WorkingTree(c.root, "run")
	var bins []benchgate.Binary
	step := progress(stderr, "run", fmt.Sprintf("building test binaries of %s", strings.Join(c.pkgs, " ")), nil)
	for i, pkg := range c.pkgs {
		if !strings.Contains(pkg, "...") {
			if st, err := os.Stat(filepath.Join(c.root, pkg)); err != nil || !st.IsDir() {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: package not present yet; its benchmarks are missing", pkg))
				continue
			}
		}
		b, broken, err := tree.BuildTests(ctx, []string{pkg}, filepath.Join(binDir, strconv.Itoa(i)))
		for _, e := range broken {
			if err == nil {
				err = e
			}
		}
		switch {
		case err != nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: does not build, its benchmarks are missing: %s", pkg, firstLines(err.Error(), 3)))
		case len(b) == 0:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: has no test files, so no benchmarks", pkg))
		}
		bins = append(bins, b...)
	}
	step(fmt.Sprintf("%d binaries", len(bins)))

	results := map[string]int{}
	failed := map[string]bool{}
	var all bytes.Buffer
	total := 0
	for round := 1; round <= c.count; round++ {
		step := progress(stderr, "run", fmt.Sprintf("benchmarks, round %d/%d", round, c.count),
			func() string { return fmt.Sprintf("%d results so far", total) })
		for _, b := range bins {
			if failed[b.ImportPath] {
				continue
			}
			for _, pat := range c.patterns {
				out, err := b.RunBench(ctx, pat, c.benchtime, 0)
				if err != nil {
					failed[b.ImportPath] = true
					rep.Notes = append(rep.Notes, fmt.Sprintf("%s: benchmark run failed in round %d, later rounds skipped: %s",
						b.ImportPath, round, firstLines(failLines(err.Error()), 4)))
					break
				}
				n := strings.Count(string(out), "\nBenchmark")
				results[b.ImportPath] += n
				total += n
				raw.Write(out)
				all.Write(out)
			}
		}
		step(fmt.Sprintf("%d results", total))
	}
	for _, b := range bins {
		if results[b.ImportPath] == 0 && !failed[b.ImportPath] {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: none of its benchmarks is in the selection (`%s`)", b.ImportPath, strings.Join(c.patterns, "` or `")))
		}
	}
	fig, err := report.ParseBench(&all, report.BenchFile)
	if err != nil {
		rep.Notes = append(rep.Notes, "parsing benchmark output: "+err.Error())
		return nil
	}
	names := fig.Names()
	for _, want := range []struct{ name, why string }{
		{"Append", "strategy/asis ratios and the throughput chart"},
		{"Limit", "the asis/limit ratio and the limit line"},
		{"Update", "the store/model ratio and the producer-state chart"},
	} {
		if !slices.Contains(names, want.name) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("no Benchmark%s results, so %s cannot be produced", want.name, want.why))
		}
	}
	return fig
}

// charts writes the SVG charts that have data.
func (c runConfig) charts(rep *report.Report, stderr io.Writer) {
	for _, ch := range []struct {
		file  string
		chart *report.Chart
	}{
		{"append-throughput.svg", rep.Figures.ThroughputChart()},
		{"strategy-over-asis.svg", rep.Figures.StrategyChart()},
		{"psm-update.svg", rep.Figures.UpdateChart()},
	} {
		if !ch.chart.HasData() {
			os.Remove(filepath.Join(c.out, ch.file)) // no stale chart from an earlier run in the same --out
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s not drawn: no data for %q", ch.file, ch.chart.Title))
			continue
		}
		if err := writeFileWith(filepath.Join(c.out, ch.file), ch.chart.WriteSVG); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", ch.file, err))
			continue
		}
		rep.Charts = append(rep.Charts, report.ChartFile{Title: ch.chart.Title, File: ch.file})
	}
}

// progress prints "<cmd>: <what> ..." and, every 10 s until the returned
// function is called, a heartbeat with the elapsed time and status().
func progress(stderr io.Writer, cmd, what string, status func() string) func(result string) {
	start := time.Now()
	fmt.Fprintf(stderr, "%s: %s ...\n", cmd, what)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s := ""
				if status != nil {
					s = ", " + status()
				}
				fmt.Fprintf(stderr, "%s:   %s: %s elapsed%s\n", cmd, what, time.Since(start).Round(time.Second), s)
			}
		}
	}()
	return func(result string) {
		close(stop)
		wg.Wait()
		fmt.Fprintf(stderr, "%s: %s: %s (%s)\n", cmd, what, result, time.Since(start).Round(100*time.Millisecond))
	}
}

func goVersion(dir string) string {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// benchCPU returns the first "cpu:" line of benchmark output.
func benchCPU(path string) string {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "cpu: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// failLines picks the lines of go test output that explain a failure.
func failLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "---") || strings.Contains(l, "panic:") || strings.Contains(l, ".go:") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "\n")
}

// firstLines joins the first n non-empty lines of s with " / ".
func firstLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	if len(out) == 0 {
		return "(no output)"
	}
	return strings.Join(out, " / ")
}
