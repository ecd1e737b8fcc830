package benchgate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// aaRun writes an A/A run of one benchmark: both sides drawn from the same
// distribution, a median of 1000 ns and a relative spread of sd.
func aaRun(rng *rand.Rand, n int, sd float64) string {
	var sb strings.Builder
	for range n {
		fmt.Fprintf(&sb, "BenchmarkX-2 1000 %.1f ns/op\n", 1000*math.Exp(sd*rng.NormFloat64()))
	}
	return sb.String()
}

// TestNoiseLimitGrowsWithSpread: the limit Noise derives from an A/A run is
// larger for the noisier benchmark, and the A/A run itself is not
// significant.
func TestNoiseLimitGrowsWithSpread(t *testing.T) {
	limit := func(sd float64) NoiseRow {
		rng := rand.New(rand.NewPCG(1, 2))
		c := NewCollector()
		if err := c.Add(Base, strings.NewReader(aaRun(rng, 30, sd)), "a"); err != nil {
			t.Fatal(err)
		}
		if err := c.Add(Head, strings.NewReader(aaRun(rng, 30, sd)), "b"); err != nil {
			t.Fatal(err)
		}
		rows := c.Noise(0.01, 2000, 7)
		if len(rows) != 1 || rows[0].Unit != "sec/op" || rows[0].N != 60 {
			t.Fatalf("rows %+v", rows)
		}
		return rows[0]
	}
	quiet, noisy := limit(0.02), limit(0.20)
	if quiet.Significant == 0 || noisy.Significant == 0 {
		t.Fatalf("no significant draw in 2000 (quiet %d, noisy %d)", quiet.Significant, noisy.Significant)
	}
	if !(quiet.Limit > 0 && noisy.Limit > 2*quiet.Limit) {
		t.Fatalf("limits %.3f (sd 2%%) and %.3f (sd 20%%): the noisier must be well above", quiet.Limit, noisy.Limit)
	}
	if quiet.Limit > 0.05 || noisy.Limit < 0.05 {
		t.Fatalf("limits %.3f (sd 2%%) and %.3f (sd 20%%) out of their ranges", quiet.Limit, noisy.Limit)
	}
	if quiet.P < 0.01 || noisy.P < 0.01 {
		t.Fatalf("A/A sides significant: p %.3g, %.3g", quiet.P, noisy.P)
	}
}

func TestSuggestThreshold(t *testing.T) {
	rows := []NoiseRow{{Limit: 0.061}, {Limit: 0.12}, {Limit: 0}}
	if got := SuggestThreshold(rows, 0.05); math.Abs(got-0.15) > 1e-9 {
		t.Fatalf("SuggestThreshold = %v, want 0.15", got)
	}
	if got := SuggestThreshold(rows[2:], 0.05); got != 0.05 {
		t.Fatalf("SuggestThreshold of a quiet row = %v, want the floor 0.05", got)
	}
	if got := SuggestThreshold([]NoiseRow{{Limit: 0.10}}, 0.05); math.Abs(got-0.10) > 1e-9 {
		t.Fatalf("SuggestThreshold of exactly 10%% = %v", got)
	}
}
