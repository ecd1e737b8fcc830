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

// TestProcessAdvances spins until the process has used 10 ms of CPU. It bounds
// the work, not the wall time: a loaded machine makes the loop take longer but
// cannot make it fail. The bound, 1e10 loop iterations, is seconds of CPU on
// any machine, so only a clock that does not advance exhausts it.
func TestProcessAdvances(t *testing.T) {
	const want = 10 * time.Millisecond
	start := Process()
	last := start
	for i := 0; i < 10_000_000; i++ {
		spin(1)
		now := Process()
		if now < last {
			t.Fatalf("process CPU time went back from %v to %v", last, now)
		}
		last = now
		if now-start >= want {
			return
		}
	}
	t.Fatalf("1e10 loop iterations measured %v of CPU, want >= %v", last-start, want)
}

func TestSingle(t *testing.T) {
	calls := 0
	Single(func() { calls++ })(7)
	if calls != 7 {
		t.Fatalf("Single ran %d times, want 7", calls)
	}
}
