package appendpath

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/cputime"
	"github.com/mirrorpath/mirrorpath/internal/hostspeed"
	"github.com/mirrorpath/mirrorpath/pid"
)

// TestInterleavedFigures is the benchmark selection of `mirrorpath run`
// measured with every configuration a ratio compares in one process,
// alternating in slices of a few milliseconds (cputime.Interleave,
// docs/measuring.md, "Noise"): per batch shape one group of
// BenchmarkAppend under every strategy at 1000 producers, the limits
// (BenchmarkLimit, LimitRing, LimitFused, LimitRingFused, LimitLocked,
// CopyRing) and the as-is AppendFetch chunk of that shape. It prints go test
// result lines under the benchmarks' own names, round by round. Each round
// runs in a process of its own (cputime.RoundsApart): set up in one
// process, the canary's two sides kept a bias of 2 to 4 % through every
// round of some runs, although their buffers are made afresh five times a
// round (docs/measuring.md, "Noise"). It measures and asserts nothing about
// speed; it runs only when cputime.PlanEnv holds a plan.
func TestInterleavedFigures(t *testing.T) {
	env := os.Getenv(cputime.PlanEnv)
	if env == "" {
		t.Skip("set " + cputime.PlanEnv + `="rounds=20 slices=25 slice=2ms"`)
	}
	plan, err := cputime.ParsePlan(env)
	if err != nil {
		t.Fatal(err)
	}
	first, child, err := cputime.ChildRound()
	if err != nil {
		t.Fatal(err)
	}
	if !child {
		printHeader()
		if err := cputime.RoundsApart(t.Context(), "^TestInterleavedFigures$", plan, os.Stdout, os.Stderr); err != nil {
			t.Fatal(err)
		}
		return
	}
	plan.First = first
	rounds := make([][]cputime.Figure, plan.Rounds)
	for _, sh := range benchShapes {
		tasks, setups := appendGroup(t, sh)
		plan.Resets = appendResets
		plan.Reset = func(r int) {
			if r == 1 {
				// The first round's first placement is the one the
				// calibration (after call 0) ran on: the calibration
				// allocates nothing, and a process measures one round.
				return
			}
			// In an order of the reset's own, so that the allocator does
			// not hand each task the memory it had the last time.
			for _, i := range rand.New(rand.NewPCG(uint64(r), 0x73657475+uint64(plan.First))).Perm(len(setups)) {
				setups[i]()
			}
			runtime.GC() // the previous logs and rings
		}
		cputime.Interleave(plan, tasks, func(r int, figs []cputime.Figure) {
			rounds[r] = append(rounds[r], figs...)
		})
		runtime.GC() // the group's logs and rings are garbage now
	}
	printHeader()
	for _, figs := range rounds {
		if err := cputime.WriteRound(os.Stdout, runtime.GOMAXPROCS(0), figs, false); err != nil {
			t.Fatal(err)
		}
	}
}

// printHeader prints go test's lines before the results of the package.
func printHeader() {
	fmt.Printf("goos: %s\ngoarch: %s\npkg: github.com/mirrorpath/mirrorpath/appendpath\n", runtime.GOOS, runtime.GOARCH)
}

// appendResets is how many times a round sets the append group's buffers up
// afresh (cputime.Plan.Resets): a round's figure of a task is then the mean
// of that many placements in memory, and its spread from round to round
// about half of one placement's.
const appendResets = 5

// appendGroup is the tasks of one batch shape, with the same partitions,
// batches and buffers as the benchmarks of the same names, and for each
// task the setup that makes them afresh (appendResets times a round, and
// once before cputime.Interleave calibrates: cputime.Plan.Reset; the tasks
// run only after it). Where a log's segments, a ring or a
// batch land in memory moves a task's figure by several per cent (the
// cache sets its pages map to; a 100-byte append's log of 768 KiB nearly
// fills a 1 MiB L2); made once, the same places would stay with a task for
// the whole run and bias each of its ratios, made afresh they vary as they
// do between the processes of go test rounds, and a round averages several.
func appendGroup(t *testing.T, sh benchShape) (tasks []cputime.Task, setups []func()) {
	const producers = 1000
	size := int64(len(benchBatch(t, sh.records, sh.value)))
	// A slice's untimed warm-up is a lap of the task's log (its three
	// recycled segments) or ring, of per bytes an operation.
	lap := func(per int64) int { return int(3*benchSegmentBytes(int(per))/per) + 1 }
	add := func(name, class string, bytes int64, setup func(), run func(n int)) {
		tasks = append(tasks, cputime.Task{Name: name, Class: class, Bytes: bytes, Run: run, Warm: lap(bytes)})
		setups = append(setups, setup)
	}
	for _, st := range benchStrategies {
		fixes := []string{"full", "patch"}
		class := "" // a rewrite's own code
		if !st.s.Rewrites() {
			// asis and barrier store the batch as it came, by the same
			// code (the A/A canary): one count of appends a slice.
			fixes, class = []string{"none"}, "as-is/batch="+sh.name
		}
		for _, fixName := range fixes {
			fix := pid.Full
			if fixName == "patch" {
				fix = pid.Patch
			}
			var in []byte
			var ring pidRing
			var p *Partition
			i := 0
			add(fmt.Sprintf("Append/strategy=%s/crc=%s/batch=%s/producers=%d", st.name, fixName, sh.name, producers), class, size,
				func() {
					in = benchBatch(t, sh.records, sh.value)
					ring = newPIDRing(in, producers)
					p = benchPartition(t, st.s, fix, len(in))
					warm(t, p, in, &ring)
					i = 0
				},
				func(n int) {
					for range n {
						ring.set(in, i)
						if i++; i == producers {
							i = 0
						}
						if _, err := p.AppendMirrored(in, srcA); err != nil {
							t.Fatal(err)
						}
					}
				})
		}
	}
	for _, l := range []struct {
		name string
		mode limitMode
		ring bool
	}{
		{"Limit", limitTwoPass, false}, {"LimitRing", limitTwoPass, true}, {"LimitFused", limitFused, false},
		{"LimitRingFused", limitFused, true}, {"LimitLocked", limitLocked, false}, {"CopyRing", limitCopy, true},
	} {
		var run func(n int)
		add(l.name+"/batch="+sh.name, "", size,
			func() {
				if l.ring {
					run = ringLimit(benchBatch(t, sh.records, sh.value), l.mode)
				} else {
					run = hotLimit(benchBatch(t, sh.records, sh.value), l.mode)
				}
			},
			func(n int) { run(n) })
	}
	for _, c := range []struct {
		shape string
		n     int
	}{{"100B", 64}, {"1KiB", 16}} {
		if c.shape != sh.name {
			continue
		}
		var fetch []byte
		var p *Partition
		add(fmt.Sprintf("AppendFetch/strategy=asis/batch=%s/batches=%d", sh.name, c.n), "", size*int64(c.n),
			func() {
				fetch = fetchOf(t, sh, c.n, c.n)
				p = benchPartition(t, pid.Verbatim, pid.Full, len(fetch))
				for range 4 * benchSegmentBytes(len(fetch)) / int64(len(fetch)) {
					if _, err := p.AppendMirrored(fetch, srcA); err != nil {
						t.Fatal(err)
					}
				}
			},
			func(n int) {
				for range n {
					if _, err := p.AppendMirrored(fetch, srcA); err != nil {
						t.Fatal(err)
					}
				}
			})
	}
	return tasks, setups
}

// limitSink keeps the limits' checksums alive.
var limitSink uint32

// hotLimit is benchLimit's loop as a task: the work of mode into one hot
// buffer placed by hostspeed.LimitBuffers.
func hotLimit(batch []byte, mode limitMode) func(n int) {
	in, dst := hostspeed.LimitBuffers(batch)
	var mu sync.Mutex
	return func(n int) {
		var sink uint32
		for range n {
			switch mode {
			case limitFused:
				copy(dst[:codec.CRCStart], in)
				sink += codec.ChecksumCopy(dst[codec.CRCStart:], in[codec.CRCStart:])
			case limitLocked:
				mu.Lock()
				sink += codec.Checksum(in[codec.CRCStart:])
				copy(dst, in)
				mu.Unlock()
			default:
				sink += codec.Checksum(in[codec.CRCStart:])
				copy(dst, in)
			}
		}
		limitSink += sink
	}
}

// ringLimit is benchRing's loop as a task: the work of mode into the next
// place of a log-sized ring.
func ringLimit(in []byte, mode limitMode) func(n int) {
	ring := make([]byte, 3*benchSegmentBytes(len(in)))
	for i := range ring {
		ring[i] = 1 // touched, as the log's recycled buffers are
	}
	pos := 0
	return func(n int) {
		var sink uint32
		for range n {
			dst := ring[pos : pos+len(in)]
			switch mode {
			case limitTwoPass:
				sink += codec.Checksum(in[codec.CRCStart:])
				copy(dst, in)
			case limitFused:
				copy(dst[:codec.CRCStart], in)
				sink += codec.ChecksumCopyCold(dst[codec.CRCStart:], in[codec.CRCStart:])
			default: // limitCopy
				copy(dst, in)
			}
			if pos += len(in); pos+len(in) > len(ring) {
				pos = 0
			}
		}
		limitSink += sink
	}
}
