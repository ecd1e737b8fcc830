package cputime

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInterleaveOrder: every task runs Plan.Slices slices a round, each
// pass over the tasks in its own order, so that a task does not always
// follow the same one; a round's figure sums its slices' operations.
func TestInterleaveOrder(t *testing.T) {
	var order []string
	timed := false
	task := func(name string) Task {
		return Task{Name: name, Run: func(n int) {
			spin(n)
			if timed {
				order = append(order, name)
			}
		}}
	}
	p := Plan{Rounds: 2, Slices: 6, Slice: 100 * time.Microsecond}
	// The calibration is over when a slice's untimed warm-up, then Settle, runs.
	p.Settle = func() { timed = !timed }
	var got [][]Figure
	Interleave(p, []Task{task("a"), task("b"), task("c")}, func(r int, figs []Figure) {
		if r != len(got) {
			t.Errorf("round %d reported after %d rounds", r, len(got))
		}
		got = append(got, append([]Figure(nil), figs...))
	})
	if len(got) != 2 || len(order) != 2*6*3 {
		t.Fatalf("%d rounds reported, %d timed slices; want 2 and 36", len(got), len(order))
	}
	after := map[string]bool{}
	for pass := range 2 * 6 {
		p := order[3*pass : 3*pass+3]
		if !slices.Contains(p, "a") || !slices.Contains(p, "b") || !slices.Contains(p, "c") {
			t.Errorf("pass %d ran %q, want each task once", pass, p)
		}
		after[p[0]+p[1]] = true
		after[p[1]+p[2]] = true
	}
	if len(after) < 4 {
		t.Errorf("tasks followed %d distinct others over 12 passes (%q), want the order to vary", len(after), order)
	}
	for r, figs := range got {
		for i, f := range figs {
			if f.Name != string(rune('a'+i)) || f.N <= 0 || f.N%6 != 0 || f.CPU < 0 || f.GC != 0 {
				t.Errorf("round %d task %d: %+v, want name %c, 6 slices of equal counts, no collector share", r, i, f, 'a'+i)
			}
		}
	}
}

// TestInterleaveSharedSlowdownCancels: a slowdown of the machine that lasts
// a round, or half of one, scales every task of the group alike, so that a
// round's ratio of two tasks stays what the work makes it while their
// figures move with the slowdown. The slowdown is extra work per
// operation (what a core shared with a host's other work looks like in
// CPU time), on during whole rounds and during every other slice.
func TestInterleaveSharedSlowdownCancels(t *testing.T) {
	slow := 1 // the machine's slowdown factor, for whatever runs now
	small := Task{Name: "small", Run: func(n int) { spin(n * slow) }}
	large := Task{Name: "large", Run: func(n int) { spin(3 * n * slow) }}
	p := Plan{Rounds: 4, Slices: 8, Slice: time.Millisecond}
	calls := 0
	p.Settle = func() {
		// Settle runs after a slice's untimed warm-up and after its timed
		// part: the first call sets the slowdown of the timed part.
		// Rounds 1 and 3: slow for whole rounds; round 2: every other pass.
		calls++
		if calls%2 == 0 {
			return
		}
		slice := calls / 2
		round, pass := slice/(2*p.Slices), slice%(2*p.Slices)/2
		switch {
		case round == 1 || round == 3:
			slow = 4
		case round == 2 && pass%2 == 1:
			slow = 4
		default:
			slow = 1
		}
	}
	var small0, smallSlow float64
	Interleave(p, []Task{small, large}, func(r int, figs []Figure) {
		perOp := func(f Figure) float64 { return float64(f.CPU) / float64(f.N) }
		ratio := perOp(figs[1]) / perOp(figs[0])
		if ratio < 2 || ratio > 4.5 {
			t.Errorf("round %d: large/small %.2f, want about 3 whatever the round's slowdown", r, ratio)
		}
		switch r {
		case 0:
			small0 = perOp(figs[0])
		case 1:
			smallSlow = perOp(figs[0])
		}
	})
	if smallSlow < 2*small0 {
		t.Errorf("a round slowed 4x measured small at %.0f ns/op against %.0f: the slowdown did not show", smallSlow, small0)
	}
}

func TestPlanString(t *testing.T) {
	p := Plan{Rounds: 10, Slices: 50, Slice: 2 * time.Millisecond}
	got, err := ParsePlan(p.String())
	if err != nil || got.Rounds != p.Rounds || got.Slices != p.Slices || got.Slice != p.Slice {
		t.Fatalf("ParsePlan(%q) = %+v, %v; want %+v", p.String(), got, err, p)
	}
	for _, bad := range []string{"", "rounds=10", "rounds=0 slices=50 slice=2ms", "rounds=10 slices=50 slice=-1ms", "rounds=10 slices=50 slice=2"} {
		if _, err := ParsePlan(bad); err == nil {
			t.Errorf("ParsePlan(%q): no error", bad)
		}
	}
}

func TestWriteRound(t *testing.T) {
	var b bytes.Buffer
	err := WriteRound(&b, 2, []Figure{
		{Name: "Append/batch=1KiB", Bytes: 1000, N: 1000, CPU: 50 * time.Microsecond, Wall: 100 * time.Microsecond},
		{Name: "Skipped", N: 0},
		{Name: "Update/impl=model", N: 10, CPU: 10 * time.Microsecond, GC: 2 * time.Microsecond, Wall: 20 * time.Microsecond},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "BenchmarkAppend/batch=1KiB-2\t1000\t100.00 ns/op\t10000.00 MB/s\t50.00 cpu-ns/op\t0.00 gc-cpu-ns/op\n" +
		"BenchmarkUpdate/impl=model-2\t10\t2000.00 ns/op\t1000.00 cpu-ns/op\t200.00 gc-cpu-ns/op\n"
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}
}

// TestInterleaveResets: Reset runs once before the calibration, then
// Resets times a round, before the first pass and at equal steps, outside
// the slices, counting its calls.
func TestInterleaveResets(t *testing.T) {
	var log []string
	task := Task{Name: "a", Run: func(n int) { spin(n); log = append(log, "s") }}
	p := Plan{Rounds: 2, Slices: 6, Slice: 100 * time.Microsecond, Resets: 3}
	var calls []int
	p.Reset = func(i int) { calls = append(calls, i); log = append(log, "R") }
	Interleave(p, []Task{task}, func(int, []Figure) { log = append(log, "|") })
	if !slices.Equal(calls, []int{0, 1, 2, 3, 4, 5, 6}) {
		t.Errorf("Reset calls %v, want 0 to 6", calls)
	}
	// Each slice is a warm-up and a timed run: "ss".
	got := strings.Join(log, "")
	if want := "Rssss" + "Rssss" + "Rssss|" + "Rssss" + "Rssss" + "Rssss|"; !strings.HasSuffix(got, want) {
		t.Errorf("order %s, want it to end %s", got, want)
	}
}

// TestInterleaveClassCounts: tasks of one Class run one count of
// operations a slice, however differently their calibrations went. Here
// the calibration sees task b twice as costly per operation as a (a
// collection on another thread, a moment of load): on its own b would get
// about half a's count, and a figure of a slice's fixed costs over fewer
// operations. c, of no class, keeps its own count.
func TestInterleaveClassCounts(t *testing.T) {
	for _, class := range []string{"same code", ""} {
		calibrating := true
		a := Task{Name: "a", Class: class, Run: func(n int) { spin(n) }}
		b := Task{Name: "b", Class: class, Run: func(n int) {
			if calibrating {
				spin(n) // the disturbance: twice the CPU time per operation
			}
			spin(n)
		}}
		c := Task{Name: "c", Run: func(n int) { spin(n) }}
		p := Plan{Rounds: 2, Slices: 4, Slice: 2 * time.Millisecond}
		p.Settle = func() { calibrating = false } // the first slice's warm-up ends the calibration
		var figs [][]Figure
		Interleave(p, []Task{a, b, c}, func(_ int, f []Figure) { figs = append(figs, append([]Figure(nil), f...)) })
		for r, f := range figs {
			if f[0].N <= 0 || f[1].N <= 0 || f[2].N <= 0 {
				t.Fatalf("class %q round %d: counts %d, %d, %d; want positive", class, r, f[0].N, f[1].N, f[2].N)
			}
			switch {
			case class != "" && f[0].N != f[1].N:
				t.Errorf("class %q round %d: a ran %d operations, b %d; want one count for the class", class, r, f[0].N, f[1].N)
			case class == "" && f[0].N == f[1].N:
				// The control: without a class, the disturbed calibration
				// shows in the counts, so the check above can fail.
				t.Errorf("no class, round %d: a and b both ran %d operations; want b's disturbed calibration to show", r, f[0].N)
			}
		}
	}
}

// TestClassCounts: a class takes the lower median of its members' counts
// (the smaller of two); tasks of no class and of other classes keep theirs.
func TestClassCounts(t *testing.T) {
	tasks := []Task{{Class: "x"}, {Class: "y"}, {Class: "x"}, {}, {Class: "x"}, {Class: "y"}, {}, {Class: "z"}}
	got := classCounts(tasks, []int{300, 50, 100, 7, 200, 40, 9, 11})
	want := []int{200, 40, 200, 7, 200, 40, 9, 11}
	if !slices.Equal(got, want) {
		t.Errorf("classCounts = %v, want %v", got, want)
	}
}

// TestInterleaveFirstSeedsTheOrder: plans of the same First repeat one
// order of passes; a different First (another process's round) gives
// another.
func TestInterleaveFirstSeedsTheOrder(t *testing.T) {
	orderOf := func(first int) string {
		var order []string
		timed := false
		task := func(name string) Task {
			return Task{Name: name, Run: func(n int) {
				if timed {
					order = append(order, name)
				}
			}}
		}
		p := Plan{Rounds: 1, Slices: 8, Slice: 10 * time.Microsecond, First: first}
		p.Settle = func() { timed = !timed }
		Interleave(p, []Task{task("a"), task("b"), task("c"), task("d")}, func(int, []Figure) {})
		return strings.Join(order, "")
	}
	if a, b := orderOf(0), orderOf(0); a != b {
		t.Errorf("First 0 twice: orders %q and %q, want one", a, b)
	}
	if a, b := orderOf(0), orderOf(1); a == b {
		t.Errorf("First 0 and 1: both %q, want two orders", a)
	}
}
