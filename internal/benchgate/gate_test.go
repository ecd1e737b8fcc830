package benchgate

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

// benchText renders synthetic go test -bench output: one line per ns value.
func benchText(pkg, name string, ns []float64, allocs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\n", pkg)
	for _, v := range ns {
		fmt.Fprintf(&b, "%s-2\t1000\t%.1f ns/op\t%d B/op\t%d allocs/op\n", name, v, 16*allocs, allocs)
	}
	b.WriteString("PASS\nok  \t" + pkg + "\t1.0s\n")
	return b.String()
}

// spread returns n values around center with a deterministic ±1% jitter.
func spread(center float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * (1 + 0.01*float64((i*7)%5-2)/2)
	}
	return out
}

func compare(t *testing.T, base, head string) *Result {
	t.Helper()
	return compareOpt(t, DefaultOptions, base, head)
}

// compareOpt compares base with head, both go test -bench output, under opt.
func compareOpt(t *testing.T, opt Options, base, head string) *Result {
	t.Helper()
	c := NewCollector()
	if err := c.Add(Base, strings.NewReader(base), "base"); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(Head, strings.NewReader(head), "head"); err != nil {
		t.Fatal(err)
	}
	r, err := c.Compare(opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func row(t *testing.T, r *Result, unit string) Row {
	t.Helper()
	for _, x := range r.Rows {
		if x.Unit == unit {
			return x
		}
	}
	t.Fatalf("no %s row in %+v", unit, r.Rows)
	return Row{}
}

func TestCompareAA(t *testing.T) {
	s := spread(1000, 10)
	r := compare(t, benchText("p", "BenchmarkX", s, 0), benchText("p", "BenchmarkX", s, 0))
	if r.Failed() {
		t.Fatalf("identical samples fail: %+v", r.failures())
	}
	if v := row(t, r, "sec/op").Verdict; v != Same {
		t.Fatalf("verdict %v, want ~", v)
	}
}

func TestCompareSlowdown(t *testing.T) {
	r := compare(t, benchText("p", "BenchmarkX", spread(1000, 10), 0), benchText("p", "BenchmarkX", spread(1200, 10), 0))
	x := row(t, r, "sec/op")
	if x.Verdict != Regression || !r.Failed() {
		t.Fatalf("20%% slowdown: verdict %v, failed %v", x.Verdict, r.Failed())
	}
	if x.P >= 0.01 || x.Delta < 0.19 || x.Delta > 0.21 {
		t.Fatalf("p=%g delta=%g", x.P, x.Delta)
	}
	if x.NBase != 10 || x.NHead != 10 {
		t.Fatalf("n=%d+%d", x.NBase, x.NHead)
	}
}

func TestCompareSmallSlowdownPasses(t *testing.T) {
	// Significant (fully separated samples) but 3% < 5% threshold.
	r := compare(t, benchText("p", "BenchmarkX", spread(1000, 10), 0), benchText("p", "BenchmarkX", spread(1030, 10), 0))
	x := row(t, r, "sec/op")
	if x.Verdict != Slower || r.Failed() {
		t.Fatalf("3%% slowdown: verdict %v failed %v p=%g", x.Verdict, r.Failed(), x.P)
	}
}

func TestCompareNotSignificantPasses(t *testing.T) {
	// A large median shift with too few samples cannot reach p < 0.01.
	r := compare(t, benchText("p", "BenchmarkX", spread(1000, 3), 0), benchText("p", "BenchmarkX", spread(2000, 3), 0))
	x := row(t, r, "sec/op")
	if x.P < 0.01 || x.Verdict != Same || r.Failed() {
		t.Fatalf("n=3: p=%g verdict %v", x.P, x.Verdict)
	}
}

func TestCompareSpeedup(t *testing.T) {
	r := compare(t, benchText("p", "BenchmarkX", spread(1000, 10), 0), benchText("p", "BenchmarkX", spread(500, 10), 0))
	if v := row(t, r, "sec/op").Verdict; v != Faster || r.Failed() {
		t.Fatalf("speedup: verdict %v", v)
	}
}

func TestCompareAllocIncreaseFails(t *testing.T) {
	s := spread(1000, 10)
	r := compare(t, benchText("p", "BenchmarkX", s, 0), benchText("p", "BenchmarkX", s, 1))
	x := row(t, r, "allocs/op")
	if x.Verdict != Regression || !strings.Contains(x.Note, "allocs/op rose from 0 to 1") {
		t.Fatalf("alloc increase: %+v", x)
	}
	if row(t, r, "sec/op").Verdict == Regression {
		t.Fatal("time row fails on equal samples")
	}
	// B/op from 0 to 16 is significantly worse but not gated.
	if b := row(t, r, "B/op"); b.Verdict != Slower || !math.IsInf(b.Delta, 1) {
		t.Fatalf("B/op row %+v", b)
	}
	// A decrease passes.
	r = compare(t, benchText("p", "BenchmarkX", s, 2), benchText("p", "BenchmarkX", s, 1))
	if r.Failed() {
		t.Fatalf("alloc decrease fails: %+v", r.failures())
	}
}

func TestCompareMissingAndPackages(t *testing.T) {
	base := benchText("a", "BenchmarkOld", spread(10, 10), 0) + benchText("b", "BenchmarkX", spread(10, 10), 0)
	head := benchText("a", "BenchmarkNew", spread(10, 10), 0) + benchText("b", "BenchmarkX", spread(30, 10), 0)
	r := compare(t, base, head)
	var missing, fails int
	for _, x := range r.Rows {
		switch x.Verdict {
		case Missing:
			missing++
		case Regression:
			fails++
			if x.Pkg != "b" || x.Name != "X" {
				t.Fatalf("wrong failing row %+v", x)
			}
		}
	}
	// Old and New: sec/op, B/op, allocs/op each.
	if missing != 6 || fails != 1 {
		t.Fatalf("missing=%d fails=%d", missing, fails)
	}
}

func TestCompareEmpty(t *testing.T) {
	c := NewCollector()
	c.Add(Base, strings.NewReader("PASS\n"), "base")
	if _, err := c.Compare(DefaultOptions); !errors.Is(err, ErrNoResults) {
		t.Fatalf("err = %v", err)
	}
}

func TestCompareSubBenchmarksKeptApart(t *testing.T) {
	base := benchText("p", "BenchmarkA/batch=1KiB", spread(10, 10), 0) + benchText("p", "BenchmarkA/batch=16KiB", spread(100, 10), 0)
	head := benchText("p", "BenchmarkA/batch=1KiB", spread(10, 10), 0) + benchText("p", "BenchmarkA/batch=16KiB", spread(100, 10), 0)
	r := compare(t, base, head)
	if r.Failed() || len(r.Rows) != 6 {
		t.Fatalf("rows=%d failed=%v", len(r.Rows), r.Failed())
	}
}

func TestWriteTextAndCSV(t *testing.T) {
	r := compare(t, benchText("p", "BenchmarkX", spread(1000, 10), 0), benchText("p", "BenchmarkX", spread(1500, 10), 1))
	var txt bytes.Buffer
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg: p", "sec/op", "+50.00%", "gate: FAIL (2 of 3 rows)", "allocs/op rose"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	var cb bytes.Buffer
	if err := r.WriteCSV(&cb); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || recs[0][0] != "pkg" {
		t.Fatalf("csv = %q", recs)
	}
	for _, rec := range recs[1:] {
		if rec[2] == "sec/op" && (rec[9] != "FAIL" || !strings.HasPrefix(rec[3], "1.0000") || !strings.HasPrefix(rec[5], "1.5e-06")) {
			t.Fatalf("sec/op record %q", rec)
		}
	}
}

func TestOrderInterleaves(t *testing.T) {
	var got []Side
	for i := 0; i < 4; i++ {
		o := order(i)
		got = append(got, o[0], o[1])
	}
	want := []Side{Base, Head, Head, Base, Base, Head, Head, Base}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestPairs(t *testing.T) {
	p, ob, oh := Pairs([]Binary{{ImportPath: "a"}, {ImportPath: "b"}}, []Binary{{ImportPath: "b"}, {ImportPath: "c"}})
	if len(p) != 1 || p[0].Base.ImportPath != "b" || fmt.Sprint(ob) != "[a]" || fmt.Sprint(oh) != "[c]" {
		t.Fatalf("pairs %v only base %v only head %v", p, ob, oh)
	}
}

// cpuText renders results with a wall time that does not move and a cpu-ns/op
// metric that does.
func cpuText(cpu []float64) string {
	var b strings.Builder
	b.WriteString("pkg: p\n")
	for i, v := range cpu {
		fmt.Fprintf(&b, "BenchmarkX-2\t1000\t%.1f ns/op\t%.1f cpu-ns/op\t0 B/op\t0 allocs/op\n", 1000*(1+0.01*float64(i%3)), v)
	}
	return b.String()
}

func TestCompareCPUTime(t *testing.T) {
	r := compare(t, cpuText(spread(800, 10)), cpuText(spread(1000, 10)))
	x := row(t, r, "cpu-sec/op")
	if x.Verdict != Regression || !strings.Contains(x.Note, "+25.0% slower") {
		t.Fatalf("cpu-ns/op +25%%: %+v", x)
	}
	if w := row(t, r, "sec/op"); w.Verdict == Regression {
		t.Fatalf("wall row fails on equal samples: %+v", w)
	}
	if r := compare(t, cpuText(spread(800, 10)), cpuText(spread(820, 10))); r.Failed() {
		t.Fatalf("cpu-ns/op +2.5%% fails: %+v", r.failures())
	}
}
