package report

import (
	"fmt"
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
// maxOthersPerCPU a CPU on average: two busy loops on two CPUs are, a
// quiet machine's occasional thread is not.
func TestJudgeBusyMachine(t *testing.T) {
	for _, tc := range []struct {
		q     *RunQueue
		noisy bool
	}{
		{nil, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 0.1, Max: 2}, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 0.5, Max: 3}, false},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 0.51, Max: 3}, true},
		{&RunQueue{CPUs: 2, Samples: 600, Others: 2.0, Max: 3}, true},
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
