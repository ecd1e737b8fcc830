package pid

import (
	"math"
	"testing"
)

// Predict gives Map's answer under the pure strategies, records nothing,
// and under bitfield predicts the fast path's slot only for the previous
// call's unsalted cluster and a PID in [0, 2^31).
func TestMapperPredict(t *testing.T) {
	pids := []int64{-1, 0, 5, -2, -7, LowMask, LowMask + 1, math.MaxInt64, math.MinInt64}
	for _, s := range []Strategy{Negate, NegateSkip} {
		m := NewMapper(Config{Strategy: s})
		for _, p := range pids {
			pred, ok := m.Predict(clA, p)
			if got := mustMap(t, m, clA, p); !ok || pred != got {
				t.Errorf("%v: Predict(%d) = %d, %v; Map gives %d", s, p, pred, ok, got)
			}
		}
	}
	for _, s := range []Strategy{Verbatim, Barrier} {
		if _, ok := NewMapper(Config{Strategy: s}).Predict(clA, 5); ok {
			t.Errorf("%v predicts a rewrite", s)
		}
	}

	m := newTestMapper(NewRegistry(nil, nil), 1)
	if _, ok := m.Predict(clA, 5); ok {
		t.Fatal("bitfield predicts before its first call")
	}
	mustMap(t, m, clA, 1)
	before := m.Stats()
	for _, p := range []int64{1, 2, 5, LowMask} { // seen before, first seen
		pred, ok := m.Predict(clA, p)
		if m.Stats() != before {
			t.Fatalf("Predict(%d) recorded a mapping", p)
		}
		if got := mustMap(t, m, clA, p); !ok || pred != got {
			t.Errorf("bitfield: Predict(%d) = %#x, %v; Map gives %#x", p, pred, ok, got)
		}
		before = m.Stats()
	}
	for _, c := range []struct {
		cl [16]byte
		p  int64
	}{{clC, 5}, {clA, -1}, {clA, -7}, {clA, LowMask + 1}} {
		if _, ok := m.Predict(c.cl, c.p); ok {
			t.Errorf("bitfield predicts PID %d of a cluster other than the last call's or out of [0, 2^31)", c.p)
		}
	}
	// A slot held by another cluster of the same region: predicted, but
	// Map resolves the collision with a salt elsewhere.
	mustMap(t, m, clB, 9)
	mustMap(t, m, clA, 1)
	pred, ok := m.Predict(clA, 9)
	if got := mustMap(t, m, clA, 9); !ok || pred != mustMapPure(42, 9) || got == pred {
		t.Fatalf("collision: Predict = %#x, %v; Map gives %#x", pred, ok, got)
	}
	// After a salt of clA the fast path, and the prediction, are off.
	if _, ok := m.Predict(clA, 10); ok {
		t.Fatal("bitfield predicts for a cluster with salts")
	}
}
