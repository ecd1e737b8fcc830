package benchgate

import (
	"math"
	"testing"
)

func TestRatioIntervalCoversAndNarrows(t *testing.T) {
	// Two samples of the same distribution: the interval holds 1.
	a := []float64{100, 102, 98, 101, 99, 103, 97, 100, 101, 99}
	b := []float64{101, 99, 100, 98, 102, 100, 103, 97, 99, 101}
	r := RatioInterval(a, b, 0.95)
	if !r.HasInterval() || r.Lo > 1 || r.Hi < 1 {
		t.Fatalf("A/A: %+v does not hold 1", r)
	}
	if r.HalfWidth() > 0.05 {
		t.Fatalf("A/A of ±3%% samples: half-width %.3f, want ≤ 0.05", r.HalfWidth())
	}
	// A 1.5× slowdown: the interval is around 1.5 and excludes 1.
	slow := make([]float64, len(a))
	for i, v := range a {
		slow[i] = 1.5 * v
	}
	s := RatioInterval(slow, b, 0.95)
	if math.Abs(s.Center-1.5) > 0.03 || s.Lo <= 1 || s.Lo > 1.5 || s.Hi < 1.5 {
		t.Fatalf("1.5×: %+v", s)
	}
	// A noisier numerator widens the interval.
	noisy := []float64{100, 130, 75, 110, 90, 140, 70, 100, 120, 85}
	if n := RatioInterval(noisy, b, 0.95); n.HalfWidth() <= r.HalfWidth() {
		t.Fatalf("noisy half-width %.3f not above the steady one %.3f", n.HalfWidth(), r.HalfWidth())
	}
}

func TestRatioIntervalDeterministic(t *testing.T) {
	a := []float64{5, 7, 6, 9, 5.5, 6.5}
	b := []float64{4, 4.2, 3.9, 4.4, 4.1, 4.0}
	if x, y := RatioInterval(a, b, 0.95), RatioInterval(a, b, 0.95); x != y {
		t.Fatalf("two calls differ: %+v, %+v", x, y)
	}
}

func TestRatioIntervalTooFew(t *testing.T) {
	r := RatioInterval([]float64{2}, []float64{1, 1.1}, 0.95)
	if r.Center != 2/1.05 || r.HasInterval() || !math.IsInf(r.HalfWidth(), 1) {
		t.Fatalf("one value: %+v", r)
	}
	if r := RatioInterval(nil, []float64{1}, 0.95); !math.IsNaN(r.Center) {
		t.Fatalf("empty: %+v", r)
	}
}
