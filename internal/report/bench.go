// Package report turns one run of the mirrorpath benchmarks and the scenario
// catalog into the figures the user asks for (docs/measuring.md): the cost of
// each PID strategy relative to storing batches as-is, the as-is path
// relative to the physical limit, and the fast producer-state store relative
// to the reference model; plus the scenario verdict matrix. It writes them as
// text tables, a report.md and self-contained SVG charts drawn by chart.go.
//
// Every ratio is computed from medians measured in the same run; nothing is
// compared with figures recorded elsewhere. Missing benchmarks (a package
// not written yet, a benchmark renamed) leave cells empty and are listed as
// notes, so a report can be produced at every stage of the project.
package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/pid"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Key identifies one benchmark configuration by its name parts
// (docs/measuring.md, "Naming"),
// e.g. BenchmarkAppend/strategy=bitfield/crc=patch/batch=16KiB/producers=1000.
// Parts a benchmark does not have are "".
type Key struct {
	Pkg, Name                       string // Name without "Benchmark", e.g. "Append"
	Strategy, CRC, Batch, Producers string
	Impl                            string
	// Full is the whole name without "Benchmark" and the -GOMAXPROCS
	// suffix; it keeps apart configurations that differ in other parts.
	Full string
}

// Stat is the summary of one unit of one configuration.
type Stat struct {
	Median float64 // tidied unit: sec/op, B/s, B/op, allocs/op
	N      int
	Range  string // 95% confidence interval as ±%, "" if too few samples
	// Lo and Hi bound benchmath's 95% confidence interval of the median
	// (AssumeNothing: order statistics, so at least 6 samples); ±Inf with
	// fewer.
	Lo, Hi float64
}

// Figures holds every benchmark summary of one run.
type Figures struct {
	stats   map[Key]map[string]Stat
	samples map[Key]map[string][]float64
	keys    []Key
	// Results counts benchmark result lines read.
	Results int
	// SyntaxErrors counts malformed benchmark lines skipped.
	SyntaxErrors int
	// timeUnit is the unit the ratio tables divide: sec/op (wall clock),
	// or cpu-sec/op in the view CPU returns.
	timeUnit string
}

const projection = "pkg,.name,/strategy,/crc,/batch,/producers,/impl"

// ParseBench reads go test -bench output (several packages may be
// concatenated) with benchfmt and groups it with benchproc. Malformed
// benchmark lines are skipped and counted (Figures.SyntaxErrors).
func ParseBench(r io.Reader, name string) (*Figures, error) {
	br, err := newBenchReader()
	if err != nil {
		return nil, err
	}
	if err := br.read(r, name, false); err != nil {
		return nil, err
	}
	return br.figures(), nil
}

// ReadBenchFiles is ParseBench over the files at paths, read in turn into one
// set of figures (the samples of a configuration that appears in several
// files are pooled), except that a malformed benchmark line is an error that
// names its file and line: a figure must not quietly leave samples out.
func ReadBenchFiles(paths []string) (*Figures, error) {
	br, err := newBenchReader()
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = br.read(fh, p, true)
		fh.Close()
		if err != nil {
			if errors.As(err, new(*benchfmt.SyntaxError)) {
				return nil, err // it names its file and line
			}
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return br.figures(), nil
}

// benchReader groups benchmark results by configuration and unit as they
// are read, for ParseBench and ReadBenchFiles.
type benchReader struct {
	proj      *benchproc.Projection
	unitField *benchproc.Field
	samples   map[benchGroup][]float64
	order     []benchGroup
	results   int
	syntax    int
}

// benchGroup is one configuration and unit. benchproc replaces separately
// projected parts of .fullname with "*", so full is the result's own name.
type benchGroup struct {
	k    benchproc.Key
	full string
}

func newBenchReader() (*benchReader, error) {
	var pp benchproc.ProjectionParser
	proj, unitField, err := pp.ParseWithUnit(projection, nil)
	if err != nil {
		return nil, fmt.Errorf("report: projection: %v", err)
	}
	return &benchReader{proj: proj, unitField: unitField, samples: map[benchGroup][]float64{}}, nil
}

// read adds r's results; strict makes a malformed line an error.
func (br *benchReader) read(r io.Reader, name string, strict bool) error {
	rd := benchfmt.NewReader(r, name)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			if strict {
				return rec
			}
			br.syntax++
		case *benchfmt.Result:
			br.results++
			full := benchgate.TrimProcs(strings.TrimPrefix(string(rec.Name.Full()), "Benchmark"))
			for i, k := range br.proj.ProjectValues(rec) {
				g := benchGroup{k, full}
				if _, ok := br.samples[g]; !ok {
					br.order = append(br.order, g)
				}
				br.samples[g] = append(br.samples[g], rec.Values[i].Value)
			}
		}
	}
	return rd.Err()
}

// figures summarizes what was read.
func (br *benchReader) figures() *Figures {
	fields := br.proj.Fields()
	f := &Figures{stats: map[Key]map[string]Stat{}, samples: map[Key]map[string][]float64{}, timeUnit: secPerOp,
		Results: br.results, SyntaxErrors: br.syntax}
	th := benchmath.DefaultThresholds
	for _, g := range br.order {
		k := g.k
		key := Key{Pkg: k.Get(fields[0]), Name: k.Get(fields[1]), Strategy: k.Get(fields[2]), CRC: k.Get(fields[3]),
			Batch: k.Get(fields[4]), Producers: k.Get(fields[5]), Impl: k.Get(fields[6]), Full: g.full}
		unit := k.Get(br.unitField)
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(br.samples[g], &th), 0.95)
		if f.stats[key] == nil {
			f.stats[key] = map[string]Stat{}
			f.samples[key] = map[string][]float64{}
			f.keys = append(f.keys, key)
		}
		f.samples[key][unit] = br.samples[g]
		rng := s.PctRangeString()
		if strings.Contains(rng, "∞") { // too few samples for a 95% interval
			rng = ""
		}
		f.stats[key][unit] = Stat{Median: s.Center, N: len(br.samples[g]), Range: rng, Lo: s.Lo, Hi: s.Hi}
	}
	return f
}

// Configs returns every configuration read, in first-seen order.
func (f *Figures) Configs() []Key { return slices.Clone(f.keys) }

// Units returns the units k was measured in, sorted.
func (f *Figures) Units(k Key) []string {
	units := make([]string, 0, len(f.samples[k]))
	for u := range f.samples[k] {
		units = append(units, u)
	}
	slices.Sort(units)
	return units
}

// Samples returns k's values of unit in the order read; nil if none.
func (f *Figures) Samples(k Key, unit string) []float64 { return f.samples[k][unit] }

// Get returns the summary of unit for k.
func (f *Figures) Get(k Key, unit string) (Stat, bool) {
	s, ok := f.stats[k][unit]
	return s, ok
}

// Keys returns the configurations of benchmark name, in first-seen order.
func (f *Figures) Keys(name string) []Key {
	var out []Key
	for _, k := range f.keys {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// Names returns the distinct benchmark names, sorted.
func (f *Figures) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range f.keys {
		if !seen[k.Name] {
			seen[k.Name] = true
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Table is a grid of ratios with a caption.
type Table struct {
	Title   string
	Caption string
	RowHead string
	Rows    []string
	Cols    []string
	Cells   map[[2]string]float64
	// Intervals holds each cell's ratio with its 95% confidence interval
	// (benchgate.RatioInterval).
	Intervals map[[2]string]benchgate.RatioSummary
	// Canary marks the A/A table: its cells should be 1.00.
	Canary bool
}

func newTable(title, caption, rowHead string) *Table {
	return &Table{Title: title, Caption: caption, RowHead: rowHead, Cells: map[[2]string]float64{},
		Intervals: map[[2]string]benchgate.RatioSummary{}}
}

func (t *Table) set(row, col string, r benchgate.RatioSummary) {
	if _, ok := t.Cells[[2]string{row, col}]; !ok {
		if !slices.Contains(t.Rows, row) {
			t.Rows = append(t.Rows, row)
		}
		if !slices.Contains(t.Cols, col) {
			t.Cols = append(t.Cols, col)
		}
	}
	t.Cells[[2]string{row, col}] = r.Center
	t.Intervals[[2]string{row, col}] = r
}

// confidence of every interval the report prints.
const confidence = 0.95

// ratio is num/den of the view's time unit with its interval; ok is false
// when a side is missing or not positive.
func (f *Figures) ratio(num, den Key) (benchgate.RatioSummary, bool) {
	if _, ok := f.secs(num); !ok {
		return benchgate.RatioSummary{}, false
	}
	if _, ok := f.secs(den); !ok {
		return benchgate.RatioSummary{}, false
	}
	return benchgate.RatioInterval(f.samples[num][f.timeUnit], f.samples[den][f.timeUnit], confidence), true
}

// ratioPer is ratio with num's samples divided by per: num's time per op
// covers per of what den's op does (a chunk of per batches).
func (f *Figures) ratioPer(num, den Key, per float64) (benchgate.RatioSummary, bool) {
	if _, ok := f.secs(num); !ok {
		return benchgate.RatioSummary{}, false
	}
	if _, ok := f.secs(den); !ok {
		return benchgate.RatioSummary{}, false
	}
	scaled := make([]float64, len(f.samples[num][f.timeUnit]))
	for i, v := range f.samples[num][f.timeUnit] {
		scaled[i] = v / per
	}
	return benchgate.RatioInterval(scaled, f.samples[den][f.timeUnit], confidence), true
}

// fetchBatches is the batches=N part of a BenchmarkAppendFetch name, or 0.
func fetchBatches(k Key) int {
	for _, part := range strings.Split(k.Full, "/") {
		if v, ok := strings.CutPrefix(part, "batches="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return 0
}

// Empty reports whether the table has no cell.
func (t *Table) Empty() bool { return len(t.Cells) == 0 }

// Time units: wall clock per op, and process CPU time per op as the
// mirrorpath benchmarks report it (b.ReportMetric(..., "cpu-ns/op"), which
// benchfmt tidies to cpu-sec/op).
const (
	secPerOp    = "sec/op"
	cpuSecPerOp = "cpu-sec/op"
)

// HasCPU reports whether any benchmark reported cpu-ns/op.
func (f *Figures) HasCPU() bool {
	for _, units := range f.stats {
		if _, ok := units[cpuSecPerOp]; ok {
			return true
		}
	}
	return false
}

// CPU returns a view of f whose ratio tables divide process CPU time per op
// (cpu-ns/op) instead of wall-clock time: on a shared machine wall time
// includes time spent descheduled, CPU time does not. The view shares f's data.
func (f *Figures) CPU() *Figures {
	g := *f
	g.timeUnit = cpuSecPerOp
	return &g
}

// titled marks a table built from the CPU view.
func (f *Figures) titled(t *Table) *Table {
	if f.timeUnit == cpuSecPerOp {
		t.Title += " (CPU time)"
		t.Caption = strings.Replace(t.Caption, "median sec/op", "median cpu-ns/op (process CPU time per op)", 1)
	}
	return t
}

func (f *Figures) secs(k Key) (float64, bool) {
	s, ok := f.Get(k, f.timeUnit)
	if !ok || s.Median <= 0 {
		return 0, false
	}
	return s.Median, true
}

// asisFor returns the as-is configuration matching k's batch and producers.
func (f *Figures) asisFor(k Key) (Key, bool) {
	var fallback Key
	found := false
	for _, a := range f.Keys("Append") {
		if a.Strategy != "asis" || a.Batch != k.Batch || a.Producers != k.Producers || a.Pkg != k.Pkg {
			continue
		}
		if a.CRC == k.CRC {
			return a, true
		}
		if !found {
			fallback, found = a, true
		}
	}
	return fallback, found
}

// StrategyOverAsis is the time per batch of each strategy (and CRC fix)
// divided by the as-is time at the same batch size and producer count.
func (f *Figures) StrategyOverAsis() *Table {
	t := newTable("Append time per batch: strategy / asis",
		"median sec/op of BenchmarkAppend under each strategy divided by strategy=asis at the same batch and producers; 1.00 = free, lower is better",
		"strategy · crc · producers")
	for _, k := range sortKeys(f.Keys("Append")) {
		if k.Strategy == "asis" || k.Strategy == "" {
			continue
		}
		a, ok := f.asisFor(k)
		if !ok {
			continue
		}
		if r, ok := f.ratio(k, a); ok {
			t.set(rowLabel(k.Strategy, k.CRC, "producers="+k.Producers), k.Batch, r)
		}
	}
	t.Cols = sortBatches(t.Cols)
	return f.titled(t)
}

// canaryStrategy is the strategy whose BenchmarkAppend runs the same code
// as strategy=asis: on a mirroring partition barrier stores batches as-is and
// differs from verbatim only at STOPPING (appendpath.Partition.Stop writes
// its barrier), which the benchmark never reaches. Their ratio is the run's
// A/A canary.
const canaryStrategy = "barrier"

// Canary is BenchmarkAppend under canaryStrategy divided by strategy=asis
// at the same batch, producers and CRC fix: an A/A pair, measured in the same
// rounds, whose every cell should be 1.00.
func (f *Figures) Canary() *Table {
	t := newTable("A/A canary: "+canaryStrategy+" / asis",
		"median sec/op of BenchmarkAppend/strategy="+canaryStrategy+" divided by strategy=asis at the same batch and producers: the same code on the append path, so 1.00 up to the run's noise",
		"pair · producers")
	t.Canary = true
	for _, k := range sortKeys(f.Keys("Append")) {
		if k.Strategy != canaryStrategy {
			continue
		}
		a, ok := f.asisFor(k)
		if !ok {
			continue
		}
		if r, ok := f.ratio(k, a); ok {
			t.set(rowLabel(canaryStrategy+"/asis", "producers="+k.Producers), k.Batch, r)
		}
	}
	t.Cols = sortBatches(t.Cols)
	return f.titled(t)
}

// limitRows are the limits AsisOverLimit divides by, with their row labels;
// copyRingRow labels its BenchmarkCopyRing / BenchmarkLimit row.
var limitRows = []struct{ name, label string }{
	{"Limit", ""}, {"LimitRing", "ring limit"}, {"LimitFused", "fused limit"}, {"LimitRingFused", "ring fused limit"},
	{"LimitLocked", "locked limit"},
}

// copyRingRow and lockedRow label the rows of two benchmarks over
// BenchmarkLimit: the copy into the ring alone, and the limit inside a mutex.
const (
	copyRingRow = "copy alone into the ring / limit"
	lockedRow   = "limit inside a mutex / limit"
)

// AsisOverLimit is the as-is time per batch divided by the physical limit
// (one CRC-32C pass plus one copy, BenchmarkLimit) at the same batch size.
// Each limit the run has adds a row per producer count: BenchmarkLimitRing
// (the copy going to successive places of a log-sized ring, as the append's
// copy does), BenchmarkLimitFused (the CRC computed while copying, in one
// pass, as the append does for batches of 1 KiB or more, into a hot buffer)
// and BenchmarkLimitRingFused (one pass into the ring: the append's own
// work), BenchmarkLimitLocked (BenchmarkLimit inside an uncontended mutex,
// as every Partition method runs). With BenchmarkCopyRing a row divides the
// copy into the ring alone by BenchmarkLimit: above 1.00, storing a batch in
// the log's memory costs more by itself than the hot-buffer limit's CRC and
// copy together. With BenchmarkLimitLocked a last row divides it by
// BenchmarkLimit: the least an append of one batch per call that is safe for
// concurrent use can cost, over the limit. With BenchmarkAppendFetch a row
// per as-is chunk of N > 1 batches divides its time per call by N and by
// BenchmarkLimit: a mirror fetch's cost per batch, the lock and the call
// paid once (the row's label says so; the caption, which the README's
// generated section carries, is unchanged).
func (f *Figures) AsisOverLimit() *Table {
	t := newTable("As-is append / physical limit",
		"median sec/op of BenchmarkAppend/strategy=asis divided by BenchmarkLimit (CRC-32C over batch[21:] + one copy into one hot buffer) at the same batch; rows marked \"ring limit\" divide by BenchmarkLimitRing (the copy goes to successive places of a log-sized ring, like the append's), rows marked \"fused limit\" by BenchmarkLimitFused (CRC and copy in one pass, as the append does from 1 KiB), \"ring fused limit\" by BenchmarkLimitRingFused (one pass into the ring: the append's own work); the overhead of header parse, producer-state update and barrier check. The row \"copy alone into the ring / limit\", BenchmarkCopyRing / BenchmarkLimit, is the copy into the ring alone (Go's copy, no CRC) over the hot-buffer limit: above 1.00, copying a batch into the log's memory costs more by itself than the hot-buffer limit's CRC and copy together. Rows marked \"locked limit\" divide by BenchmarkLimitLocked (BenchmarkLimit inside an uncontended mutex, as every partition method runs), and the row \"limit inside a mutex / limit\" divides that by BenchmarkLimit: the least an append of one batch per call that is safe for concurrent use can cost, over the limit, before any framing, producer state or log bookkeeping",
		"producers")
	for _, lim := range limitRows {
		limits := map[string]Key{}
		for _, l := range f.Keys(lim.name) {
			limits[l.Batch] = l
		}
		for _, k := range sortKeys(f.Keys("Append")) {
			if k.Strategy != "asis" {
				continue
			}
			l, ok := limits[k.Batch]
			if !ok {
				continue
			}
			if r, ok := f.ratio(k, l); ok {
				t.set(rowLabel("producers="+k.Producers, k.CRC, lim.label), k.Batch, r)
			}
		}
	}
	hot := map[string]Key{}
	for _, l := range f.Keys("Limit") {
		hot[l.Batch] = l
	}
	for _, k := range sortKeys(f.Keys("AppendFetch")) {
		n := fetchBatches(k)
		if l, ok := hot[k.Batch]; ok && k.Strategy == "asis" && n > 1 {
			if r, ok := f.ratioPer(k, l, float64(n)); ok {
				t.set(rowLabel(fmt.Sprintf("chunk of %d (AppendFetch), per batch", n)), k.Batch, r)
			}
		}
	}
	for _, over := range []struct{ name, row string }{{"CopyRing", copyRingRow}, {"LimitLocked", lockedRow}} {
		for _, c := range f.Keys(over.name) {
			if l, ok := hot[c.Batch]; ok {
				if r, ok := f.ratio(c, l); ok {
					t.set(over.row, c.Batch, r)
				}
			}
		}
	}
	t.Cols = sortBatches(t.Cols)
	return f.titled(t)
}

// updateKeys are the keys of BenchmarkUpdate (Begin, Add, Commit) and of
// BenchmarkUpdateOne (the one-call Update), and updateLabel names their
// rows: "one call" marks the second.
func (f *Figures) updateKeys() []Key {
	return append(f.Keys("Update"), f.Keys("UpdateOne")...)
}

func updateLabel(k Key) string {
	if k.Name == "UpdateOne" {
		return "one call"
	}
	return ""
}

// StoreOverModel is the fast producer-state store's update time divided by
// the reference model's at each producer count.
func (f *Figures) StoreOverModel() *Table {
	t := newTable("Producer-state update: store / model",
		"median sec/op of BenchmarkUpdate/impl=store divided by impl=model at the same producers (and other parts; "+
			"\"one call\": BenchmarkUpdateOne, the one-call Manager.Update); lower is better",
		"benchmark")
	for _, k := range sortKeys(f.updateKeys()) {
		if k.Impl != "store" {
			continue
		}
		m := k
		m.Impl = "model"
		m.Full = strings.Replace(k.Full, "impl=store", "impl=model", 1)
		if r, ok := f.ratio(k, m); ok {
			t.set(rowLabel("store/model", updateLabel(k), k.Strategy, k.Batch), k.Producers, r)
		}
	}
	t.Cols = sortBatches(t.Cols)
	t = f.titled(t)
	if f.timeUnit == cpuSecPerOp {
		t.Caption += "; the updates' CPU time leaves out the collector's, which the benchmark reports apart as gc-cpu-ns/op (docs/measuring.md, \"Producer-state updates\")"
	}
	return t
}

func rowLabel(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" && !strings.HasSuffix(p, "=") {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

// sortKeys orders configurations by strategy (catalog order), CRC, producers
// and batch size.
func sortKeys(ks []Key) []Key {
	out := append([]Key(nil), ks...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Strategy != b.Strategy {
			return strategyRank(a.Strategy) < strategyRank(b.Strategy)
		}
		if a.CRC != b.CRC {
			return a.CRC < b.CRC
		}
		if a.Producers != b.Producers {
			return sizeLess(a.Producers, b.Producers)
		}
		return sizeLess(a.Batch, b.Batch)
	})
	return out
}

// strategyRank orders benchmark strategies as docs/strategies.md's table
// (pid.Strategies), after the as-is baseline; unknown names go last.
func strategyRank(s string) int {
	if s == "asis" {
		return 0
	}
	st, err := pid.ParseStrategy(s)
	if err != nil {
		return len(pid.Strategies()) + 1
	}
	return 1 + int(st)
}

// parseSize reads a size or count such as "100B", "16KiB", "1MiB", "1000",
// "1M" or "1e6". ok is false for anything else ("small").
func parseSize(s string) (float64, bool) {
	mult := 1.0
	num := s
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"B", 1}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v * mult, true
}

// sizeLess orders sizes numerically, unparsable ones after, by text.
func sizeLess(a, b string) bool {
	x, okA := parseSize(a)
	y, okB := parseSize(b)
	switch {
	case okA && okB && x != y:
		return x < y
	case okA != okB:
		return okA
	}
	return a < b
}

func sortBatches(s []string) []string {
	sort.SliceStable(s, func(i, j int) bool { return sizeLess(s[i], s[j]) })
	return s
}
