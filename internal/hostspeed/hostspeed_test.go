package hostspeed

import (
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/mirrorpath/mirrorpath/codec"
)

// series builds intervals from per-loop values, one interval per index.
func series(limit, locked, chain []float64) []Interval {
	out := make([]Interval, len(limit))
	for i := range limit {
		out[i] = Interval{At: time.Duration(i+1) * 500 * time.Millisecond, NsPerOp: [3]float64{limit[i], locked[i], chain[i]}}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Intervals within Tolerance of the fastest are one speed.
func TestSummarizeOneSpeed(t *testing.T) {
	s, err := Summarize(series(
		[]float64{7.4, 7.2, 8.1, 7.6},
		[]float64{18.3, 18.0, 19.0, 18.4},
		[]float64{0.60, 0.61, 0.65, 0.59},
	))
	if err != nil {
		t.Fatal(err)
	}
	if !s.OneSpeed {
		t.Fatalf("spreads within %.2f judged two speeds: %+v", Tolerance, s.Spreads)
	}
	lim := s.Spreads[0]
	if lim.Kernel != "limit" || lim.Fastest != 7.2 || lim.Slowest != 8.1 || lim.Median != 7.4 || lim.Slow != 0 || lim.Intervals != 4 {
		t.Errorf("limit spread %+v", lim)
	}
	if !near(lim.Ratio, 8.1/7.2) || !near(lim.FastMean, (7.4+7.2+8.1+7.6)/4) || lim.SlowMean != 0 {
		t.Errorf("limit ratio %v, means %v %v", lim.Ratio, lim.FastMean, lim.SlowMean)
	}
	if s.LockedOverLimit[1] != 0 {
		t.Errorf("locked / limit in slow intervals %v with none slow", s.LockedOverLimit[1])
	}
}

// The host's slow state as measured on the AMD EPYC VM: the limit 1.7×
// slower, the locked loop and the chain nearly unchanged. The limit's slow
// intervals are counted, and locked / limit is given for each state from
// the sums of its intervals.
func TestSummarizeTwoSpeeds(t *testing.T) {
	s, err := Summarize(series(
		[]float64{7.5, 12.5, 12.0, 7.5, 13.0},
		[]float64{18.0, 20.0, 20.0, 18.0, 20.0},
		[]float64{0.60, 0.61, 0.62, 0.60, 0.61},
	))
	if err != nil {
		t.Fatal(err)
	}
	if s.OneSpeed {
		t.Fatal("the limit at 7.5 and 13.0 ns judged one speed")
	}
	lim := s.Spreads[0]
	if lim.Slow != 3 || !near(lim.FastMean, 7.5) || !near(lim.SlowMean, 12.5) {
		t.Errorf("limit slow %d, means %v %v; want 3, 7.5, 12.5", lim.Slow, lim.FastMean, lim.SlowMean)
	}
	if s.Spreads[1].Slow != 0 || s.Spreads[2].Slow != 0 {
		t.Errorf("locked or chain counted slow: %+v %+v", s.Spreads[1], s.Spreads[2])
	}
	if !near(s.LockedOverLimit[0], 36.0/15.0) || !near(s.LockedOverLimit[1], 60.0/37.5) {
		t.Errorf("locked / limit %v, want [2.4 1.6]", s.LockedOverLimit)
	}
}

// A slow locked loop or chain alone is not one speed either.
func TestSummarizeAnyLoop(t *testing.T) {
	s, err := Summarize(series([]float64{7.5, 7.5}, []float64{18, 18}, []float64{0.6, 0.9}))
	if err != nil {
		t.Fatal(err)
	}
	if s.OneSpeed || s.Spreads[2].Slow != 1 {
		t.Errorf("chain 0.6 and 0.9 ns: one speed %v, slow %d", s.OneSpeed, s.Spreads[2].Slow)
	}
}

func TestSummarizeRejects(t *testing.T) {
	if _, err := Summarize(nil); err == nil {
		t.Error("no intervals summarized")
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(-1)} {
		_, err := Summarize(series([]float64{7.5, 7.5}, []float64{18, bad}, []float64{0.6, 0.6}))
		if err == nil || !strings.Contains(err.Error(), "interval 1") || !strings.Contains(err.Error(), "locked") {
			t.Errorf("locked %v: error %v, want one naming interval 1 and the locked loop", bad, err)
		}
	}
}

// Sample returns an interval per stretch of every, in order, each with a
// positive time for every loop, and hands each to the callback as it ends.
func TestSample(t *testing.T) {
	var seen []Interval
	ivs := Sample(60*time.Millisecond, 20*time.Millisecond, func(iv Interval) { seen = append(seen, iv) })
	if len(ivs) == 0 || len(seen) != len(ivs) {
		t.Fatalf("%d intervals, %d handed to the callback", len(ivs), len(seen))
	}
	for i, iv := range ivs {
		if iv != seen[i] {
			t.Errorf("interval %d: returned %+v, handed %+v", i, iv, seen[i])
		}
		if i > 0 && iv.At <= ivs[i-1].At {
			t.Errorf("interval %d at %v, not after %v", i, iv.At, ivs[i-1].At)
		}
		for k, v := range iv.NsPerOp {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("interval %d: %s %v ns/op", i, Kernels[k], v)
			}
		}
	}
	if _, err := Summarize(ivs); err != nil {
		t.Error(err)
	}
}

// The loops do the limit's work on the limit's placement: the batch on a
// 4 KiB boundary, its destination at the next cache line, the copy and the
// CRC the same as codec's.
func TestLoops(t *testing.T) {
	l := newLoops()
	if a := uintptr(unsafe.Pointer(unsafe.SliceData(l.in))) % 4096; a != 0 {
		t.Errorf("batch at %d modulo 4 KiB", a)
	}
	if d := uintptr(unsafe.Pointer(unsafe.SliceData(l.dst))) - uintptr(unsafe.Pointer(unsafe.SliceData(l.in))); d != 128 {
		t.Errorf("destination %d bytes above the batch, want 128", d)
	}
	if len(l.in) != batchLen || len(l.dst) != batchLen {
		t.Fatalf("lengths %d, %d", len(l.in), len(l.dst))
	}
	for k := range Kernels[:2] {
		clear(l.dst)
		l.sink = 0
		l.run(k, 3)
		if string(l.dst) != string(l.in) {
			t.Errorf("%s: the batch was not copied", Kernels[k])
		}
		if want := 3 * uint64(codec.Checksum(l.in[codec.CRCStart:])); l.sink != want&0xffffffff {
			t.Errorf("%s: sink %d, want three CRCs %d", Kernels[k], l.sink, want&0xffffffff)
		}
	}
	if got, want := chain(1, 3), uint64(((1*3+0)*3+1)*3+2); got != want {
		t.Errorf("chain(1, 3) = %d, want %d", got, want)
	}
}
