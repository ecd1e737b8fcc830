//go:build e2e

package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzModule writes a throwaway module with a clean target and one that
// fails on inputs starting with 'b', which the fuzzer finds in well under a
// second from the seed "a".
func fuzzModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fz\n\ngo 1.22\n",
		"p/p_test.go": `package p

import "testing"

func FuzzClean(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {})
}

func FuzzSkipped(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {})
}

func FuzzCrash(f *testing.F) {
	f.Add([]byte("a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 0 && b[0] == 'b' {
			t.Fatal("input starting with b")
		}
	})
}
`,
		"q/q.go": "package q\n", // no tests
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFuzzCampaign(t *testing.T) {
	t.Parallel()
	dir := fuzzModule(t)
	var stdout, stderr bytes.Buffer
	code := mainArgs([]string{"fuzz", "--dir", dir, "--time", "3s", "--minimize", "1s", "--parallel", "1",
		"--target", "Fuzz(Clean|Crash)$"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("campaign with a crashing target: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	crashers, _ := filepath.Glob(filepath.Join(dir, "p", "testdata", "fuzz", "FuzzCrash", "*"))
	if len(crashers) != 1 {
		t.Fatalf("crashers on disk: %v\n%s", crashers, out)
	}
	repro := "go test -run 'FuzzCrash/" + filepath.Base(crashers[0]) + "' ./p"
	for _, want := range []string{"./p      FuzzClean  ok", "FuzzCrash  FAIL", "reproduce: " + repro} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if !strings.Contains(stderr.String(), "execs (") || !strings.Contains(stderr.String(), "[2/2] ./p FuzzCrash") {
		t.Errorf("no live progress on stderr")
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	}
	if strings.Contains(out, "FuzzSkipped") || strings.Contains(stderr.String(), "FuzzSkipped") {
		t.Errorf("--target not applied:\n%s", out)
	}
}

// TestFuzzSlowTarget: a target that sleeps 5 ms on every input cannot reach
// 1,000 execs/s on one worker, whatever the machine; the summary flags it and
// --fail-slow makes that exit 3.
func TestFuzzSlowTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fuzzes a throwaway module")
	}
	dir := fuzzModule(t)
	slow := "package p\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n" +
		"func FuzzSlow(f *testing.F) {\n\tf.Add([]byte(\"a\"))\n" +
		"\tf.Fuzz(func(t *testing.T, b []byte) { time.Sleep(5 * time.Millisecond) })\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "p", "slow_test.go"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := mainArgs([]string{"fuzz", "--dir", dir, "--time", "4s", "--parallel", "1", "--target", "FuzzSlow$",
		"--fail-slow"}, &stdout, &stderr)
	out := stdout.String()
	if code != 3 {
		t.Errorf("slow target under --fail-slow: exit %d, want 3", code)
	}
	for _, want := range []string{"SLOW", "warning: ./p FuzzSlow is slow: ", "execs/s overall, below 1000"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if !strings.Contains(stderr.String(), "ok, slow: ") {
		t.Errorf("no slow verdict on stderr")
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	}
}

func TestFuzzArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fuzz", "-h"}, 0, "-minimize Nx"},
		{[]string{"fuzz", "--minimize", "-1s"}, 2, "--minimize takes a count"},
		{[]string{"fuzz", "--minimize", "tenx"}, 2, "--minimize takes a count"},
		{[]string{"fuzz", "--time", "x"}, 2, "invalid value"},
		{[]string{"fuzz", "--time", "0s"}, 2, "below the least 1s"},
		{[]string{"fuzz", "--target", "("}, 2, "--target: error parsing regexp"},
		{[]string{"fuzz", "--min-rate", "-1"}, 2, "below the least 0"},
		{[]string{"fuzz", "--long-time", "-1s"}, 2, "below the least 0s"},
		{[]string{"fuzz", "--long", "("}, 2, "--long: error parsing regexp"},
		{[]string{"fuzz", "-h"}, 0, "FuzzStoreMatchesModel"},
		{[]string{"fuzz", "-h"}, 0, "-fail-slow"},
		{[]string{"fuzz", "--dir", t.TempDir()}, 2, "holds no go.mod"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
	dir := fuzzModule(t)
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"fuzz", "--dir", dir, "--target", "NoSuch"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "no fuzz target matches") || !strings.Contains(stderr.String(), "3 targets found") {
		t.Errorf("no match: exit %d\n%s", code, stderr.String())
	}
}

// TestClusterFuzzLiteBuild runs .clusterfuzzlite/build.sh against the
// throwaway module with stand-ins for the OSS-Fuzz helpers: it must compile
// every discovered target and write the seed archive of each target with
// seeds, encoded for go-118-fuzz-build (a 4-byte length before a []byte).
func TestClusterFuzzLiteBuild(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("build.sh needs %s: %v", tool, err)
		}
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("build.sh needs the go command: %v", err)
	}
	repo, _ := filepath.Abs("../..")
	dir := fuzzModule(t)
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	for _, s := range []string{"fuzz-targets.sh"} {
		b, err := os.ReadFile(filepath.Join(repo, "scripts", s))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "scripts", s), b, 0o755)
	}
	corpus := filepath.Join(dir, "p", "testdata", "fuzz", "FuzzCrash")
	os.MkdirAll(corpus, 0o755)
	os.WriteFile(filepath.Join(corpus, "first-byte-b"), []byte("go test fuzz v1\n[]byte(\"b\\x00\\n\\\"é\\u00e9\")\n"), 0o644)
	bin := filepath.Join(t.TempDir(), "mirrorpath")
	if b, err := exec.Command(realGo, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}

	// compile_native_go_fuzzer needs each name in one file: a doc comment
	// elsewhere is reworded, a mention in code makes the target skipped.
	os.WriteFile(filepath.Join(dir, "p", "doc.go"), []byte("// Package p is fuzzed.\n//\n// FuzzCrash finds inputs that start with b.\npackage p\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "p", "names_test.go"), []byte("package p\n\nvar skippedName = \"FuzzSkipped\"\n"), 0o644)

	src, out, fake := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.Symlink(dir, filepath.Join(src, "mirrorpath")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(fake, "go"), []byte("#!/bin/sh\n[ \"$1\" = get ] && exit 0\nexec "+realGo+" \"$@\"\n"), 0o755)
	os.WriteFile(filepath.Join(fake, "compile_native_go_fuzzer"), []byte("#!/bin/sh\necho \"$@\" >> \"$OUT/compiled.txt\"\n"), 0o755)
	cmd := exec.Command("bash", filepath.Join(repo, ".clusterfuzzlite", "build.sh"))
	cmd.Env = append(os.Environ(), "SRC="+src, "OUT="+out, "MIRRORPATH="+bin, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build.sh: %v\n%s", err, log)
	}
	compiled, _ := os.ReadFile(filepath.Join(out, "compiled.txt"))
	if got, want := string(compiled), "example.com/fz/p FuzzClean p_FuzzClean\nexample.com/fz/p FuzzCrash p_FuzzCrash\n"; got != want {
		t.Errorf("compiled:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(string(log), "skipped example.com/fz/p FuzzSkipped") || !strings.Contains(string(log), "built 2 fuzzers, skipped 1") {
		t.Errorf("build.sh output:\n%s", log)
	}
	if doc, _ := os.ReadFile(filepath.Join(dir, "p", "doc.go")); !strings.Contains(string(doc), "// the Crash fuzz target finds") {
		t.Errorf("doc comment not reworded:\n%s", doc)
	}
	if _, err := os.Stat(filepath.Join(out, "p_FuzzSkipped_seed_corpus.zip")); err == nil {
		t.Error("seed archive for a target without seeds")
	}
	// The committed crasher fails its target: build.sh says so and still
	// archives it.
	if !strings.Contains(string(log), "fuzz export reported failures") {
		t.Errorf("build.sh did not report the failing seed:\n%s", log)
	}
	for name, want := range map[string]map[string]string{
		"p_FuzzCrash_seed_corpus.zip": {"first-byte-b": "\x00\x00\x00\x08b\x00\n\"éé", "seed-0": "\x00\x00\x00\x01a"},
		"p_FuzzClean_seed_corpus.zip": {"seed-0": "\x00\x00\x00\x01a"},
	} {
		zr, err := zip.OpenReader(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, f := range zr.File {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			got[f.Name] = string(b)
		}
		zr.Close()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// The pinned harness OSS-Fuzz's compile_native_go_fuzzer builds against
// (.clusterfuzzlite/build.sh runs go get …/testing at its latest version).
const goFuzzBuildVersion = "github.com/AdamKorcz/go-118-fuzz-build@v0.0.0-20250520111509-a70c2aa677fa"

// TestFuzzExportRealHarness exports the seeds of a target with seven
// argument types — f.Add seeds and a testdata/fuzz file — and feeds every
// zip entry to the real libFuzzer harness, go-118-fuzz-build's testing.F
// (fetched through the module proxy): each entry must reach the fuzz
// function with exactly the seed's values.
func TestFuzzExportRealHarness(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/mix\n\ngo 1.22\n")
	write("p/mix_test.go", `package p

import "testing"

func FuzzMix(f *testing.F) {
	f.Add([]byte("\x00\x01 bytes"), "text", int64(-5), int16(-300), uint8(7), 2.5, true)
	f.Add([]byte{}, "", int64(1)<<40, int16(1), uint8(255), -0.25, false)
	f.Fuzz(func(t *testing.T, b []byte, s string, n int64, k int16, u uint8, x float64, ok bool) {})
}
`)
	write("p/testdata/fuzz/FuzzMix/from-file", "go test fuzz v1\n[]byte(\"file\\xff\")\nstring(\"é\")\nint64(9)\nint16(-1)\nbyte('A')\nfloat64(-3)\nbool(true)\n")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"fuzz", "export", "--dir", dir, "--out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("fuzz export: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "./p FuzzMix: 3 seeds → "+filepath.Join(out, "p_FuzzMix_seed_corpus.zip")) {
		t.Fatalf("fuzz export output:\n%s", stdout.String())
	}

	h := t.TempDir()
	os.WriteFile(filepath.Join(h, "go.mod"), []byte("module example.com/harness\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(h, "main.go"), []byte(`package main

import (
	"archive/zip"
	"fmt"
	"io"
	"os"

	gofuzz "github.com/AdamKorcz/go-118-fuzz-build/testing"
)

func main() {
	zr, err := zip.OpenReader(os.Args[1])
	if err != nil {
		panic(err)
	}
	for _, e := range zr.File {
		rc, _ := e.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		called := false
		f := &gofuzz.F{Data: data, T: gofuzz.NewT()}
		f.Fuzz(func(t *gofuzz.T, b []byte, s string, n int64, k int16, u uint8, x float64, ok bool) {
			called = true
			fmt.Printf("%s %q %q %d %d %d %g %v\n", e.Name, b, s, n, k, u, x, ok)
		})
		if !called {
			fmt.Printf("%s: the harness did not call the fuzz function\n", e.Name)
		}
	}
}
`), 0o644)
	for _, args := range [][]string{{"get", goFuzzBuildVersion}, {"mod", "tidy"}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = h
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %v (the module proxy must be reachable): %v\n%s", args, err, b)
		}
	}
	cmd := exec.Command("go", "run", ".", filepath.Join(out, "p_FuzzMix_seed_corpus.zip"))
	cmd.Dir = h
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("harness: %v\n%s", err, got)
	}
	want := "from-file \"file\\xff\" \"é\" 9 -1 65 -3 true\n" +
		"seed-0 \"\\x00\\x01 bytes\" \"text\" -5 -300 7 2.5 true\n" +
		"seed-1 \"\" \"\" 1099511627776 1 255 -0.25 false\n"
	if string(got) != want {
		t.Errorf("the harness decoded:\n%s\nwant:\n%s", got, want)
	}
}

// TestFuzzCoverage measures a throwaway target's corpus coverage: the f.Add
// seed reaches one branch of Classify; with --cache, an entry of the fuzz
// cache's corpus for the target reaches the other, and the report says 100%.
func TestFuzzCoverage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mod := "example.com/cov" + strings.ReplaceAll(filepath.Base(dir), "-", "")
	files := map[string]string{
		"go.mod": "module " + mod + "\n\ngo 1.22\n",
		"p/p.go": "package p\n\nfunc Classify(b []byte) int {\n\tif len(b) > 0 && b[0] == 'x' {\n\t\treturn 1\n\t}\n\treturn 0\n}\n",
		"p/p_test.go": "package p\n\nimport \"testing\"\n\nfunc FuzzClassify(f *testing.F) {\n\tf.Add([]byte(\"a\"))\n" +
			"\tf.Fuzz(func(t *testing.T, b []byte) { Classify(b) })\n}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cover := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := mainArgs(append([]string{"fuzz", "coverage", "--dir", dir}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("fuzz coverage %v: exit %d\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	out := filepath.Join(t.TempDir(), "cov")
	if got := cover("--out", out); !strings.Contains(got, "coverage of the module by the fuzz corpus: 66.7% of statements") {
		t.Errorf("seeds only:\n%s", got)
	}
	html, err := os.ReadFile(filepath.Join(out, "coverage.html"))
	if err != nil || !bytes.Contains(html, []byte("p.go")) {
		t.Errorf("coverage.html: %v", err)
	}
	if txt, _ := os.ReadFile(filepath.Join(out, "coverage.txt")); !bytes.Contains(txt, []byte("Classify")) {
		t.Errorf("coverage.txt:\n%s", txt)
	}

	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cdir := filepath.Join(strings.TrimSpace(string(gocache)), "fuzz", mod)
	t.Cleanup(func() { os.RemoveAll(cdir) })
	os.MkdirAll(filepath.Join(cdir, "p", "FuzzClassify"), 0o755)
	os.WriteFile(filepath.Join(cdir, "p", "FuzzClassify", "0123abcd"), []byte("go test fuzz v1\n[]byte(\"xyz\")\n"), 0o644)
	got := cover("--out", out, "--cache")
	if !strings.Contains(got, "./p FuzzClassify: 1 corpus entries from the fuzz cache") ||
		!strings.Contains(got, "coverage of the module by the fuzz corpus: 100.0% of statements") {
		t.Errorf("with the cache:\n%s", got)
	}
}
