package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchunit"
)

// Report is everything one `mirrorpath run` produced.
// Everything but Figures and Matrix is saved as run.json next to the raw
// files, from which Load rebuilds the whole report.
type Report struct {
	Title    string   `json:"title"`
	Date     string   `json:"date,omitempty"`   // UTC, "2006-01-02 15:04"
	Commit   string   `json:"commit,omitempty"` // short hash, "+dirty" when the tree had changes
	Command  string   `json:"command"`          // the command line that produced it
	Settings []string `json:"settings"`         // e.g. "benchtime 100ms", "count 3"
	Env      []string `json:"env"`              // go version, load, …
	// CPU is the processor's model name; Kernel the CRC-32C kernel the
	// code dispatches to on it (codec.CRCKernel) and Features the CPU
	// features that choice depends on, as the CPU reports them.
	CPU      string      `json:"cpu,omitempty"`
	Kernel   string      `json:"crc_kernel,omitempty"`
	Features []string    `json:"cpu_features,omitempty"`
	Notes    []string    `json:"notes"` // what was missing or failed, in plain words
	Figures  *Figures    `json:"-"`     // nil when no benchmark ran
	Matrix   *Matrix     `json:"-"`     // nil when no scenario ran
	Charts   []ChartFile `json:"charts"`
	RawFiles []string    `json:"raw_files"` // raw output files next to report.md
	// ScenarioRun and BenchRun say which run produced each half of the
	// directory when they differ from the run above: `run --readme
	// --no-bench` replaces the scenario results and keeps the benchmarks
	// of an earlier run (and their Settings, Env, CPU and Charts), and the
	// other way round. Nil means the run above.
	ScenarioRun *Stamp `json:"scenario_run,omitempty"`
	BenchRun    *Stamp `json:"bench_run,omitempty"`
	// RunQueue is how busy the machine was while the benchmarks ran; nil
	// when it was not sampled (not Linux, or a run from before the rule).
	RunQueue *RunQueue `json:"run_queue,omitempty"`
}

// Stamp names a run: when, at which commit, by which command.
type Stamp struct {
	Date    string `json:"date,omitempty"`
	Commit  string `json:"commit,omitempty"`
	Command string `json:"command"`
}

// stamp is the run's own Stamp.
func (r *Report) stamp() Stamp { return Stamp{Date: r.Date, Commit: r.Commit, Command: r.Command} }

// ScenarioStamp is the run that produced the scenario results.
func (r *Report) ScenarioStamp() Stamp {
	if r.ScenarioRun != nil {
		return *r.ScenarioRun
	}
	return r.stamp()
}

// BenchStamp is the run that produced the benchmark results.
func (r *Report) BenchStamp() Stamp {
	if r.BenchRun != nil {
		return *r.BenchRun
	}
	return r.stamp()
}

// ChartFile is a chart written next to report.md.
type ChartFile struct {
	Title string `json:"title"`
	File  string `json:"file"`
}

// cpuLine says which machine the figures come from: model, CRC-32C kernel,
// the features it depends on.
func (r *Report) cpuLine() string {
	cpu := r.CPU
	if cpu == "" {
		cpu = "unknown CPU"
	}
	if r.Kernel != "" {
		cpu += "; CRC-32C kernel `" + r.Kernel + "`"
	}
	if len(r.Features) > 0 {
		cpu += " (features: " + strings.Join(r.Features, " ") + ")"
	}
	return cpu
}

// Noise judges the benchmark figures; nil without them.
func (r *Report) Noise() *Noise {
	if r.Figures == nil || r.Figures.Results == 0 {
		return nil
	}
	n := r.Figures.judge()
	if q := r.RunQueue; q != nil && q.busy() {
		n.Reasons = append(n.Reasons, q.reason())
		n.Noisy = true
	}
	return n
}

// tables returns the ratio tables that have data, in report order.
func (r *Report) tables() []*table {
	if r.Figures == nil {
		return nil
	}
	views := []*Figures{r.Figures}
	if r.Figures.hasCPU() {
		views = append(views, r.Figures.cpu())
	}
	var out []*table
	for _, f := range views {
		for _, t := range []*table{f.canary(), f.strategyOverAsis(), f.asisOverLimit(), f.storeOverModel()} {
			if !t.empty() {
				out = append(out, t)
			}
		}
	}
	return out
}

// writeMarkdown writes report.md.
func (r *Report) writeMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("# %s\n\n", r.Title)
	if r.Command != "" {
		ew.printf("Command: `%s`\n\n", r.Command)
	}
	for _, s := range r.Settings {
		ew.printf("- %s\n", s)
	}
	for _, s := range r.Env {
		ew.printf("- %s\n", s)
	}
	ew.printf("- cpu: %s\n", r.cpuLine())
	if r.Commit != "" {
		ew.printf("- commit %s\n", r.Commit)
	}
	for _, kept := range []struct {
		what string
		st   *Stamp
	}{{"scenario results", r.ScenarioRun}, {"benchmarks", r.BenchRun}} {
		if kept.st != nil && *kept.st != r.stamp() {
			ew.printf("- %s from an earlier run: %s UTC, commit %s, `%s`\n", kept.what, kept.st.Date, kept.st.Commit, kept.st.Command)
		}
	}
	ew.printf("\nEvery ratio below divides two medians measured in this run, on this machine, with its %.0f%% interval (docs/measuring.md, \"Noise\").\n", 100*confidence)
	if n := r.Noise(); n != nil {
		n.markdown(ew)
	}
	if len(r.Notes) > 0 {
		ew.printf("\n## Notes\n\n")
		for _, n := range r.Notes {
			ew.printf("- %s\n", n)
		}
	}

	ew.printf("\n## Scenario verdicts\n\n")
	if r.Matrix == nil || len(r.Matrix.Files) == 0 {
		ew.printf("No scenario results (see Notes).\n")
	} else {
		ew.printf("Failure codes seen per file and strategy (`ok` = none; ✗ = an `expect` line did not hold).\n\n")
		r.Matrix.markdown(ew)
	}

	ew.printf("\n## Benchmarks\n\n")
	if r.Figures == nil || r.Figures.Results == 0 {
		ew.printf("No benchmark results (see Notes).\n")
	} else {
		tables := r.tables()
		if len(tables) == 0 {
			ew.printf("No ratio could be computed: the run has none of BenchmarkAppend (with strategy=asis), BenchmarkLimit or BenchmarkUpdate/impl=store+model (docs/measuring.md).\n")
		}
		for _, t := range tables {
			ew.printf("### %s\n\n%s.\n\n", t.Title, t.Caption)
			t.markdown(ew)
			ew.printf("\n")
		}
		for _, c := range r.Charts {
			ew.printf("![%s](%s)\n\n", c.Title, c.File)
		}
		ew.printf("### All medians\n\n")
		r.Figures.markdown(ew)
	}
	if len(r.RawFiles) > 0 {
		ew.printf("\nRaw output: ")
		for i, f := range r.RawFiles {
			if i > 0 {
				ew.printf(", ")
			}
			ew.printf("[%s](%s)", f, f)
		}
		ew.printf("\n")
	}
	return ew.err
}

// WriteText writes the verdict matrix and the ratio tables as aligned text,
// for the terminal.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if r.Matrix != nil && len(r.Matrix.Files) > 0 {
		ew.printf("Scenario verdicts (file × strategy → codes; ✗ = unmet expect)\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "file\t%s\n", strings.Join(r.Matrix.Strategies, "\t"))
		for _, f := range r.Matrix.Files {
			fmt.Fprint(tw, f)
			for _, s := range r.Matrix.Strategies {
				fmt.Fprintf(tw, "\t%s", r.Matrix.Cells[[2]string{f, s}])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		ew.printf("\n")
	}
	for _, t := range r.tables() {
		ew.printf("%s\n", t.Title)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "%s\t%s\t\n", t.RowHead, strings.Join(t.Cols, "\t"))
		for _, row := range t.Rows {
			fmt.Fprint(tw, row)
			for _, c := range t.Cols {
				fmt.Fprintf(tw, "\t%s", ratioCell(t, row, c))
			}
			fmt.Fprintln(tw, "\t")
		}
		tw.Flush()
		ew.printf("\n")
	}
	for _, n := range r.Notes {
		ew.printf("note: %s\n", n)
	}
	if n := r.Noise(); n != nil {
		ew.printf("\ncpu: %s\nnoise (%s): %s\n", r.cpuLine(), n.View, n.Verdict())
		for i, why := range n.Reasons {
			if i == maxReasons {
				ew.printf("  and %d more\n", len(n.Reasons)-maxReasons)
				break
			}
			ew.printf("  %s\n", why)
		}
		if n.Host != "" {
			ew.printf("host: %s\n", n.Host)
		}
	}
	return ew.err
}

// maxReasons bounds the noise reasons listed; the marks in the tables show the rest.
const maxReasons = 8

// markdown writes the noise verdict with its reasons.
func (n *Noise) markdown(ew *errWriter) {
	ew.printf("\n**Noise (%s): %s.**", n.View, n.Verdict())
	if n.Noisy {
		ew.printf(" Cells marked ‼ fail a rule:\n\n")
		for i, why := range n.Reasons {
			if i == maxReasons {
				ew.printf("- and %d more\n", len(n.Reasons)-maxReasons)
				break
			}
			ew.printf("- %s\n", why)
		}
	} else {
		ew.printf("\n")
	}
	if n.Host != "" {
		ew.printf("\nHost: %s.\n", n.Host)
	}
}

func (t *table) markdown(ew *errWriter) {
	ew.printf("| %s | %s |\n|---|%s\n", t.RowHead, strings.Join(t.Cols, " | "), strings.Repeat("---:|", len(t.Cols)))
	for _, row := range t.Rows {
		ew.printf("| %s |", row)
		for _, c := range t.Cols {
			ew.printf(" %s |", ratioCell(t, row, c))
		}
		ew.printf("\n")
	}
}

func (m *Matrix) markdown(ew *errWriter) {
	ew.printf("| file | %s |\n|---|%s\n", strings.Join(m.Strategies, " | "), strings.Repeat("---|", len(m.Strategies)))
	for _, f := range m.Files {
		ew.printf("| %s |", f)
		for _, s := range m.Strategies {
			ew.printf(" %s |", m.Cells[[2]string{f, s}])
		}
		ew.printf("\n")
	}
}

// markdown lists every configuration with its medians.
func (f *Figures) markdown(ew *errWriter) {
	ew.printf("| package | benchmark | time/op | CPU time/op | throughput | B/op | allocs/op | n |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range f.keys {
		s := f.stats[k]
		get := func(unit string, cls benchunit.Class, suffix string) string {
			v, ok := s[unit]
			if !ok {
				return "-"
			}
			if v.Median == 0 {
				return "0"
			}
			out := benchunit.Scale(v.Median, cls) + suffix
			if v.Range != "" && (unit == secPerOp || unit == cpuSecPerOp) {
				out += " ±" + v.Range
			}
			return out
		}
		n := 0
		if t, ok := s[secPerOp]; ok {
			n = t.N
		}
		ew.printf("| %s | %s | %s | %s | %s | %s | %s | %d |\n", shortPkg(k.Pkg), k.label(),
			get(secPerOp, benchunit.Decimal, "s"), get(cpuSecPerOp, benchunit.Decimal, "s"), mbps(s),
			get("B/op", benchunit.Binary, "B"), get("allocs/op", benchunit.Decimal, ""), n)
	}
}

// mbps renders throughput (b.SetBytes over wall time) in decimal GB/s with
// benchstat's ±% of its interval.
func mbps(s map[string]stat) string {
	v, ok := s["B/s"]
	if !ok {
		return "-"
	}
	out := fmt.Sprintf("%.2f GB/s", v.Median/1e9)
	if v.Range != "" {
		out += " ±" + v.Range
	}
	return out
}

func (k Key) label() string { return k.Full }

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/mirrorpath/mirrorpath/")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
