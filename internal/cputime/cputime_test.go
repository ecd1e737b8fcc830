package cputime

import (
	"testing"
	"time"
)

var sink uint64

func spin(n int) {
	for i := range n * 1000 {
		sink += uint64(i) * 2654435761
	}
}

func TestMinPerOpOrdersWork(t *testing.T) {
	best := MinPerOp(3, []Job{
		{Name: "small", N: 200, Run: spin},
		{Name: "large", N: 200, Run: func(n int) { spin(n * 20) }},
	})
	if len(best) != 2 {
		t.Fatalf("got %d jobs", len(best))
	}
	if best["large"] <= best["small"] {
		t.Fatalf("20x the work measured no more CPU: small %v, large %v", best["small"], best["large"])
	}
}

func TestProcessAdvances(t *testing.T) {
	start := Process()
	deadline := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(deadline) {
		spin(1)
	}
	if used := Process() - start; used < 10*time.Millisecond {
		t.Fatalf("30 ms of busy work measured %v of CPU", used)
	}
}

func TestSingle(t *testing.T) {
	calls := 0
	Single(func() { calls++ })(7)
	if calls != 7 {
		t.Fatalf("Single ran %d times, want 7", calls)
	}
}
