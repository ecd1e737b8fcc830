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
