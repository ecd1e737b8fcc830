package report

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// mostProducers picks the producer count to chart: 1000 when measured (the
// middle of docs/measuring.md's 1 / 1000 / 1,000,000), else the most common.
func mostProducers(ks []Key) string {
	count := map[string]int{}
	best := ""
	for _, k := range ks {
		count[k.Producers]++
		if k.Producers == "1000" {
			return "1000"
		}
	}
	for p, n := range count {
		if n > count[best] || (n == count[best] && sizeLess(p, best)) {
			best = p
		}
	}
	return best
}

func nan(n int) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = math.NaN()
	}
	return y
}

func index(xs []string) map[string]int {
	m := make(map[string]int, len(xs))
	for i, x := range xs {
		m[x] = i
	}
	return m
}

// ThroughputChart draws append throughput (MB/s from b.SetBytes) by batch
// size, one line per strategy and CRC fix at one producer count, with the
// physical limit as a line of its own.
func (f *Figures) ThroughputChart() *Chart {
	app := sortKeys(f.configsOf("Append"))
	prod := mostProducers(app)
	var xs []string
	for _, k := range append(append([]Key(nil), app...), f.configsOf("Limit")...) {
		if (k.Name == "Limit" || k.Producers == prod) && !slices.Contains(xs, k.Batch) {
			xs = append(xs, k.Batch)
		}
	}
	xs = sortBatches(xs)
	xi := index(xs)
	c := &Chart{Kind: Line, Title: "Append throughput by batch size (producers=" + prod + ")",
		XLabel: "batch size", YLabel: "MB/s (log scale; higher is better)", X: xs, LogY: true}
	series := map[string]int{}
	add := func(name string, k Key) {
		s, ok := f.get(k, "B/s")
		if !ok {
			return
		}
		i, ok := series[name]
		if !ok {
			i = len(c.Series)
			series[name] = i
			c.Series = append(c.Series, Series{Name: name, Y: nan(len(xs))})
		}
		c.Series[i].Y[xi[k.Batch]] = s.Median / 1e6
	}
	for _, k := range app {
		if k.Producers == prod {
			add(rowLabel(k.Strategy, k.CRC), k)
		}
	}
	for _, k := range sortKeys(f.configsOf("Limit")) {
		add("limit (crc+copy)", k)
	}
	return c
}

// UpdateChart draws the producer-state update cost (ns per batch) by number
// of producers, one line per implementation.
func (f *Figures) UpdateChart() *Chart {
	up := f.updateKeys()
	var xs []string
	for _, k := range up {
		if !slices.Contains(xs, k.Producers) {
			xs = append(xs, k.Producers)
		}
	}
	xs = sortBatches(xs)
	xi := index(xs)
	c := &Chart{Kind: Line, Title: "Producer-state update cost by number of producers",
		XLabel: "producers", YLabel: "ns/op of BenchmarkUpdate and UpdateOne (lower is better)", X: xs}
	series := map[string]int{}
	mn, mx := math.Inf(1), 0.0
	for _, k := range up {
		sec, ok := f.secs(k)
		if !ok {
			continue
		}
		name := rowLabel("impl="+k.Impl, updateLabel(k), k.Strategy, k.Batch)
		i, ok := series[name]
		if !ok {
			i = len(c.Series)
			series[name] = i
			c.Series = append(c.Series, Series{Name: name, Y: nan(len(xs))})
		}
		c.Series[i].Y[xi[k.Producers]] = sec * 1e9
		mn, mx = math.Min(mn, sec*1e9), math.Max(mx, sec*1e9)
	}
	sort.SliceStable(c.Series, func(i, j int) bool { return c.Series[i].Name < c.Series[j].Name })
	if mx > 20*mn {
		c.LogY = true
		c.YLabel = "ns/op of BenchmarkUpdate and UpdateOne (log scale; lower is better)"
	}
	return c
}

// ratioChart draws a table of ratios as grouped bars with a reference line
// at 1.0.
func (t *table) ratioChart(xLabel string) *Chart {
	c := &Chart{Kind: Bar, Title: t.Title, XLabel: xLabel, YLabel: "ratio (1.0 = dashed line)", X: t.Cols, RefY: 1}
	for _, r := range t.Rows {
		s := Series{Name: r, Y: nan(len(t.Cols))}
		for i, col := range t.Cols {
			if v, ok := t.Cells[[2]string{r, col}]; ok {
				s.Y[i] = v
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// StrategyChart draws strategyOverAsis as grouped bars by batch size, one
// bar per strategy and CRC fix, at the producer count ThroughputChart uses.
func (f *Figures) StrategyChart() *Chart {
	prod := mostProducers(f.configsOf("Append"))
	t := f.strategyOverAsis()
	sub := newTable(t.Title+" (producers="+prod+")", t.Caption, t.RowHead)
	suffix := " · producers=" + prod
	for _, r := range t.Rows {
		if !strings.HasSuffix(r, suffix) {
			continue
		}
		for _, c := range t.Cols {
			if v, ok := t.Intervals[[2]string{r, c}]; ok {
				sub.set(strings.TrimSuffix(r, suffix), c, v)
			}
		}
	}
	sub.Cols = sortBatches(sub.Cols)
	return sub.ratioChart("batch size")
}
