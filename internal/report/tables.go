package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
)

// table is a grid of ratios with a caption.
type table struct {
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

func newTable(title, caption, rowHead string) *table {
	return &table{Title: title, Caption: caption, RowHead: rowHead, Cells: map[[2]string]float64{},
		Intervals: map[[2]string]benchgate.RatioSummary{}}
}

func (t *table) set(row, col string, r benchgate.RatioSummary) {
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
	return f.ratioPer(num, den, 1)
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
	scaled := f.samples[num][f.timeUnit]
	if per != 1 {
		scaled = make([]float64, len(f.samples[num][f.timeUnit]))
		for i, v := range f.samples[num][f.timeUnit] {
			scaled[i] = v / per
		}
	}
	return f.pair(scaled, f.samples[den][f.timeUnit], confidence), true
}

// Ratio is num/den of unit with its interval at confidence, by the rule
// every table of the report follows (docs/measuring.md, "Noise"): paired by
// round (benchgate.PairedRatioInterval) when the output was read in
// interleaved rounds and both have a sample from every round, else the
// ratio of two independent medians (benchgate.RatioInterval).
func (f *Figures) Ratio(num, den Key, unit string, confidence float64) benchgate.RatioSummary {
	return f.pair(f.samples[num][unit], f.samples[den][unit], confidence)
}

func (f *Figures) pair(num, den []float64, confidence float64) benchgate.RatioSummary {
	if f.rounds && len(num) == len(den) {
		return benchgate.PairedRatioInterval(num, den, confidence)
	}
	return benchgate.RatioInterval(num, den, confidence)
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

// empty reports whether the table has no cell.
func (t *table) empty() bool { return len(t.Cells) == 0 }

// titled marks a table built from the CPU view.
func (f *Figures) titled(t *table) *table {
	if f.timeUnit == cpuSecPerOp {
		t.Title += " (CPU time)"
		t.Caption = strings.Replace(t.Caption, "median sec/op", "median cpu-ns/op (process CPU time per op)", 1)
	}
	return t
}

// asisFor returns the as-is configuration matching k's batch and producers.
func (f *Figures) asisFor(k Key) (Key, bool) {
	var fallback Key
	found := false
	for _, a := range f.configsOf("Append") {
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

// strategyOverAsis is the time per batch of each strategy (and CRC fix)
// divided by the as-is time at the same batch size and producer count.
func (f *Figures) strategyOverAsis() *table {
	t := newTable("Append time per batch: strategy / asis",
		"median sec/op of BenchmarkAppend under each strategy divided by strategy=asis at the same batch and producers; 1.00 = free, lower is better",
		"strategy · crc · producers")
	for _, k := range sortKeys(f.configsOf("Append")) {
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

// canary is BenchmarkAppend under canaryStrategy divided by strategy=asis
// at the same batch, producers and CRC fix: an A/A pair, measured in the same
// rounds, whose every cell should be 1.00.
func (f *Figures) canary() *table {
	t := newTable("A/A canary: "+canaryStrategy+" / asis",
		"median sec/op of BenchmarkAppend/strategy="+canaryStrategy+" divided by strategy=asis at the same batch and producers: the same code on the append path, so 1.00 up to the run's noise",
		"pair · producers")
	t.Canary = true
	for _, k := range sortKeys(f.configsOf("Append")) {
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

// limitRows are the limits asisOverLimit divides by, with their row labels;
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

// asisOverLimit is the as-is time per batch divided by the physical limit
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
func (f *Figures) asisOverLimit() *table {
	t := newTable("As-is append / physical limit",
		"median sec/op of BenchmarkAppend/strategy=asis divided by BenchmarkLimit (CRC-32C over batch[21:] + one copy into one hot buffer) at the same batch; rows marked \"ring limit\" divide by BenchmarkLimitRing (the copy goes to successive places of a log-sized ring, like the append's), rows marked \"fused limit\" by BenchmarkLimitFused (CRC and copy in one pass, as the append does from 1 KiB), \"ring fused limit\" by BenchmarkLimitRingFused (one pass into the ring: the append's own work); the overhead of header parse, producer-state update and barrier check. The row \"copy alone into the ring / limit\", BenchmarkCopyRing / BenchmarkLimit, is the copy into the ring alone (Go's copy, no CRC) over the hot-buffer limit: above 1.00, copying a batch into the log's memory costs more by itself than the hot-buffer limit's CRC and copy together. Rows marked \"locked limit\" divide by BenchmarkLimitLocked (BenchmarkLimit inside an uncontended mutex, as every partition method runs), and the row \"limit inside a mutex / limit\" divides that by BenchmarkLimit: the least an append of one batch per call that is safe for concurrent use can cost, over the limit, before any framing, producer state or log bookkeeping",
		"producers")
	for _, lim := range limitRows {
		limits := map[string]Key{}
		for _, l := range f.configsOf(lim.name) {
			limits[l.Batch] = l
		}
		for _, k := range sortKeys(f.configsOf("Append")) {
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
	for _, l := range f.configsOf("Limit") {
		hot[l.Batch] = l
	}
	for _, k := range sortKeys(f.configsOf("AppendFetch")) {
		n := fetchBatches(k)
		if l, ok := hot[k.Batch]; ok && k.Strategy == "asis" && n > 1 {
			if r, ok := f.ratioPer(k, l, float64(n)); ok {
				t.set(rowLabel(fmt.Sprintf("chunk of %d (AppendFetch), per batch", n)), k.Batch, r)
			}
		}
	}
	for _, over := range []struct{ name, row string }{{"CopyRing", copyRingRow}, {"LimitLocked", lockedRow}} {
		for _, c := range f.configsOf(over.name) {
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
	return append(f.configsOf("Update"), f.configsOf("UpdateOne")...)
}

func updateLabel(k Key) string {
	if k.Name == "UpdateOne" {
		return "one call"
	}
	return ""
}

// storeOverModel is the fast producer-state store's update time divided by
// the reference model's at each producer count.
func (f *Figures) storeOverModel() *table {
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
