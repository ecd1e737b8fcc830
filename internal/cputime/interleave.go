package cputime

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"
)

// Task is one configuration of an interleaved group: Run(n) performs n
// operations, continuing from where the previous call left off.
type Task struct {
	Name  string // the benchmark's full name as go test prints it, without the -GOMAXPROCS suffix
	Bytes int64  // bytes one operation handles (MB/s); 0: none
	Run   func(n int)
	// Warm is the least number of operations a slice runs untimed before
	// its clock starts (else a quarter of the timed ones): enough to bring
	// the task's data back into the caches, a lap of its log or ring.
	Warm int
	// Class names the tasks of a group that run the same code (the two
	// sides of the A/A canary): they run one count of operations a slice,
	// the lower median of their calibrated counts, so that a ratio of two
	// of them compares the same work. Calibrated apart, two such tasks can
	// get counts 25 to 30 % apart, and whatever a slice costs beside its
	// operations (its clock reads, the first operations after another
	// task's slice) then weighs differently in their figures. "": the
	// task's own count.
	Class string
}

// Plan says how Interleave alternates a group's tasks.
type Plan struct {
	Rounds int           // figures per task: one per round
	Slices int           // slices of every task per round
	Slice  time.Duration // CPU time a slice is sized for, by a calibration before the first round
	// Collector returns the collector's time so far (wall time, as the
	// runtime estimates it); a slice's share of it is left out of the
	// slice's CPU time and reported apart. nil: nothing left out.
	Collector func() time.Duration
	// Settle runs inside a slice's clock after its work (finishing a
	// collection the work started, so that it is billed to that task).
	Settle func()
	// Reset runs once before the calibration (call 0), then Resets times a
	// round, before the first pass and every Slices/Resets passes after it,
	// outside every clock, with a count of the calls so far: a group that
	// sets its tasks' buffers up afresh there gives each round's figure of
	// a task the mean of several placements in memory, where set up once a
	// placement would stay with the task for the whole run.
	Reset  func(i int)
	Resets int
	// First is the index of the plan's first round among the run's, when a
	// run measures its rounds in several processes (RoundsApart): it seeds
	// the order of the passes, so that two processes do not repeat one
	// order. 0 for a run in one process.
	First int
}

// Figure is one task's total over one round.
type Figure struct {
	Name  string
	Bytes int64
	N     int           // operations
	CPU   time.Duration // process CPU time, the collector's share left out
	GC    time.Duration // the collector's share, from Plan.Collector
	Wall  time.Duration
}

// calibrateMin is the least CPU time a calibration call must use before its
// cost per operation is trusted.
const calibrateMin = time.Millisecond

// Interleave runs the group's tasks in slices of a few milliseconds, one
// task after the other, so that whatever the machine does to a stretch of
// time (a neighbour, a host slowing the core, a frequency change) falls on
// every task of the group alike: a round is p.Slices passes over the
// tasks, each pass in its own order (a shuffle with a fixed seed), so that
// no task always follows the same one (whose data the caches then hold),
// and a task's figure of the round sums its slices.
// A slice is sized by a calibration (which also warms every task) to take
// about p.Slice of CPU time; tasks of one Class run one count.
// round is called after each round with the
// tasks' figures, in the order of tasks.
func Interleave(p Plan, tasks []Task, round func(r int, figs []Figure)) {
	if len(tasks) == 0 || p.Rounds <= 0 || p.Slices <= 0 {
		return
	}
	resets := 0
	if p.Reset != nil { // the setup's garbage collected before the calibration
		p.Reset(resets)
		resets++
	}
	ops := classCounts(tasks, calibrate(tasks, p.Slice))
	figs := make([]Figure, len(tasks))
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(0x696e746572+uint64(p.First), 0x6c65617665)) // fixed per first round: the same orders in every run
	every := p.Slices
	if p.Reset != nil && p.Resets > 0 {
		every = max(1, p.Slices/p.Resets)
	}
	for r := range p.Rounds {
		for i, t := range tasks {
			figs[i] = Figure{Name: t.Name, Bytes: t.Bytes}
		}
		for pass := range p.Slices {
			if p.Reset != nil && pass%every == 0 {
				p.Reset(resets)
				resets++
			}
			rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
			for _, i := range order {
				p.slice(tasks[i], ops[i], &figs[i])
			}
		}
		round(r, figs)
	}
}

// slice runs n operations of t and adds them to f, after max(n/4, t.Warm)
// more that are not counted: a slice starts with the caches holding what
// the tasks before it touched, and what it costs to bring its own data
// back depends on which task ran last and on how much data it has, not on
// the code measured, and would weigh more in a shorter slice. A collection
// the warm-up started is finished before the clock.
func (p Plan) slice(t Task, n int, f *Figure) {
	if w := max(n/4, t.Warm); w > 0 {
		t.Run(w)
		if p.Settle != nil {
			p.Settle()
		}
	}
	var gc0 time.Duration
	if p.Collector != nil {
		gc0 = p.Collector()
	}
	wall0, cpu0 := time.Now(), Process()
	t.Run(n)
	if p.Settle != nil {
		p.Settle()
	}
	cpu, wall := Process()-cpu0, time.Since(wall0)
	var gc time.Duration
	if p.Collector != nil {
		gc = p.Collector() - gc0
		if cpu < wall && wall > 0 { // the estimate counts wall time: scale it to the time the process ran
			gc = time.Duration(float64(gc) * float64(cpu) / float64(wall))
		}
		gc = min(max(gc, 0), cpu)
	}
	f.N += n
	f.CPU += cpu - gc
	f.GC += gc
	f.Wall += wall
}

// calibrate returns, per task, the number of operations that take about
// target of CPU time: it runs each task with a growing count until a call
// uses calibrateMin, then makes three passes over all the tasks with the
// counts that estimate gives, and keeps each task's largest count of the
// three (the least time per operation). A moment of load, or a collection
// running on another thread (process CPU time counts every thread), must
// not give one of two tasks of the same code much shorter slices than the
// other (calibrated one after the other under both, the A/A canary's two
// sides can get 25,000 and 13,000 operations a slice at 1 KiB).
func calibrate(tasks []Task, target time.Duration) []int {
	est := make([]int, len(tasks))
	for i, t := range tasks {
		n := 1
		for {
			start := Process()
			t.Run(n)
			used := Process() - start
			if used >= calibrateMin || n >= 1<<30 {
				est[i] = perTarget(n, used, target)
				break
			}
			n *= 4
		}
	}
	best := make([]int, len(tasks))
	for range 3 {
		for i, t := range tasks {
			t.Run(t.Warm)
			start := Process()
			t.Run(est[i])
			best[i] = max(best[i], perTarget(est[i], Process()-start, target))
		}
	}
	return best
}

// classCounts gives the tasks of each Class one count, the lower median
// of their counts (the smaller of two): a task disturbed in its calibration
// cannot lengthen its class's slices, and a class's slices stay within
// about the target. It changes and returns counts.
func classCounts(tasks []Task, counts []int) []int {
	members := map[string][]int{}
	for i, t := range tasks {
		if t.Class != "" {
			members[t.Class] = append(members[t.Class], i)
		}
	}
	for _, idx := range members {
		c := make([]int, len(idx))
		for j, i := range idx {
			c[j] = counts[i]
		}
		slices.Sort(c)
		for _, i := range idx {
			counts[i] = c[(len(c)-1)/2]
		}
	}
	return counts
}

// perTarget is the count of operations that take target when n took used.
func perTarget(n int, used, target time.Duration) int {
	per := float64(max(used, 1)) / float64(n)
	return max(1, int(float64(target)/per))
}

// WriteRound writes a round's figures as go test -bench result lines
// (with the -procs suffix of GOMAXPROCS, as go test names them): ns/op of
// wall time, MB/s where a task has bytes, cpu-ns/op, and gc-cpu-ns/op where
// a collector was read. benchfmt reads them like go test's own.
func WriteRound(w io.Writer, procs int, figs []Figure, collector bool) error {
	for _, f := range figs {
		if f.N == 0 {
			continue
		}
		n := float64(f.N)
		line := fmt.Sprintf("Benchmark%s-%d\t%d\t%.2f ns/op", f.Name, procs, f.N, float64(f.Wall.Nanoseconds())/n)
		if f.Bytes > 0 && f.Wall > 0 {
			line += fmt.Sprintf("\t%.2f MB/s", float64(f.Bytes)*n/f.Wall.Seconds()/1e6)
		}
		line += fmt.Sprintf("\t%.2f cpu-ns/op", float64(f.CPU.Nanoseconds())/n)
		if collector {
			line += fmt.Sprintf("\t%.2f gc-cpu-ns/op", float64(f.GC.Nanoseconds())/n)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// PlanEnv is the environment variable through which `mirrorpath run` asks a
// test binary for its interleaved figures (TestInterleavedFigures of
// appendpath and psm), its value a Plan as Plan.String writes it.
const PlanEnv = "MIRRORPATH_INTERLEAVE"

// String is the plan as ParsePlan reads it: "rounds=10 slices=50 slice=2ms".
// Collector and Settle are the test's own choice.
func (p Plan) String() string {
	return fmt.Sprintf("rounds=%d slices=%d slice=%s", p.Rounds, p.Slices, p.Slice)
}

// ParsePlan reads Plan.String's form; every field is required and positive.
func ParsePlan(s string) (Plan, error) {
	var p Plan
	var slice string
	if _, err := fmt.Sscanf(s, "rounds=%d slices=%d slice=%s", &p.Rounds, &p.Slices, &slice); err != nil {
		return Plan{}, fmt.Errorf("cputime: plan %q: want \"rounds=N slices=N slice=D\": %v", s, err)
	}
	d, err := time.ParseDuration(slice)
	if err != nil {
		return Plan{}, fmt.Errorf("cputime: plan %q: slice: %v", s, err)
	}
	p.Slice = d
	if p.Rounds <= 0 || p.Slices <= 0 || p.Slice <= 0 {
		return Plan{}, fmt.Errorf("cputime: plan %q: rounds, slices and slice must be positive", s)
	}
	return p, nil
}
