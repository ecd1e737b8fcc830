// Package hostspeed measures whether the machine runs the same code at one
// speed over a stretch of time. On a shared VM the host can change how fast
// the guest's core runs some code and not other code for seconds to minutes
// at a time, with nothing runnable in the guest and no steal time reported
// (docs/measuring.md, "The host's two speeds"): a ratio of two codes that
// such a change slows unequally then depends on when its rounds ran, and no
// interleaving inside the guest can pair it away. Sample runs three small
// loops in turn, in slices of process CPU time, and reports each loop's
// cost per operation for every interval of wall time:
//
//   - limit: the CRC-32C of a 100-byte batch after its first 21 bytes and
//     one copy of it (BenchmarkLimit at 100 B in appendpath);
//   - locked: the same inside an uncontended sync.Mutex (BenchmarkLimitLocked);
//   - chain: a dependent multiply-add chain, which only the core's clock
//     moves.
//
// Summarize calls a sample one speed when no loop's slowest interval is over
// Tolerance times its fastest. When the limit's is and the chain's is not,
// something slowed the CRC and the copy but not the clock; with the guest
// idle, that is the host, and a run measured then is not one of a machine
// at one speed.
package hostspeed

import (
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// Kernels are the loops' names, in the order of Interval.NsPerOp.
var Kernels = [3]string{"limit", "locked", "chain"}

// Tolerance is the largest slowest/fastest ratio over the intervals of one
// loop that Summarize still calls one speed. On the 2-vCPU AMD EPYC VM the
// chain's intervals, which the host's slow state leaves alone, stayed within
// 1.14 to 1.20 of their fastest; that state took the limit to 1.8 to 2.1
// times (results/host-speed/).
const Tolerance = 1.25

// Interval is one stretch of wall time: each loop's CPU time per
// operation over the slices it ran in that stretch.
type Interval struct {
	At      time.Duration // from the start of Sample to the interval's end
	NsPerOp [3]float64    // in the order of Kernels
}

// loops holds the loops' buffers: a 100-byte batch and its destination,
// placed by LimitBuffers.
type loops struct {
	in, dst []byte
	mu      sync.Mutex
	sink    uint64 // every loop's results end here, so that no loop is removed
}

const batchLen = 100

func newLoops() *loops {
	batch := make([]byte, batchLen)
	for i := range batch {
		batch[i] = byte(i*7 + 3)
	}
	in, dst := LimitBuffers(batch)
	return &loops{in: in, dst: dst}
}

// LimitBuffers returns a copy of batch and a destination of its length,
// placed alike in every process: the copy on a 4 KiB boundary, the
// destination at the next 64-byte boundary after it; the placement of
// appendpath's limit benchmarks and of the limit loop here. Where a separate
// allocation lands is up to the allocator, and it moves the limit: with the
// destination 3456 to 4032 bytes above the source modulo 4 KiB (3456 is
// where a separate 1 KiB allocation can land) the fused limit at 1 KiB took
// about 20.5 ns of CPU time, with 0 to 1152 bytes 17.5 (4 KiB aliasing
// between the loop's loads and its stores is the likely cause). Right after
// the source, the destination is 128, 1088, 64 and 512 bytes above it
// modulo 4 KiB for batches of 100 B, 1 KiB, 16 KiB and 1 MiB.
func LimitBuffers(batch []byte) (in, dst []byte) {
	const page, line = 4096, 64
	n := (len(batch) + line - 1) / line * line
	buf := make([]byte, page+n+len(batch))
	start := (page - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%page)) % page
	in = buf[start : start+len(batch) : start+len(batch)]
	copy(in, batch)
	return in, buf[start+n : start+n+len(batch) : start+n+len(batch)]
}

// run performs n operations of loop k.
func (l *loops) run(k, n int) {
	switch k {
	case 0:
		var s uint32
		for range n {
			s += codec.Checksum(l.in[codec.CRCStart:])
			copy(l.dst, l.in)
		}
		l.sink += uint64(s)
	case 1:
		var s uint32
		for range n {
			l.mu.Lock()
			s += codec.Checksum(l.in[codec.CRCStart:])
			copy(l.dst, l.in)
			l.mu.Unlock()
		}
		l.sink += uint64(s)
	default:
		l.sink = chain(l.sink, n)
	}
}

// chain is a dependent multiply-add over n steps: its cost is the chain's
// latency, which only the core's clock changes.
//
//go:noinline
func chain(x uint64, n int) uint64 {
	for i := range n {
		x = x*3 + uint64(i)
	}
	return x
}

// slice is the CPU time a slice of one loop is sized for.
const slice = 2 * time.Millisecond

// Sample runs the loops in turn, a slice of each, for d of wall time, and
// calls each (if not nil) with every interval of every as it ends; it
// returns all of them. every is at least one round of the three slices.
func Sample(d, every time.Duration, each func(Interval)) []Interval {
	l := newLoops()
	counts := calibrate(l)
	var out []Interval
	start := time.Now()
	for time.Since(start) < d {
		var cpu [3]time.Duration
		var ops [3]int
		end := time.Now().Add(every)
		for first := true; first || time.Now().Before(end); first = false {
			for k := range Kernels {
				c0 := cputime.Process()
				l.run(k, counts[k])
				cpu[k] += cputime.Process() - c0
				ops[k] += counts[k]
			}
		}
		iv := Interval{At: time.Since(start)}
		for k := range Kernels {
			iv.NsPerOp[k] = float64(cpu[k].Nanoseconds()) / float64(ops[k])
		}
		out = append(out, iv)
		if each != nil {
			each(iv)
		}
	}
	return out
}

// calibrate returns each loop's count of operations for a slice: grown
// until a call takes a tenth of a slice, then scaled to one.
func calibrate(l *loops) [3]int {
	var counts [3]int
	for k := range Kernels {
		n := 64
		for {
			c0 := cputime.Process()
			l.run(k, n)
			used := cputime.Process() - c0
			if used >= slice/10 || n >= 1<<30 {
				counts[k] = max(1, int(float64(n)*float64(slice)/float64(max(used, 1))))
				break
			}
			n *= 2
		}
	}
	return counts
}

// Spread is one loop's figures over a sample's intervals.
type Spread struct {
	Kernel             string
	Fastest, Median    float64 // ns per operation
	Slowest            float64 //
	Ratio              float64 // Slowest / Fastest
	Slow               int     // intervals over Tolerance × Fastest
	Intervals          int     //
	FastMean, SlowMean float64 // ns per operation, over the intervals within and beyond Tolerance × Fastest; 0 where none
}

// Summary is a sample's verdict.
type Summary struct {
	Spreads [3]Spread // in the order of Kernels
	// OneSpeed: no loop's intervals differ by more than Tolerance.
	OneSpeed bool
	// LockedOverLimit is locked / limit in the limit's fast and slow
	// intervals (0 where there are none of a kind): what a ratio of two of
	// the loops becomes with the host's state.
	LockedOverLimit [2]float64
}

// Summarize judges a sample. It needs at least one interval.
func Summarize(ivs []Interval) (Summary, error) {
	if len(ivs) == 0 {
		return Summary{}, fmt.Errorf("hostspeed: no interval to summarize")
	}
	s := Summary{OneSpeed: true}
	for k, name := range Kernels {
		v := make([]float64, len(ivs))
		for i, iv := range ivs {
			if !(iv.NsPerOp[k] > 0) {
				return Summary{}, fmt.Errorf("hostspeed: interval %d (at %v): %s has no time per operation (%v)", i, iv.At, name, iv.NsPerOp[k])
			}
			v[i] = iv.NsPerOp[k]
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		sp := Spread{Kernel: name, Fastest: sorted[0], Slowest: sorted[len(sorted)-1], Median: sorted[(len(sorted)-1)/2], Intervals: len(v)}
		sp.Ratio = sp.Slowest / sp.Fastest
		var fast, slow float64
		for _, x := range v {
			if x > Tolerance*sp.Fastest {
				sp.Slow++
				slow += x
			} else {
				fast += x
			}
		}
		if n := len(v) - sp.Slow; n > 0 {
			sp.FastMean = fast / float64(n)
		}
		if sp.Slow > 0 {
			sp.SlowMean = slow / float64(sp.Slow)
		}
		s.OneSpeed = s.OneSpeed && sp.Slow == 0
		s.Spreads[k] = sp
	}
	lim := s.Spreads[0]
	for kind := range 2 {
		var l, k float64
		n := 0
		for _, iv := range ivs {
			if (iv.NsPerOp[0] > Tolerance*lim.Fastest) == (kind == 1) {
				l += iv.NsPerOp[0]
				k += iv.NsPerOp[1]
				n++
			}
		}
		if n > 0 {
			s.LockedOverLimit[kind] = k / l
		}
	}
	return s, nil
}
