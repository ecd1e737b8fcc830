package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/report"
	"github.com/mirrorpath/mirrorpath/scenario"
)

// runWith is `mirrorpath run args` with its scenario catalog run by
// catalog, a stand-in for the simulator.
func runWith(catalog catalogRunner, args []string, stdout, stderr io.Writer) int {
	return runCommand(catalog)(args, stdout, stderr)
}

func TestRunDegradesAndFindings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "x.scn"), []byte("#\n"), 0o644)

	// An unmet expectation is a finding: exit 1.
	unmet := func(files []string, w io.Writer) error {
		io.WriteString(w, `{"file":"x.scn","strategy":"negate","violations":[{"code":"LAT"}],"expectations":[{"held":false}]}`+"\n")
		return nil
	}
	out := filepath.Join(t.TempDir(), "o")
	var stdout, stderr bytes.Buffer
	if code := runWith(unmet, []string{"--dir", dir, "--out", out, "--no-bench"}, &stdout, &stderr); code != 1 {
		t.Fatalf("unmet expectation: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "x.scn negate") {
		t.Errorf("stderr does not name the unmet expectation:\n%s", stderr.String())
	}

	// A panic in the simulator is reported, not propagated: exit 1, the
	// reason on stderr and in the report, the benchmarks not run.
	panics := func(files []string, w io.Writer) error { panic("boom") }
	stdout.Reset()
	stderr.Reset()
	if code := runWith(panics, []string{"--dir", dir, "--out", out}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "scenario run panicked: boom") {
		t.Fatalf("panicking scenario run: exit %d\n%s", code, stderr.String())
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"scenario run panicked: boom", "benchmarks not run: the scenario catalog failed", "No scenario results"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

func TestRunArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-h"}, 0, "-full"},
		{[]string{"run", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"run", "--count", "-1"}, 2, "--count must be positive"},
		{[]string{"run", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"run", "--dir", t.TempDir()}, 2, "holds no go.mod"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

// TestRunFixedCounts: the producer-state updates at 100,000 and 1,000,000
// producers run a fixed number of updates in both go test selections, at
// most one lap of a million producers, and the report says so under --full;
// the default run is measured interleaved in slices and says that instead;
// --bench and --benchtime apply to every pattern.
func TestRunFixedCounts(t *testing.T) {
	for _, full := range []bool{false, true} {
		pats := runQuickPatterns
		if full {
			pats = runFullPatterns
		}
		if !slices.Contains(pats, runLargeUpdates) {
			t.Errorf("full=%v: %q not in the selection", full, runLargeUpdates)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(runFixedBenchtime[full], "x"))
		if err != nil || n < 100000 || n > 1000000 {
			t.Errorf("full=%v: fixed -benchtime %q, want a count of 100,000 to 1,000,000", full, runFixedBenchtime[full])
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	for _, tc := range []struct {
		args        []string
		fixed       string // the fixed count the settings say, if any
		interleaved bool
	}{{nil, "", true}, {[]string{"--full", "--count", "1"}, "1000000x", false}, {[]string{"--bench", "Update"}, "", false},
		{[]string{"--benchtime", "50ms"}, "", false}, {[]string{"--count", "3"}, "", true}} {
		out := filepath.Join(t.TempDir(), "o")
		args := append([]string{"run", "--dir", dir, "--out", out, "--no-scenarios", "--pkg", "./absent"}, tc.args...)
		if code := mainArgs(args, io.Discard, io.Discard); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		rep, err := report.LoadMeta(out)
		if err != nil {
			t.Fatal(err)
		}
		settings := strings.Join(rep.Settings, "\n")
		if got := strings.Contains(settings, "at a fixed `-benchtime"); got != (tc.fixed != "") || got && !strings.Contains(settings, "at a fixed `-benchtime "+tc.fixed+"`") {
			t.Errorf("%v: settings %q, want the fixed count %q said", args, rep.Settings, tc.fixed)
		}
		if got := strings.Contains(settings, "slices of about 2ms a round, alternating within a process"); got != tc.interleaved {
			t.Errorf("%v: settings %q, want the interleaved slices said: %v", args, rep.Settings, tc.interleaved)
		}
	}
}

// TestRunBadInput: run stops with exit 2 and a one-line reason on input it
// cannot use, before measuring anything (docs/measuring.md, "Exit status").
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	os.MkdirAll(filepath.Join(dir, "broken"), 0o755)
	os.WriteFile(filepath.Join(dir, "broken", "x.scn"), []byte("cluster A\nfrobnicate A\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "file.scn"), []byte("cluster A\n"), 0o644)
	out := filepath.Join(t.TempDir(), "o")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing catalog", []string{"--scenarios", "absent"}, []string{"--scenarios absent", "no such file or directory"}},
		{"catalog is a file", []string{"--scenarios", "file.scn"}, []string{"--scenarios file.scn: not a directory"}},
		{"empty catalog", []string{"--scenarios", "empty"}, []string{"--scenarios empty: no *.scn file"}},
		{"catalog file that does not parse", []string{"--scenarios", "broken"}, []string{"scenario catalog:", "x.scn:2", "frobnicate"}},
		{"benchtime not a duration", []string{"--benchtime", "soon"}, []string{`--benchtime "soon"`, "positive duration"}},
		{"benchtime zero", []string{"--benchtime", "0s"}, []string{`--benchtime "0s"`}},
		{"benchtime bad count", []string{"--benchtime", "-3x"}, []string{`--benchtime "-3x"`, "count of iterations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"run", "--dir", dir, "--out", out, "--no-bench"}, tc.args...)
			if slices.Contains(tc.args, "--benchtime") {
				args = append([]string{"run", "--dir", dir, "--out", out}, tc.args...)
			}
			code := mainArgs(args, &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit %d, want 2\n%s", code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestFailLines: a go test failure is explained by its failure lines, and
// an output without any (go test refusing a flag) by its first lines, never
// by "(no output)".
func TestFailLines(t *testing.T) {
	flagErr := "benchgate: run failed: x/psm: exit status 2\ninvalid value \"soon\" for flag -test.benchtime: parse error\nUsage of psm.test:\n"
	if got := failLines(flagErr, 2); !strings.Contains(got, `invalid value "soon" for flag -test.benchtime`) {
		t.Errorf("flag error: %q", got)
	}
	benchFail := "exit status 1\ngoos: linux\n--- FAIL: BenchmarkX\n    x_test.go:12: boom\nFAIL\n"
	if got := failLines(benchFail, 4); got != "--- FAIL: BenchmarkX / x_test.go:12: boom / FAIL" {
		t.Errorf("benchmark failure: %q", got)
	}
}

// TestRunMatrixHasEveryStrategy: run's verdict matrix is computed by
// package scenario (runCatalog), so it holds every strategy the simulator knows, in
// pid.Strategies order, whatever the catalog holds.
func TestRunMatrixHasEveryStrategy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	scn, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "01-local-pid-reuse.scn"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scenarios", "01-local-pid-reuse.scn"), scn, 0o644)
	out := filepath.Join(dir, "results", "tmp", "run")
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"run", "--dir", dir, "--no-bench"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if all := scenario.DefaultOptions().Strategies(); rep.Matrix == nil || !slices.Equal(rep.Matrix.Strategies, all) {
		t.Fatalf("matrix strategies %v, want %v", rep.Matrix, all)
	}
	jl, _ := os.ReadFile(filepath.Join(out, report.ScenarioFile))
	if bytes.Contains(jl, []byte(dir)) {
		t.Errorf("scenarios.jsonl names the machine's path %s", dir)
	}
	if bytes.Contains(jl, []byte(`"options"`)) || !bytes.Contains(jl, []byte(`"violations"`)) {
		t.Errorf("scenarios.jsonl keeps the options blocks, or lost the verdicts:\n%.400s", jl)
	}
}

// TestRunLeavesCheckoutClean: a plain `run` writes only under results/tmp/
// (which .gitignore lists) and says where; the committed results/run/ and
// the README are left alone.
func TestRunLeavesCheckoutClean(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "x.scn"), []byte("#\n"), 0o644)
	catalog := func(files []string, w io.Writer) error {
		io.WriteString(w, `{"file":"x.scn","strategy":"negate","violations":[]}`+"\n")
		return nil
	}
	var stdout, stderr bytes.Buffer
	if code := runWith(catalog, []string{"--dir", dir, "--no-bench"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var written []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			written = append(written, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, f := range written {
		if f != "go.mod" && f != "scenarios/x.scn" && !strings.HasPrefix(f, "results/tmp/run/") {
			t.Errorf("run wrote %s outside results/tmp/", f)
		}
	}
	if !slices.Contains(written, "results/tmp/run/report.md") {
		t.Errorf("no results/tmp/run/report.md among %v", written)
	}
	if want := "run: results in " + filepath.Join("results", "tmp", "run") + string(filepath.Separator); !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout does not end with %q:\n%s", want, stdout.String())
	}
	ignore, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil || !slices.Contains(strings.Split(string(ignore), "\n"), "/results/tmp/") {
		t.Errorf(".gitignore does not list /results/tmp/ (err %v)", err)
	}
}

// TestRunReadme: --readme rewrites the marked sections of README.md and
// results/scenarios.md, `report --readme` gives the same bytes again, and a
// second run leaves no file of the first behind.
func TestRunReadme(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.MkdirAll(filepath.Join(dir, "results", "run"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "x.scn"), []byte("#\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "results", "run", "strategy-over-asis.svg"), []byte("<svg/>"), 0o644) // an earlier run's
	readme := "# m\n\n<!-- mirrorpath:verdicts:begin -->\nhand-edited\n<!-- mirrorpath:verdicts:end -->\n\n<!-- mirrorpath:bench:begin -->\n<!-- mirrorpath:bench:end -->\n"
	os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644)
	os.WriteFile(filepath.Join(dir, "results", "scenarios.md"), []byte("# s\n<!-- mirrorpath:verdicts:begin -->\n<!-- mirrorpath:verdicts:end -->\n"), 0o644)
	catalog := func(files []string, w io.Writer) error {
		io.WriteString(w, `{"file":"x.scn","strategy":"negate","violations":[{"code":"M4"}]}`+"\n")
		return nil
	}
	var stdout, stderr bytes.Buffer
	if code := runWith(catalog, []string{"--dir", dir, "--readme", "--pkg", "./absent"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "results", "run", "strategy-over-asis.svg")); !os.IsNotExist(err) {
		t.Errorf("the earlier run's chart is still there: %v", err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	for _, want := range []string{"| x | M4 |", "No benchmark results in this run.", "by `mirrorpath run --dir " + dir} {
		if !strings.Contains(string(first), want) {
			t.Errorf("README lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(string(first), "hand-edited") {
		t.Errorf("README keeps the hand edit:\n%s", first)
	}
	if s, _ := os.ReadFile(filepath.Join(dir, "results", "scenarios.md")); !strings.Contains(string(s), "| x | M4 |") {
		t.Errorf("results/scenarios.md not rewritten:\n%s", s)
	}
	stdout.Reset()
	if code := mainArgs([]string{"report", "--dir", dir, "--readme"}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "README.md")); !bytes.Equal(first, again) {
		t.Errorf("report --readme changed the README:\n%s", again)
	}
	if code := mainArgs([]string{"run", "--dir", dir, "--readme", "--no-bench", "--no-scenarios"}, &stdout, &stderr); code != 2 {
		t.Errorf("--readme --no-bench --no-scenarios: exit %d, want 2", code)
	}
}

// TestRunReadmeHalves: `run --readme --no-bench` rebuilds the verdict
// tables from a fresh scenario run and leaves the benchmark section, the
// raw samples and their provenance as they were; `--no-scenarios` does the
// reverse.
func TestRunReadmeHalves(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "x.scn"), []byte("#\n"), 0o644)
	run := filepath.Join(dir, "results", "run")
	os.MkdirAll(run, 0o755)
	// An earlier committed run: benchmarks and scenarios at commit abc1234.
	os.WriteFile(filepath.Join(run, report.MetaFile), []byte(`{"title":"t","date":"2026-01-01 00:00","commit":"abc1234","command":"mirrorpath run --readme",`+
		`"settings":["mode quick"],"env":["load average at start 0.01"],"raw_files":["scenarios.jsonl","bench.txt"]}`), 0o644)
	var b strings.Builder
	b.WriteString("pkg: github.com/mirrorpath/mirrorpath/appendpath\n")
	for i := range 10 {
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=asis/crc=none/batch=16KiB/producers=1000-2 100 %d ns/op\n", 100+i%3)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=barrier/crc=none/batch=16KiB/producers=1000-2 100 %d ns/op\n", 100+i%3)
	}
	benchTxt := []byte(b.String())
	os.WriteFile(filepath.Join(run, report.BenchFile), benchTxt, 0o644)
	os.WriteFile(filepath.Join(run, report.ScenarioFile), []byte(`{"file":"x.scn","strategy":"negate","violations":[]}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(run, "append-throughput.svg"), []byte("<svg/>"), 0o644)
	doc := "# m\n\n<!-- mirrorpath:verdicts:begin -->\n<!-- mirrorpath:verdicts:end -->\n\n<!-- mirrorpath:bench:begin -->\n<!-- mirrorpath:bench:end -->\n"
	os.WriteFile(filepath.Join(dir, "README.md"), []byte(doc), 0o644)
	os.WriteFile(filepath.Join(dir, "results", "scenarios.md"), []byte("# s\n<!-- mirrorpath:verdicts:begin -->\n<!-- mirrorpath:verdicts:end -->\n"), 0o644)
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"report", "--dir", dir, "--readme"}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	section := func(name string) string {
		text, _ := os.ReadFile(filepath.Join(dir, "README.md"))
		got, err := report.MarkedSection(text, name)
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	benchBefore, verdictsBefore := section(report.SectionBench), section(report.SectionVerdicts)
	if !strings.Contains(benchBefore, "commit abc1234") || !strings.Contains(verdictsBefore, "| x | ok |") {
		t.Fatalf("sections from the earlier run:\n%s\n%s", benchBefore, verdictsBefore)
	}

	catalog := func(files []string, w io.Writer) error {
		io.WriteString(w, `{"file":"x.scn","strategy":"negate","violations":[{"code":"M4"}]}`+"\n")
		return nil
	}
	if code := runWith(catalog, []string{"--dir", dir, "--readme", "--no-bench"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run --readme --no-bench: exit %d\n%s", code, stderr.String())
	}
	if got := section(report.SectionBench); got != benchBefore {
		t.Errorf("--no-bench changed the benchmark section:\n%s\nwas\n%s", got, benchBefore)
	}
	if got := section(report.SectionVerdicts); !strings.Contains(got, "| x | M4 |") || strings.Contains(got, "commit abc1234") {
		t.Errorf("verdicts not rebuilt from the new scenario run:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(run, report.BenchFile)); !bytes.Equal(got, benchTxt) {
		t.Error("bench.txt changed")
	}
	if _, err := os.Stat(filepath.Join(run, "append-throughput.svg")); err != nil {
		t.Errorf("the kept run's chart is gone: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(run, report.ReportFile))
	if !strings.Contains(string(md), "benchmarks from an earlier run: 2026-01-01 00:00 UTC, commit abc1234") {
		t.Errorf("report.md does not say where the benchmarks come from:\n%s", md)
	}
	// report --readme gives the same bytes again.
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if code := mainArgs([]string{"report", "--dir", dir, "--readme"}, &stdout, &stderr); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "README.md")); !bytes.Equal(again, readme) {
		t.Errorf("report --readme changed the README after run --no-bench --readme")
	}

	// The reverse: benchmarks run (none here), scenario results kept.
	verdicts := section(report.SectionVerdicts)
	if code := mainArgs([]string{"run", "--dir", dir, "--readme", "--no-scenarios", "--pkg", "./absent"}, &stdout, &stderr); code != 0 {
		t.Fatalf("run --readme --no-scenarios: exit %d\n%s", code, stderr.String())
	}
	if got := section(report.SectionVerdicts); got != verdicts {
		t.Errorf("--no-scenarios changed the verdicts:\n%s\nwas\n%s", got, verdicts)
	}
	if got := section(report.SectionBench); !strings.Contains(got, "No benchmark results") {
		t.Errorf("benchmark section not rebuilt:\n%s", got)
	}
}

// TestRunExitNoisy: a noisy run exits 0 saying NOISY, or 3 with --fail-noisy.
func TestRunExitNoisy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, report.MetaFile), []byte(`{"title":"t","raw_files":["bench.txt"]}`), 0o644)
	var b strings.Builder
	b.WriteString("pkg: github.com/mirrorpath/mirrorpath/appendpath\n")
	for i := range 10 {
		// The A/A pair 20 % apart: the canary misses 1.00.
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=asis/crc=none/batch=16KiB/producers=1000-2 100 %d ns/op\n", 100+i%3)
		fmt.Fprintf(&b, "BenchmarkAppend/strategy=barrier/crc=none/batch=16KiB/producers=1000-2 100 %d ns/op\n", 120+i%3)
	}
	os.WriteFile(filepath.Join(dir, report.BenchFile), []byte(b.String()), 0o644)
	var stderr bytes.Buffer
	if code := (runConfig{}).exitStatus(dir, &stderr); code != 0 || !strings.Contains(stderr.String(), "NOISY") {
		t.Errorf("noisy run: exit %d, stderr %q", code, stderr.String())
	}
	if code := (runConfig{failNoisy: true}).exitStatus(dir, io.Discard); code != 3 {
		t.Errorf("noisy run with --fail-noisy: exit %d, want 3", code)
	}
	if strings.Contains(stderr.String(), "two speeds") {
		t.Errorf("no limit rounds, yet stderr names two speeds: %q", stderr.String())
	}
	// With the 100-byte limit's rounds 7.5 and 13 ns apart, it says so and
	// points at hostspeed.
	for i := range 10 {
		fmt.Fprintf(&b, "BenchmarkLimit/batch=100B-2 100 %.1f ns/op\n", []float64{7.5, 13}[i%2])
	}
	os.WriteFile(filepath.Join(dir, report.BenchFile), []byte(b.String()), 0o644)
	stderr.Reset()
	if code := (runConfig{}).exitStatus(dir, &stderr); code != 0 || !strings.Contains(stderr.String(), "run: the core ran the 100-byte limit at two speeds across the rounds: `mirrorpath hostspeed`") {
		t.Errorf("two speeds: exit %d, stderr %q", code, stderr.String())
	}
}
