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

// TestPairedRatioIntervalCancelsRounds: rounds that run the whole machine
// slower (a factor shared by both sides of a round) widen the independent
// interval but cancel in the paired one, which stays at the true ratio.
func TestPairedRatioIntervalCancelsRounds(t *testing.T) {
	slowdown := []float64{1, 1.9, 1.05, 1.6, 1, 2, 1.1, 1.7, 1, 1.3}
	jitter := []float64{1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.01}
	num, den := make([]float64, len(slowdown)), make([]float64, len(slowdown))
	for i, s := range slowdown {
		num[i] = 120 * s * jitter[i]
		den[i] = 100 * s * jitter[len(jitter)-1-i]
	}
	p := PairedRatioInterval(num, den, 0.95)
	if !p.Paired || !p.HasInterval() || p.Lo > 1.2 || p.Hi < 1.2 || p.HalfWidth() > 0.03 {
		t.Fatalf("paired: %+v, want 1.2 within ±3%%", p)
	}
	u := RatioInterval(num, den, 0.95)
	if u.Paired || u.HalfWidth() < 3*p.HalfWidth() {
		t.Fatalf("independent %+v is not much wider than paired %+v", u, p)
	}
	// Without a shared factor the paired interval is no narrower than the
	// rounds' own spread: it still holds the true ratio.
	for i := range num {
		num[i], den[i] = 120*jitter[i], 100*jitter[len(jitter)-1-i]
	}
	if q := PairedRatioInterval(num, den, 0.95); q.Lo > 1.2 || q.Hi < 1.2 {
		t.Fatalf("steady rounds: %+v does not hold 1.2", q)
	}
}

func TestPairedRatioIntervalEdges(t *testing.T) {
	if r := PairedRatioInterval([]float64{1, 2}, []float64{1}, 0.95); !math.IsNaN(r.Center) {
		t.Fatalf("unequal lengths: %+v", r)
	}
	if r := PairedRatioInterval([]float64{3}, []float64{2}, 0.95); r.Center != 1.5 || r.HasInterval() {
		t.Fatalf("one round: %+v", r)
	}
	a, b := []float64{5, 7, 6, 9, 5.5, 6.5}, []float64{4, 4.2, 3.9, 4.4, 4.1, 4.0}
	if x, y := PairedRatioInterval(a, b, 0.95), PairedRatioInterval(a, b, 0.95); x != y {
		t.Fatalf("two calls differ: %+v, %+v", x, y)
	}
}
