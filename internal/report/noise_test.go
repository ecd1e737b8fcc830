package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// noiseRun builds bench output of asis, barrier and bitfield at one batch
// size, 10 rounds: asis around 100 ns, barrier around barrierNS, bitfield's
// samples spread by ±spread.
func noiseRun(barrierNS, spread float64) string {
	var b strings.Builder
	b.WriteString("pkg: github.com/mirrorpath/mirrorpath/appendpath\n")
	jit := []float64{0, 1, -1, 0.5, -0.5, 1.5, -1.5, 0.2, -0.2, 0.8}
	for i, j := range jit {
		alt := spread
		if i%2 == 1 {
			alt = -spread
		}
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=asis/crc=none/batch=16KiB/producers=1000-2 100 %.2f ns/op\n", 100+j)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=barrier/crc=none/batch=16KiB/producers=1000-2 100 %.2f ns/op\n", barrierNS+j)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=bitfield/crc=patch/batch=16KiB/producers=1000-2 100 %.2f ns/op\n", 110*(1+alt*float64(i%5)/4)+j)
	}
	return b.String()
}

func judge(t *testing.T, txt string) *Noise {
	t.Helper()
	f, err := ParseBench(strings.NewReader(txt), "noise.txt")
	if err != nil {
		t.Fatal(err)
	}
	return f.judge()
}

func TestJudgeSteady(t *testing.T) {
	n := judge(t, noiseRun(100, 0))
	if n.Noisy || n.Checked != 3 || len(n.Canary) != 1 {
		t.Fatalf("steady run judged %+v", n)
	}
	if !strings.HasPrefix(n.Verdict(), "steady") {
		t.Fatalf("verdict %q", n.Verdict())
	}
}

func TestJudgeCanaryOff(t *testing.T) {
	n := judge(t, noiseRun(110, 0)) // barrier 10 % above asis: the A/A pair disagrees
	if !n.Noisy || len(n.Reasons) != 1 || !strings.Contains(n.Reasons[0], "canary barrier/asis") {
		t.Fatalf("canary 1.10 judged %+v", n)
	}
	if !strings.HasPrefix(n.Verdict(), "NOISY") {
		t.Fatalf("verdict %q", n.Verdict())
	}
}

func TestJudgeWideInterval(t *testing.T) {
	n := judge(t, noiseRun(100, 0.4)) // bitfield's samples spread by up to ±40 %
	if !n.Noisy || len(n.Reasons) != 1 || !strings.Contains(n.Reasons[0], "bitfield") || !strings.Contains(n.Reasons[0], "wider than ±10%") {
		t.Fatalf("wide bitfield interval judged %+v", n)
	}
	tb := figs(t, noiseRun(100, 0.4)).headline().strategyOverAsis()
	if c := ratioCell(tb, "bitfield · patch · producers=1000", "16KiB"); !strings.HasSuffix(c, "‼") {
		t.Fatalf("wide cell rendered %q", c)
	}
}

func TestJudgeNoCanary(t *testing.T) {
	var b strings.Builder
	for _, line := range strings.Split(noiseRun(100, 0), "\n") {
		if !strings.Contains(line, "strategy=barrier") {
			b.WriteString(line + "\n")
		}
	}
	if n := judge(t, b.String()); !n.Noisy || !strings.Contains(strings.Join(n.Reasons, "\n"), "no A/A canary") {
		t.Fatalf("run without canary judged %+v", n)
	}
}

func figs(t *testing.T, txt string) *Figures {
	t.Helper()
	fig, err := ParseBench(strings.NewReader(txt), "noise.txt")
	if err != nil {
		t.Fatal(err)
	}
	return fig
}

// TestJudgeBusyMachine: a run whose ratios are all steady is still NOISY
// when other threads were ready to run beside it, more than
// maxOthersPerCPU a CPU on average: two busy loops beside the run's own
// extra threads on two CPUs are, the run's own extra threads on a quiet
// machine are not.
func TestJudgeBusyMachine(t *testing.T) {
	for _, tc := range []struct {
		q     *RunQueue
		noisy bool
	}{
		{nil, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 0.1, Max: 2}, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 1.6, Max: 4}, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 2.0, Max: 4}, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 2.01, Max: 4}, true},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 3.6, Max: 6}, true},
		{&RunQueue{CPUs: 2, Samples: 0}, false},
	} {
		r := &Report{Figures: figs(t, noiseRun(100, 0)), RunQueue: tc.q}
		n := r.Noise()
		if n.Noisy != tc.noisy {
			t.Errorf("run queue %+v: noisy %v, want %v (%q)", tc.q, n.Noisy, tc.noisy, n.Reasons)
		}
		if tc.noisy && (len(n.Reasons) != 1 || !strings.HasPrefix(n.Reasons[0], "machine busy")) {
			t.Errorf("run queue %+v: reasons %q, want the busy machine's", tc.q, n.Reasons)
		}
	}
}

// TestRoundsWithZeroMetric: output in interleaved rounds pairs its ratios
// whatever units a configuration reports, a metric that is 0 in every
// round (the Store's gc-cpu-ns/op) included, and whichever package comes
// first in a round.
func TestRoundsWithZeroMetric(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\n")
	for r := range 10 {
		slow := 1.0
		if r%3 == 0 {
			slow = 1.8 // a round the machine ran slow
		}
		fmt.Fprintf(&b, "pkg: github.com/mirrorpath/mirrorpath/appendpath\n")
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=asis/crc=none/batch=1KiB/producers=1000-2\t1000\t%.2f ns/op\t9.9 MB/s\t%.2f cpu-ns/op\n", 100*slow, 100*slow)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=barrier/crc=none/batch=1KiB/producers=1000-2\t1000\t%.2f ns/op\t9.9 MB/s\t%.2f cpu-ns/op\n", (100+float64(r%2))*slow, (100+float64(r%2))*slow)
		fmt.Fprintf(&b, "pkg: github.com/mirrorpath/mirrorpath/psm\n")
		fmt.Fprintf(&b, "BenchmarkUpdate/impl=store/producers=1000-2\t1000\t%.2f ns/op\t%.2f cpu-ns/op\t0.00 gc-cpu-ns/op\n", 30*slow, 30*slow)
		fmt.Fprintf(&b, "BenchmarkUpdate/impl=model/producers=1000-2\t1000\t%.2f ns/op\t%.2f cpu-ns/op\t%.2f gc-cpu-ns/op\n", 900*slow, 900*slow, 50.0)
	}
	f := figs(t, b.String())
	if !f.rounds {
		t.Fatal("output in interleaved rounds read as unordered")
	}
	n := f.judge()
	if len(n.Canary) != 1 || !n.Canary[0].Paired || n.Canary[0].HalfWidth() > 0.02 {
		t.Errorf("canary %+v, want paired and the slow rounds cancelled", n.Canary)
	}
	if r := f.cpu().storeOverModel().Intervals[[2]string{"store/model", "1000"}]; !r.Paired || r.HalfWidth() > 0.01 {
		t.Errorf("store/model %+v, want paired and the slow rounds cancelled", r)
	}
}

// TestRoundsPairAsRead: a ratio pairs the i-th result of each side as the
// file lists them, not the i-th smallest. Here the numerator rises round by
// round while the denominator falls: paired by round the ratios run from
// 0.53 to 1.9 and the interval is wide; sides sorted before pairing would
// give 1.00 in every round and an interval of nothing. The samples keep the
// order read.
func TestRoundsPairAsRead(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\npkg: github.com/mirrorpath/mirrorpath/appendpath\n")
	for r := range 10 {
		up, down := 100+10*float64(r), 190-10*float64(r)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=asis/crc=none/batch=1KiB/producers=1000-2\t1000\t%.2f ns/op\t%.2f cpu-ns/op\n", down, down)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=barrier/crc=none/batch=1KiB/producers=1000-2\t1000\t%.2f ns/op\t%.2f cpu-ns/op\n", up, up)
	}
	f := figs(t, b.String())
	if !f.rounds {
		t.Fatal("output in interleaved rounds read as unordered")
	}
	keys := f.Configs()
	if len(keys) != 2 {
		t.Fatalf("%d configurations, want 2", len(keys))
	}
	if got := f.Samples(keys[0], "sec/op"); len(got) != 10 || math.Abs(got[0]-190e-9) > 1e-12 || math.Abs(got[9]-100e-9) > 1e-12 {
		t.Errorf("asis samples %v, want 190 ns down to 100 ns as read", got)
	}
	r := f.Ratio(keys[1], keys[0], "sec/op", 0.95)
	if !r.Paired || r.Lo > 0.9 || r.Hi < 1.1 {
		t.Errorf("barrier / asis = %+v, want paired by round with an interval from below 0.9 to above 1.1", r)
	}
	n := f.judge()
	if len(n.Canary) != 1 || n.Canary[0].HalfWidth() < 0.1 {
		t.Errorf("canary %+v, want its interval wider than ±10 %%", n.Canary)
	}
}

// TestJudgeHost: the rounds of the 100-byte limit (in the headline view,
// CPU time here) name the host's two speeds when the slowest is over
// hostspeed.Tolerance times the fastest, count the slow rounds, and change
// no verdict; within the tolerance, or at another batch size, nothing.
func TestJudgeHost(t *testing.T) {
	run := func(limits ...float64) *Noise {
		var b strings.Builder
		b.WriteString(noiseRun(100, 0))
		for _, ns := range limits {
			fmt.Fprintf(&b, "BenchmarkLimit/batch=100B-2 100 %.2f ns/op %.2f cpu-ns/op\n", ns*1.01, ns)
			fmt.Fprintf(&b, "BenchmarkLimit/batch=16KiB-2 100 %.2f ns/op %.2f cpu-ns/op\n", 1000*ns, 1000*ns)
		}
		return judge(t, b.String())
	}
	n := run(7.5, 12.9, 7.6, 13.5, 7.4, 7.5, 12.0, 7.7, 7.5, 7.9)
	want := "the 100-byte limit ran 7.4 to 13.5 ns a round (1.82×), over 1.25× its fastest in 3 of 10 rounds: the core ran it at two speeds"
	if !strings.HasPrefix(n.Host, want) {
		t.Errorf("Host %q\nwant it to start %q", n.Host, want)
	}
	if n.Noisy != run(7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5).Noisy {
		t.Error("the host's line changed the verdict")
	}
	if n := run(7.5, 9.2, 7.6, 8.0, 7.4, 7.5, 9.1, 7.7, 7.5, 7.9); n.Host != "" {
		t.Errorf("rounds within 1.25× of the fastest gave %q", n.Host)
	}
	if n := judge(t, noiseRun(100, 0)); n.Host != "" {
		t.Errorf("no limit rounds gave %q", n.Host)
	}
}

// TestJudgeHostLockedByState: with the limits in rounds, the Host line
// gives the locked limit over the limit apart in the fast and the slow
// rounds, the medians of the rounds' ratios.
func TestJudgeHostLockedByState(t *testing.T) {
	var b strings.Builder
	b.WriteString("pkg: github.com/mirrorpath/mirrorpath/appendpath\n")
	limit := []float64{7.5, 13, 7.5, 13, 7.6}
	locked := []float64{18, 20.8, 18.2, 20.8, 18}
	for i := range limit {
		fmt.Fprintf(&b, "BenchmarkLimit/batch=100B-2 100 %.2f ns/op %.2f cpu-ns/op\n", limit[i], limit[i])
		fmt.Fprintf(&b, "BenchmarkLimitLocked/batch=100B-2 100 %.2f ns/op %.2f cpu-ns/op\n", locked[i], locked[i])
	}
	n := judge(t, b.String())
	if want := "follow the share of rounds run slow: the locked limit over the limit was 2.40 in the fast rounds and 1.60 in the slow (medians)"; !strings.HasSuffix(n.Host, want) {
		t.Errorf("Host %q\nwant it to end %q", n.Host, want)
	}
}
