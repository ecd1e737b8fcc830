package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBench writes a go test -bench output with n rounds of two
// configurations, the second's times twice the first's (the wall time a
// little off, so the units differ).
func writeBench(t *testing.T, n int, extra string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example\n")
	for range n {
		b.WriteString("BenchmarkAppend/strategy=asis/batch=16KiB-2 \t 1000\t 101 ns/op\t 100 cpu-ns/op\t 0 B/op\n")
		b.WriteString("BenchmarkAppend/strategy=bitfield/batch=16KiB-2 \t 1000\t 202 ns/op\t 200 cpu-ns/op\t 0 B/op\n")
	}
	b.WriteString(extra)
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runRatioArgs(args ...string) (int, string, string) {
	var out, errw bytes.Buffer
	code := mainArgs(append([]string{"ratio"}, args...), &out, &errw)
	return code, out.String(), errw.String()
}

// TestRatioOfTwoConfigurations: each side's samples are all equal, the
// numerator's twice the denominator's, so the ratio of medians is 2 and so
// is every bootstrap ratio; the output is in rounds, so the ratio is paired
// by round; the default unit is CPU time, and the configuration names lose
// their -GOMAXPROCS suffix.
func TestRatioOfTwoConfigurations(t *testing.T) {
	path := writeBench(t, 10, "")
	code, out, errs := runRatioArgs("--num", "bitfield", "--den", "asis", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "BenchmarkAppend/strategy=bitfield/batch=16KiB / BenchmarkAppend/strategy=asis/batch=16KiB = 2.000 [2.000, 2.000] (95 % bootstrap interval), paired by round, cpu-sec/op, n = 10 + 10\n"
	if out != want {
		t.Fatalf("got  %q\nwant %q", out, want)
	}
	if code, out, _ := runRatioArgs("--num", "asis", "--den", "bitfield", "--unit", "sec/op", path); code != 0 || !strings.Contains(out, "= 0.500 [0.500, 0.500]") || !strings.Contains(out, ", sec/op,") {
		t.Fatalf("inverse in sec/op: exit %d, %q", code, out)
	}
}

// A raw output kept compressed (results/ gzips its large ones) gives the
// same ratio as the plain file; a file that is not gzip is an error naming it.
func TestRatioReadsGzip(t *testing.T) {
	path := writeBench(t, 10, "")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	gz := path + ".gz"
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain, _ := runRatioArgs("--num", "bitfield", "--den", "asis", path)
	code, got, errs := runRatioArgs("--num", "bitfield", "--den", "asis", gz)
	if code != 0 || got != plain {
		t.Fatalf("gzip: exit %d, %q (stderr %q); plain %q", code, got, errs, plain)
	}
	bad := filepath.Join(t.TempDir(), "bench.txt.gz")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runRatioArgs("--num", "bitfield", "--den", "asis", bad); code != 1 || !strings.Contains(errs, bad) || !strings.Contains(errs, "gzip") {
		t.Fatalf("not gzip: exit %d, stderr %q", code, errs)
	}
}

// TestRatioIntervalWidens: a spread sample gives an interval around its
// ratio, not a point.
func TestRatioIntervalWidens(t *testing.T) {
	var b strings.Builder
	for i := range 12 {
		fmt.Fprintf(&b, "BenchmarkX/a-2 1 %d ns/op\nBenchmarkX/b-2 1 %d ns/op\n", 100+7*(i%5), 120+11*(i%4))
	}
	path := filepath.Join(t.TempDir(), "b.txt")
	os.WriteFile(path, []byte(b.String()), 0o644)
	code, out, errs := runRatioArgs("--num", "X/b", "--den", "X/a", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var c, lo, hi float64
	if _, err := fmt.Sscanf(out[strings.Index(out, "= ")+2:], "%f [%f, %f]", &c, &lo, &hi); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if !(lo < c && c < hi) {
		t.Fatalf("interval [%v, %v] does not bound %v: %q", lo, hi, c, out)
	}
}

// TestRatioErrors: what cannot give one honest ratio is refused with a
// message that says why, exit 1 for the input and 2 for the usage.
func TestRatioErrors(t *testing.T) {
	path := writeBench(t, 3, "")
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no flags", []string{path}, 2, "--num and --den are required"},
		{"no file", []string{"--num", "a", "--den", "b"}, 2, "no benchmark output FILE"},
		{"bad regexp", []string{"--num", "(", "--den", "asis", path}, 2, "--num: error parsing regexp"},
		{"bad confidence", []string{"--num", "bitfield", "--den", "asis", "--confidence", "1", path}, 2, "not between 0 and 1"},
		{"no match", []string{"--num", "negate", "--den", "asis", path}, 1, `--num "negate" matches no benchmark`},
		{"two matches", []string{"--num", "16KiB", "--den", "asis", path}, 1, "matches 2 benchmarks, not one"},
		{"missing unit", []string{"--num", "bitfield", "--den", "asis", "--unit", "allocs/op", path}, 1, "reports no allocs/op (it reports B/op, cpu-sec/op, sec/op)"},
		{"zero median", []string{"--num", "bitfield", "--den", "asis", "--unit", "B/op", path}, 1, "is 0"},
		{"missing file", []string{"--num", "bitfield", "--den", "asis", path + ".none"}, 1, "no such file"},
	} {
		code, _, errs := runRatioArgs(c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%s: exit %d, %q; want exit %d with %q", c.name, code, errs, c.code, c.msg)
		}
	}
	bad := writeBench(t, 3, "BenchmarkAppend/strategy=asis/batch=16KiB-2 \t notanumber ns/op\n")
	if code, _, errs := runRatioArgs("--num", "bitfield", "--den", "asis", bad); code != 1 || !strings.Contains(errs, "bench.txt:") {
		t.Errorf("malformed line: exit %d, %q; want exit 1 naming the file and line", code, errs)
	}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, []byte("goos: linux\n"), 0o644)
	if code, _, errs := runRatioArgs("--num", "a", "--den", "b", empty); code != 1 || !strings.Contains(errs, "no benchmark results") {
		t.Errorf("empty: exit %d, %q", code, errs)
	}
}

// TestRatioPairsOnlyRounds: the same samples listed one configuration after
// the other (go test -count N, not interleaved rounds) are not paired.
func TestRatioPairsOnlyRounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\npkg: example\n")
	for _, line := range []string{
		"BenchmarkAppend/strategy=asis/batch=16KiB-2 \t 1000\t 100 ns/op\n",
		"BenchmarkAppend/strategy=bitfield/batch=16KiB-2 \t 1000\t 200 ns/op\n",
	} {
		for range 8 {
			b.WriteString(line)
		}
	}
	path := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runRatioArgs("--num", "bitfield", "--den", "asis", path)
	if code != 0 || !strings.Contains(out, "= 2.000 [2.000, 2.000]") || strings.Contains(out, "paired") {
		t.Fatalf("exit %d, %q %s", code, out, errs)
	}
}
