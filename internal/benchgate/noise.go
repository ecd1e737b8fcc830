package benchgate

import (
	"math"
	"math/rand/v2"
	"slices"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Design note: thresholds from measured noise.
//
// A row fails the gate when its slowdown is significant (p < Alpha) and
// above its threshold. Run both sides on the same code (an A/A run) and the
// p-value alone keeps nearly every row quiet; what the threshold must add is
// a floor under the slowdowns that noise does make significant now and then.
// Noise measures that floor from the A/A samples of a row: it pools them,
// draws many random splits into two sides of the run's sizes, runs the
// gate's test (benchmath.AssumeNothing, Mann-Whitney U) on each, and takes,
// among the draws significant at Alpha, the 99th percentile of the slowdown
// of the medians. A threshold above that Limit fails a row on noise alone
// in well under one A/A run in a hundred; below it, the gate's --confirm
// rounds are all that stand between noise and a failed pull request.

// NoiseRow is what an A/A run says about one (package, benchmark, unit).
type NoiseRow struct {
	Pkg, Name, Unit string
	N               int     // samples pooled from both sides
	Spread          float64 // interquartile range over the median of the pooled samples
	Shift           float64 // (B-A)/A of the two sides' medians
	P               float64 // the gate's p-value for the two sides
	Draws           int     // random splits drawn
	Significant     int     // draws with p < alpha and a slowdown
	Limit           float64 // 99th percentile of the significant draws' slowdowns; 0 when none
}

// Noise reports, for every time unit row holding samples on both sides,
// the A/A statistics above: the Collector's Base and Head sides hold two
// runs of the same code. draws random splits per row (deterministic for a
// given seed).
func (c *Collector) Noise(alpha float64, draws int, seed uint64) []NoiseRow {
	keys := slices.Clone(c.keys)
	benchproc.SortKeys(keys)
	th := benchmath.DefaultThresholds
	th.CompareAlpha = alpha
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var out []NoiseRow
	for _, k := range keys {
		unit := k.Get(c.unit)
		a, b := c.samples[Base][k], c.samples[Head][k]
		if !isTime(unit) || len(a) == 0 || len(b) == 0 {
			continue
		}
		row := NoiseRow{Pkg: k.Get(c.proj.Fields()[0]), Name: TrimProcs(k.Get(c.proj.Fields()[1])), Unit: unit,
			N: len(a) + len(b), Draws: draws}
		row.Shift, row.P = shift(a, b, &th)
		pool := append(slices.Clone(a), b...)
		row.Spread = iqrSpread(pool)
		var sig []float64
		for range draws {
			rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
			if d, p := shift(pool[:len(a)], pool[len(a):], &th); p < alpha && d > 0 {
				sig = append(sig, d)
			}
		}
		row.Significant = len(sig)
		if len(sig) > 0 {
			slices.Sort(sig)
			row.Limit = sig[int(math.Ceil(0.99*float64(len(sig))))-1]
		}
		out = append(out, row)
	}
	return out
}

// shift is the change of the medians from a to b and the gate's p-value
// (NewSample sorts the values it is given: copies, so that a and b are
// left as they are).
func shift(a, b []float64, th *benchmath.Thresholds) (delta, p float64) {
	sa, sb := benchmath.NewSample(slices.Clone(a), th), benchmath.NewSample(slices.Clone(b), th)
	ma, mb := Median(sa.Values), Median(sb.Values)
	return (mb - ma) / ma, benchmath.AssumeNothing.Compare(sa, sb).P
}

// iqrSpread is the interquartile range of v over its median.
func iqrSpread(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	return (quantile(s, 0.75) - quantile(s, 0.25)) / Median(s)
}

// SuggestThreshold is the threshold the rows of one benchmark name support:
// the largest Limit among its time units, rounded up to a whole 5 %, and
// never under floor.
func SuggestThreshold(rows []NoiseRow, floor float64) float64 {
	t := floor
	for _, r := range rows {
		t = max(t, math.Ceil(r.Limit*20-1e-9)/20)
	}
	return t
}
