// Package benchgate decides whether a change made benchmarks slower, the way
// docs/measuring.md describes: time is compared only between samples taken
// interleaved in one job (base, head, head, base, …), and a row fails the gate
// only when the Mann-Whitney U test (benchmath.AssumeNothing) finds the two
// samples different with p < Alpha AND the median slowed down by more than
// Threshold. Allocation counts are exact, so any increase of the median
// allocs/op fails regardless of p. Time per op is gated in every unit the
// benchmarks report: wall clock (sec/op) and, where reported, CPU time
// (cpu-ns/op).
//
// Design note. Samples are read with benchfmt and grouped with one benchproc
// projection ("pkg,.fullname" plus the unit), shared by both sides so that a
// Key from the base run and the same Key from the head run compare ==. The
// runner half of the package (run.go) checks out the base revision into a git
// worktree, builds one test binary per package with `go test -c`, and runs the
// binaries alternately so that drift on a shared machine (thermal state, other
// tenants) lands on both sides alike: on a shared machine an A/A run done one
// side after the other flags most rows "significant", an interleaved one none.
package benchgate

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// ErrNoResults is returned by Compare when neither side holds a benchmark result.
var ErrNoResults = errors.New("benchgate: no benchmark results")

// Side names one of the two compared revisions.
type Side int

const (
	Base Side = iota
	Head
)

func (s Side) String() string {
	if s == Base {
		return "base"
	}
	return "head"
}

// Options are the gate's thresholds.
type Options struct {
	// Alpha is the p-value below which a difference is significant (0.01).
	Alpha float64
	// Threshold is the fractional slowdown of the median sec/op that fails
	// the gate when significant (0.05 = 5%).
	Threshold float64
	// PerBenchmark, if set, overrides Threshold per benchmark name.
	PerBenchmark *Thresholds
}

// DefaultOptions are the gate's thresholds (docs/measuring.md): p < 0.01 and
// a slowdown above 5 %.
var DefaultOptions = Options{Alpha: 0.01, Threshold: 0.05}

// Collector groups benchmark measurements of both sides by package,
// benchmark name and unit. Not safe for concurrent use.
type Collector struct {
	proj    *benchproc.Projection
	unit    *benchproc.Field
	samples [2]map[benchproc.Key][]float64
	keys    []benchproc.Key // first-seen order
	seen    map[benchproc.Key]bool
	// SyntaxErrors counts malformed benchmark lines that were skipped.
	SyntaxErrors int
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	var p benchproc.ProjectionParser
	proj, unit, err := p.ParseWithUnit("pkg,.fullname", nil)
	if err != nil {
		panic("benchgate: bad built-in projection: " + err.Error()) // a constant expression
	}
	return &Collector{
		proj:    proj,
		unit:    unit,
		samples: [2]map[benchproc.Key][]float64{{}, {}},
		seen:    map[benchproc.Key]bool{},
	}
}

// Add reads Go benchmark output (go test -bench, or a test binary's
// -test.bench output) and adds every measurement to side s. name labels
// positions in error messages. Lines that are not benchmark results (PASS,
// ok, log output) are ignored, as benchfmt does.
func (c *Collector) Add(s Side, r io.Reader, name string) error {
	rd := benchfmt.NewReader(r, name)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			c.SyntaxErrors++
		case *benchfmt.Result:
			c.addResult(s, rec)
		}
	}
	return rd.Err()
}

// addResult adds the measurements of one result to side s.
func (c *Collector) addResult(s Side, res *benchfmt.Result) {
	for i, k := range c.proj.ProjectValues(res) {
		if !c.seen[k] {
			c.seen[k] = true
			c.keys = append(c.keys, k)
		}
		c.samples[s][k] = append(c.samples[s][k], res.Values[i].Value)
	}
}

// Verdict classifies one compared row.
type Verdict int

const (
	Same       Verdict = iota // no significant difference, or below the threshold
	Faster                    // significantly better
	Slower                    // significantly worse but within the threshold
	Regression                // fails the gate
	Missing                   // present on one side only
)

func (v Verdict) String() string {
	return [...]string{"~", "faster", "slower", "FAIL", "missing"}[v]
}

// Row is the comparison of one (package, benchmark, unit).
type Row struct {
	Pkg, Name, Unit string
	Base, Head      benchmath.Summary // Center is the median
	NBase, NHead    int
	P               float64 // Mann-Whitney U p-value; NaN when not compared
	Delta           float64 // (head-base)/base of the medians; +Inf from 0 up, NaN when both are 0 or a side is missing
	Verdict         Verdict
	Note            string  // why it fails, or statistics warnings
	Threshold       float64 // the slowdown limit applied to this row (a fraction)
}

// Result is the outcome of a gate comparison.
type Result struct {
	Options Options
	Rows    []Row
	// Confirmed is set on a result produced by Confirm; ConfirmRounds is
	// the confirming run's number of rounds.
	Confirmed     bool
	ConfirmRounds int
}

// Failed reports whether any row fails the gate.
func (r *Result) Failed() bool { return len(r.failures()) > 0 }

// failures returns the rows that fail the gate.
func (r *Result) failures() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Verdict == Regression {
			out = append(out, row)
		}
	}
	return out
}

// lowerIsBetter reports the direction of a tidied benchfmt unit.
func lowerIsBetter(unit string) bool {
	return !strings.HasSuffix(unit, "/s") // B/s (from MB/s) and other rates are higher-is-better
}

// Compare compares head with base under opt. It returns ErrNoResults when
// the collector holds no measurement at all.
func (c *Collector) Compare(opt Options) (*Result, error) {
	if len(c.keys) == 0 {
		return nil, ErrNoResults
	}
	keys := append([]benchproc.Key(nil), c.keys...)
	benchproc.SortKeys(keys)
	th := benchmath.DefaultThresholds
	th.CompareAlpha = opt.Alpha
	res := &Result{Options: opt}
	for _, k := range keys {
		row := Row{
			Pkg:   k.Get(c.proj.Fields()[0]),
			Name:  TrimProcs(k.Get(c.proj.Fields()[1])),
			Unit:  k.Get(c.unit),
			P:     math.NaN(),
			Delta: math.NaN(),
		}
		bv, hv := c.samples[Base][k], c.samples[Head][k]
		row.NBase, row.NHead = len(bv), len(hv)
		if len(bv) == 0 || len(hv) == 0 {
			row.Verdict = Missing
			row.Note = "only in " + map[bool]string{true: "head", false: "base"}[len(bv) == 0]
			res.Rows = append(res.Rows, row)
			continue
		}
		bs, hs := benchmath.NewSample(bv, &th), benchmath.NewSample(hv, &th)
		row.Base = benchmath.AssumeNothing.Summary(bs, 0.95)
		row.Head = benchmath.AssumeNothing.Summary(hs, 0.95)
		cmp := benchmath.AssumeNothing.Compare(bs, hs)
		row.P = cmp.P
		switch {
		case row.Base.Center != 0:
			row.Delta = (row.Head.Center - row.Base.Center) / row.Base.Center
		case row.Head.Center > 0: // from nothing to something, e.g. 0 → 64 B/op
			row.Delta = math.Inf(1)
		}
		classify(&row, opt)
		var warn []string
		for _, w := range append(append(bs.Warnings, hs.Warnings...), cmp.Warnings...) {
			warn = append(warn, w.Error())
		}
		if len(warn) > 0 {
			row.Note = strings.TrimPrefix(row.Note+"; "+strings.Join(warn, "; "), "; ")
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// TrimProcs drops the "-N" GOMAXPROCS suffix that go test appends to
// benchmark names: "Append/batch=1KiB-2" → "Append/batch=1KiB".
func TrimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return name
	}
	for _, r := range name[i+1:] {
		if r < '0' || r > '9' {
			return name
		}
	}
	return name[:i]
}

// isTime reports whether a tidied unit is time per op: sec/op (wall clock)
// or a custom "<kind>-ns/op" metric such as cpu-ns/op (process CPU time per
// op, which the mirrorpath benchmarks report because it does not count time
// spent descheduled on a shared machine).
func isTime(unit string) bool {
	return unit == "sec/op" || strings.HasSuffix(unit, "-sec/op")
}

// classify sets row.Verdict and the failure note from the medians and p.
func classify(row *Row, opt Options) {
	if row.Unit == "allocs/op" {
		row.Threshold = 0
		// Exact counts: any increase fails, whatever the p-value.
		switch {
		case row.Head.Center > row.Base.Center:
			row.Verdict = Regression
			row.Note = fmt.Sprintf("allocs/op rose from %g to %g", row.Base.Center, row.Head.Center)
		case row.Head.Center < row.Base.Center:
			row.Verdict = Faster
		}
		return
	}
	row.Threshold = opt.limitFor(row.Name)
	if !(row.P < opt.Alpha) || math.IsNaN(row.Delta) {
		row.Verdict = Same
		return
	}
	limit := row.Threshold
	worse := row.Delta
	if !lowerIsBetter(row.Unit) {
		worse = -worse
	}
	switch {
	case worse <= 0:
		row.Verdict = Faster
	case worse > limit && isTime(row.Unit):
		row.Verdict = Regression
		row.Note = fmt.Sprintf("%+.1f%% slower (p=%.3g < %g, threshold %.1f%%)",
			100*row.Delta, row.P, opt.Alpha, 100*limit)
	default:
		// Significant but within the threshold, or a derived unit
		// (B/s from SetBytes mirrors sec/op; B/op is reported, not gated).
		row.Verdict = Slower
	}
}
