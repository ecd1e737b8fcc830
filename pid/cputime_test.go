package pid

import (
	"fmt"
	"os"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// TestCPUTimeFigures measures the benchmarks' work in process CPU time, which
// a machine shared with other jobs does not inflate by descheduling (wall
// clock there swings ±50%). Each figure is the minimum over 9 interleaved
// rounds; every loop runs inside the job, so no per-op closure call is
// counted. Ratios are within this one run. Opt-in: MIRRORPATH_CPUTIME=1.
func TestCPUTimeFigures(t *testing.T) {
	if os.Getenv("MIRRORPATH_CPUTIME") == "" {
		t.Skip("measurement, not a check: set MIRRORPATH_CPUTIME=1")
	}
	type job = cputime.Job
	var jobs []job
	region := Region(clA)
	for _, s := range Strategies() {
		jobs = append(jobs, job{Name: "mapfunc/strategy=" + s.String(), N: 2_000_000, Run: func(n int) { benchSink += mapFunc(s, region, n) }})
	}
	for _, s := range Strategies() {
		name := "map/strategy=" + s.String()
		if s == Bitfield {
			name += "/salted=false"
		}
		f, pos := newMapFixture(t, s, "false"), 0
		jobs = append(jobs, job{Name: name, N: 2_000_000, Run: func(n int) { benchSink += f.run(n, &pos) }})
	}
	for _, salted := range []string{"other", "true"} {
		f, pos := newMapFixture(t, Bitfield, salted), 0
		jobs = append(jobs, job{Name: "map/strategy=bitfield/salted=" + salted, N: 1_000_000, Run: func(n int) { benchSink += f.run(n, &pos) }})
	}
	for _, k := range []int{1, 1000, 100_000} {
		f, pos := newWorkingSetFixture(t, k), 0
		jobs = append(jobs, job{Name: fmt.Sprintf("mappids/strategy=bitfield/pids=%d", k), N: 1_000_000, Run: func(n int) { benchSink += f.run(n, &pos) }})
	}
	for _, fix := range CRCFixes() {
		for _, sz := range rewriteSizes {
			b := makeBatch(t, sz.n, 5)
			n := 200_000
			if fix == Full {
				n = max(20, (32<<20)/sz.n)
			}
			jobs = append(jobs, job{Name: "rewrite/crc=" + fix.String() + "/batch=" + sz.name, N: n, Run: func(n int) { rewriteN(b, fix, n) }})
		}
	}

	ns := cputime.MinPerOp(9, jobs)
	for _, j := range jobs {
		t.Logf("%-44s %12.2f ns/op", j.Name, ns[j.Name])
	}
	ratio := func(a, b string) { t.Logf("%s / %s = %.2f", a, b, ns[a]/ns[b]) }
	ratio("map/strategy=bitfield/salted=false", "map/strategy=verbatim")
	ratio("map/strategy=bitfield/salted=other", "map/strategy=bitfield/salted=false")
	ratio("map/strategy=bitfield/salted=true", "map/strategy=bitfield/salted=false")
	ratio("mappids/strategy=bitfield/pids=100000", "mappids/strategy=bitfield/pids=1000")
	for _, sz := range rewriteSizes {
		ratio("rewrite/crc=full/batch="+sz.name, "rewrite/crc=patch/batch="+sz.name)
	}
}
