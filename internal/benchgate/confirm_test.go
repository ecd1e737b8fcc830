package benchgate

import (
	"errors"
	"regexp"
	"sort"
	"strings"
	"testing"
)

func parseThresholds(t *testing.T, text string) *Thresholds {
	t.Helper()
	th, err := ParseThresholds(strings.NewReader(text), "th")
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestParseThresholds(t *testing.T) {
	th := parseThresholds(t, "# comment\n\ndefault 7%\n^BenchmarkAppend/strategy=asis 10%\n/impl=model 20\nBenchmarkAppend 2.5%\n")
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"Append/strategy=asis/batch=1KiB", 0.10}, // first matching rule wins
		{"Append/strategy=bitfield", 0.025},
		{"Update/impl=model", 0.20},
		{"ParseVerify", 0.07}, // default
	} {
		if got := th.limit(tc.name, 0.05); got != tc.want {
			t.Errorf("Limit(%q) = %g, want %g", tc.name, got, tc.want)
		}
	}
	if got := parseThresholds(t, "X 1\n").limit("Y", 0.05); got != 0.05 {
		t.Errorf("no default in the file: %g, want the caller's 0.05", got)
	}
	var nilTh *Thresholds
	if got := nilTh.limit("Y", 0.03); got != 0.03 {
		t.Errorf("nil thresholds: %g", got)
	}
}

func TestParseThresholdsErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"default 5%\nBenchmarkX\n", "th:2: want \"PATTERN PCT\""},
		{"BenchmarkX 5 6\n", "th:1: want"},
		{"# c\nBenchmarkX ten%\n", `th:2: "ten%" is not a percentage`},
		{"BenchmarkX -1%\n", `th:1: "-1%" is not a percentage`},
		{"Bench(mark 5\n", "th:1: error parsing regexp"},
		{"default 5\ndefault 6\n", "th:2: a second default"},
	} {
		_, err := ParseThresholds(strings.NewReader(tc.text), "th")
		if !errors.Is(err, ErrThresholds) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestThresholdsApplied(t *testing.T) {
	base := benchText("p", "BenchmarkLoose", spread(1000, 10), 0) + benchText("p", "BenchmarkTight", spread(1000, 10), 0)
	head := benchText("p", "BenchmarkLoose", spread(1150, 10), 0) + benchText("p", "BenchmarkTight", spread(1030, 10), 0)
	// Default 5%: +15% fails, +3% passes.
	r := compareOpt(t, DefaultOptions, base, head)
	if f := r.failures(); len(f) != 1 || f[0].Name != "Loose" {
		t.Fatalf("default thresholds: failures %+v", f)
	}
	// Loose allowed 20%, Tight only 2%: the verdicts swap.
	opt := DefaultOptions
	opt.PerBenchmark = parseThresholds(t, "Loose 20%\ndefault 2%\n")
	r = compareOpt(t, opt, base, head)
	f := r.failures()
	if len(f) != 1 || f[0].Name != "Tight" || !strings.Contains(f[0].Note, "threshold 2.0%") || f[0].Threshold != 0.02 {
		t.Fatalf("file thresholds: failures %+v", f)
	}
	for _, row := range r.Rows {
		if row.Name == "Loose" && row.Unit == "sec/op" && (row.Verdict != Slower || row.Threshold != 0.20) {
			t.Fatalf("Loose row %+v", row)
		}
	}
}

func TestConfirmPatterns(t *testing.T) {
	rows := []Row{
		{Pkg: "a", Name: "Append/strategy=asis/batch=1KiB"},
		{Pkg: "a", Name: "Append/strategy=bitfield/batch=1KiB"},
		{Pkg: "b", Name: "Map"},
		{Pkg: "b", Name: "Map"}, // sec/op and cpu-sec/op of one benchmark
	}
	p := ConfirmPatterns(rows)
	if got, want := p["a"], `^(BenchmarkAppend)$/^(strategy=asis|strategy=bitfield)$/^(batch=1KiB)$`; got != want {
		t.Errorf("a: %s, want %s", got, want)
	}
	if got, want := p["b"], `^(BenchmarkMap)$`; got != want {
		t.Errorf("b: %s, want %s", got, want)
	}
	// Each level must match the way go test matches it.
	for i, lv := range strings.Split(p["a"], "/") {
		name := strings.Split("BenchmarkAppend/strategy=bitfield/batch=1KiB", "/")[i]
		if !regexp.MustCompile(lv).MatchString(name) {
			t.Errorf("level %d %q does not match %q", i, lv, name)
		}
	}
	if regexp.MustCompile(`^(BenchmarkMap)$`).MatchString("BenchmarkMapper") {
		t.Error("pattern not anchored")
	}
}

func TestConfirm(t *testing.T) {
	base := benchText("p", "BenchmarkNoisy", spread(1000, 10), 0) + benchText("p", "BenchmarkReal", spread(1000, 10), 0) +
		benchText("p", "BenchmarkAlloc", spread(1000, 10), 0)
	head := benchText("p", "BenchmarkNoisy", spread(1300, 10), 0) + benchText("p", "BenchmarkReal", spread(1300, 10), 0) +
		benchText("p", "BenchmarkAlloc", spread(1000, 10), 1)
	first := compareOpt(t, DefaultOptions, base, head)
	flagged := first.Flagged()
	if len(flagged) != 2 || flagged[0].Name != "Noisy" || flagged[1].Name != "Real" {
		t.Fatalf("flagged %+v (allocs/op rows are not rerun)", flagged)
	}
	// The rerun: Noisy is back to the base's speed, Real is still slower.
	again := compareOpt(t, DefaultOptions,
		benchText("p", "BenchmarkNoisy", spread(1000, 12), 0)+benchText("p", "BenchmarkReal", spread(1000, 12), 0),
		benchText("p", "BenchmarkNoisy", spread(1001, 12), 0)+benchText("p", "BenchmarkReal", spread(1300, 12), 0))
	r := first.Confirm(again, 12)
	if !r.Confirmed || r.ConfirmRounds != 12 || len(r.Rows) != len(first.Rows) {
		t.Fatalf("confirmed result %+v", r)
	}
	var names []string
	for _, f := range r.failures() {
		names = append(names, f.Name+" "+f.Unit)
	}
	sort.Strings(names)
	if got := strings.Join(names, ", "); got != "Alloc allocs/op, Real sec/op" {
		t.Fatalf("failures after confirmation: %s", got)
	}
	for _, row := range r.Rows {
		switch {
		case row.Name == "Noisy" && row.Unit == "sec/op":
			if row.Verdict == Regression || !strings.HasPrefix(row.Note, "not confirmed by 12 more rounds (first run: +30.0% slower") || row.NBase != 12 {
				t.Errorf("Noisy %+v", row)
			}
		case row.Name == "Real" && row.Unit == "sec/op":
			if !strings.HasPrefix(row.Note, "confirmed by 12 more rounds: +30.0% slower") || !strings.Contains(row.Note, "(first run: +30.0% slower") {
				t.Errorf("Real %+v", row)
			}
		}
	}
	// A flagged row the rerun did not measure stays a failure.
	r = first.Confirm(compareOpt(t, DefaultOptions, benchText("p", "BenchmarkOther", spread(1, 10), 0), benchText("p", "BenchmarkOther", spread(1, 10), 0)), 10)
	if n := len(r.failures()); n != 3 {
		t.Fatalf("unmeasured flagged rows: %d failures, want 3", n)
	}
}
