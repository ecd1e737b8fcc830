package psm

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// TestInterleavedFigures is the producer-state selection of `mirrorpath
// run` measured with the sides of each store / model ratio in one process,
// alternating in slices of a few milliseconds (cputime.Interleave,
// docs/measuring.md, "Noise"): per benchmark (BenchmarkUpdate,
// BenchmarkUpdateOne) and producer count one group of impl=store and
// impl=model (and impl=nop at 1000 producers), set up and warmed as the
// benchmarks are. Each slice ends with the collection its updates started
// finished, and its share left out of the slice's CPU time and reported as
// gc-cpu-ns/op (reportMutatorCPU's split); a full collection runs outside
// the clocks five times a round. At a million producers the
// Model's updates of a default run (20 rounds of 50 ms) stay within its
// first lap over the producers, as the benchmark's fixed count keeps them. It prints go test result lines
// under the benchmarks' own names, round by round. It measures and asserts
// nothing about speed; it runs only when cputime.PlanEnv holds a plan.
func TestInterleavedFigures(t *testing.T) {
	env := os.Getenv(cputime.PlanEnv)
	if env == "" {
		t.Skip("set " + cputime.PlanEnv + `="rounds=20 slices=25 slice=2ms"`)
	}
	plan, err := cputime.ParsePlan(env)
	if err != nil {
		t.Fatal(err)
	}
	plan.Collector, plan.Settle = gcCPU, finishCollection
	// A full collection, outside the clocks, five times a round (every
	// Slices/5 passes): the Model's heap at 100,000 and 1,000,000 producers then
	// does not reach its next collection inside a slice, where its marking
	// and the sweeping after it (billed to the updates that allocate) would
	// land in some rounds and not others (about one round in three at a
	// million producers, doubling its time there).
	plan.Resets, plan.Reset = 5, func(int) { runtime.GC() }
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // as benchUpdateWith's loop runs
	rounds := make([][]cputime.Figure, plan.Rounds)
	for _, one := range []bool{false, true} {
		for _, n := range benchSizes {
			tasks := updateGroup(t, one, n)
			runtime.GC()
			cputime.Interleave(plan, tasks, func(r int, figs []cputime.Figure) {
				rounds[r] = append(rounds[r], figs...)
			})
			tasks = nil
			runtime.GC()
		}
	}
	fmt.Printf("goos: %s\ngoarch: %s\npkg: github.com/mirrorpath/mirrorpath/psm\n", runtime.GOOS, runtime.GOARCH)
	for _, figs := range rounds {
		if err := cputime.WriteRound(os.Stdout, procs, figs, true); err != nil {
			t.Fatal(err)
		}
	}
}

// updateGroup is the tasks of one benchmark and producer count, populated
// and warmed as benchUpdateWith does.
func updateGroup(t *testing.T, one bool, n int) []cputime.Task {
	name := "Update"
	if one {
		name = "UpdateOne"
	}
	var tasks []cputime.Task
	for _, impl := range append(benchImpls, "nop") {
		if impl == "nop" && n != benchSizes[0] {
			continue
		}
		m := newImpl(impl, Options{})
		if impl != "nop" {
			populate(m, 0, n)
		}
		loop := newUpdateLoop(n)
		if impl != "nop" {
			warmUpdates(t, m, loop, n, one)
		}
		tasks = append(tasks, cputime.Task{
			Name: name + "/impl=" + impl + "/producers=" + strconv.Itoa(n),
			Run: func(k int) {
				for range k {
					benchUpdateOp(t, m, loop.next(), one)
				}
			},
		})
	}
	return tasks
}

// finishCollection waits for a collection in progress to finish its mark
// (debug.SetGCPercent with a negative value does, then the setting is put
// back), so that the slice whose allocations started it pays for it.
func finishCollection() { debug.SetGCPercent(debug.SetGCPercent(-1)) }
