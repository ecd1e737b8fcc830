package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/internal/hostspeed"
)

// The noise rules (docs/measuring.md, "Noise"). A report is noisy when the
// A/A canary's interval misses 1.00 by more than canaryTolerance, or when a
// ratio the report publishes has a 95% interval wider than ±maxHalfWidth.
const (
	canaryTolerance = 0.02
	maxHalfWidth    = 0.10
)

// Noise is the judgement of one run's figures.
type Noise struct {
	View    string   // "CPU time" or "wall time": the view judged, the one the generated tables publish
	Noisy   bool     //
	Reasons []string // one per failed check, in table order
	Checked int      // intervals judged
	Widest  float64  // largest half-width among them, a fraction; +Inf if one has no interval
	Canary  []benchgate.RatioSummary
	// Host says how far the rounds of the 100-byte limit moved, when the
	// slowest is more than hostspeed.Tolerance times the fastest: the core
	// ran that loop at two speeds during the run (the host's doing when the
	// guest was idle). "" otherwise, or without those rounds. Not a rule:
	// ratios of codes it slows alike still cancel it; it names the likely
	// cause of the ones that do not.
	Host string
}

// headline returns the view the generated tables publish: CPU time when the
// benchmarks reported it (a neighbour's load disturbs it less), else wall time.
func (f *Figures) headline() *Figures {
	if f.hasCPU() {
		return f.cpu()
	}
	return f
}

// headlineTables are the ratio tables of the headline view that have data,
// the canary first.
func (f *Figures) headlineTables() []*table {
	h := f.headline()
	var out []*table
	for _, t := range []*table{h.canary(), h.strategyOverAsis(), h.asisOverLimit(), h.storeOverModel()} {
		if !t.empty() {
			out = append(out, t)
		}
	}
	return out
}

// judge applies the noise rules to the headline tables. A run without a
// canary is noisy: nothing shows how far its figures move on their own.
func (f *Figures) judge() *Noise {
	n := &Noise{View: "wall time"}
	if f.hasCPU() {
		n.View = "CPU time"
	}
	tables := f.headlineTables()
	hasCanary := false
	for _, t := range tables {
		for _, row := range t.Rows {
			for _, col := range t.Cols {
				r, ok := t.Intervals[[2]string{row, col}]
				if !ok {
					continue
				}
				n.Checked++
				hw := r.HalfWidth()
				n.Widest = max(n.Widest, hw)
				where := fmt.Sprintf("%s, %s at %s", strings.TrimSuffix(t.Title, " (CPU time)"), row, col)
				if t.Canary {
					hasCanary = true
					n.Canary = append(n.Canary, r)
					if off, bad := canaryOff(r); bad {
						n.Reasons = append(n.Reasons, fmt.Sprintf("canary %s = %s misses 1.00 by %.1f%% (tolerance %.0f%%)",
							row+" "+col, intervalString(r), 100*off, 100*canaryTolerance))
					}
				}
				if !r.HasInterval() {
					n.Reasons = append(n.Reasons, fmt.Sprintf("%s: no interval (fewer than 2 samples a side)", where))
				} else if hw > maxHalfWidth {
					n.Reasons = append(n.Reasons, fmt.Sprintf("%s: %s, wider than ±%.0f%%", where, intervalString(r), 100*maxHalfWidth))
				}
			}
		}
	}
	if !hasCanary {
		n.Reasons = append(n.Reasons, "no A/A canary: the run has no BenchmarkAppend/strategy="+canaryStrategy+" beside strategy=asis")
	}
	n.Noisy = len(n.Reasons) > 0
	n.Host = f.headline().hostSpeed()
	return n
}

// hostLimit is the configuration whose rounds show the host's speed: the
// 100-byte limit, the smallest loop of the run (a CRC and a copy in L1),
// which nothing of the process moves (docs/measuring.md, "The host's two
// speeds").
var hostLimit = Key{Name: "Limit", Batch: "100B"}

// hostSpeed describes the spread of the 100-byte limit's rounds in f's time
// unit when it exceeds hostspeed.Tolerance, else "".
func (f *Figures) hostSpeed() string {
	v := f.hostSamples(hostLimit.Name)
	if len(v) < 2 {
		return ""
	}
	lo, hi := slices.Min(v), slices.Max(v)
	if !(lo > 0) || hi <= hostspeed.Tolerance*lo {
		return ""
	}
	var slow int
	var ratios [2][]float64 // locked limit / limit in the fast and the slow rounds
	locked := f.hostSamples("LimitLocked")
	for i, x := range v {
		s := 0
		if x > hostspeed.Tolerance*lo {
			s = 1
			slow++
		}
		if f.rounds && len(locked) == len(v) {
			ratios[s] = append(ratios[s], locked[i]/x)
		}
	}
	out := fmt.Sprintf("the 100-byte limit ran %.1f to %.1f ns a round (%.2f×), over %.2f× its fastest in %d of %d rounds: "+
		"the core ran it at two speeds (with the guest idle, the host's doing: docs/measuring.md, \"The host's two speeds\"; mirrorpath hostspeed samples it), "+
		"and ratios of codes it slows unequally follow the share of rounds run slow",
		lo*1e9, hi*1e9, hi/lo, hostspeed.Tolerance, slow, len(v))
	if len(ratios[0]) > 0 && len(ratios[1]) > 0 {
		out += fmt.Sprintf(": the locked limit over the limit was %.2f in the fast rounds and %.2f in the slow (medians)", benchgate.Median(ratios[0]), benchgate.Median(ratios[1]))
	}
	return out
}

// hostSamples returns the rounds of benchmark name at 100 B in f's time
// unit (the limits have no other name parts), or nil.
func (f *Figures) hostSamples(name string) []float64 {
	for _, k := range f.configsOf(name) {
		if k.Batch == hostLimit.Batch && k.Strategy == "" && k.Producers == "" {
			return f.Samples(k, f.timeUnit)
		}
	}
	return nil
}

// canaryOff returns by how much r's interval misses 1.00, and whether that
// exceeds canaryTolerance.
func canaryOff(r benchgate.RatioSummary) (float64, bool) {
	if !r.HasInterval() {
		return 0, false // reported as a missing interval
	}
	off := 0.0
	switch {
	case r.Lo > 1:
		off = r.Lo - 1
	case r.Hi < 1:
		off = 1 - r.Hi
	}
	return off, off > canaryTolerance
}

// Verdict is the one-line summary: "NOISY (n reasons)" or "steady".
func (n *Noise) Verdict() string {
	if n.Noisy {
		return fmt.Sprintf("NOISY, %d checks failed", len(n.Reasons))
	}
	return fmt.Sprintf("steady: the A/A canary holds 1.00 within %.0f%% and all %d intervals are within ±%.0f%% (widest ±%.1f%%)",
		100*canaryTolerance, n.Checked, 100*maxHalfWidth, 100*n.Widest)
}

// intervalString renders "1.02 [0.99, 1.05]".
func intervalString(r benchgate.RatioSummary) string {
	if !r.HasInterval() {
		return ratioString(r.Center) + " [no interval]"
	}
	return ratioString(r.Center) + " [" + ratioString(r.Lo) + ", " + ratioString(r.Hi) + "]"
}

// ratioString prints a ratio with two decimals, three significant digits
// below 0.1 (store/model is 0.01 to 0.1), so that its interval shows.
func ratioString(v float64) string {
	if math.Abs(v) < 0.1 {
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// ratioCell renders a table cell: the ratio and benchstat-style ±% of its
// interval, "‼" when the interval is wider than maxHalfWidth (or missing),
// and for the canary the interval itself and "‼" when it misses 1.00.
func ratioCell(t *table, row, col string) string {
	r, ok := t.Intervals[[2]string{row, col}]
	if !ok || math.IsNaN(r.Center) {
		return "-"
	}
	hw := r.HalfWidth()
	flag := ""
	if hw > maxHalfWidth {
		flag = " ‼"
	}
	if t.Canary {
		if _, bad := canaryOff(r); bad {
			flag = " ‼"
		}
		return intervalString(r) + flag
	}
	if !r.HasInterval() {
		return ratioString(r.Center) + " ±?" + flag
	}
	return fmt.Sprintf("%s ±%.0f%%%s", ratioString(r.Center), 100*hw, flag)
}
