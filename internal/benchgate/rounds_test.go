package benchgate

import (
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fakeBinary writes a test binary stand-in that prints one benchmark line
// naming its -test.bench pattern, or fails when the pattern is "fail".
func fakeBinary(t *testing.T, pkg string) Binary {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in binary is a shell script")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pkg.test")
	script := "#!/bin/sh\n" +
		"while [ $# -gt 0 ]; do [ \"$1\" = -test.bench ] && b=$2; shift; done\n" +
		"[ \"$b\" = fail ] && { echo '--- FAIL: BenchmarkX'; exit 1; }\n" +
		"echo \"Benchmark$b 1 1 ns/op\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Binary{ImportPath: pkg, Dir: dir, Path: path}
}

// TestRoundsRunsEveryJobOncePerRound: every round runs the jobs its plan
// yields, in order, each once; a failed job is handed to done, and a plan
// that leaves out the failed package's later jobs is asked for them only
// after the failure is known.
func TestRoundsRunsEveryJobOncePerRound(t *testing.T) {
	a, b := fakeBinary(t, "a"), fakeBinary(t, "b")
	failed := map[string]bool{}
	plan := func(round int) iter.Seq[Job] {
		return func(yield func(Job) bool) {
			for _, j := range []Job{{Bin: a, Bench: "One"}, {Bin: b, Bench: "fail"}, {Bin: b, Bench: "Two"}, {Bin: a, Bench: "Two"}} {
				if failed[j.Bin.ImportPath] {
					continue
				}
				if !yield(j) {
					return
				}
			}
		}
	}
	var ran []string
	err := Rounds(context.Background(), 2, 0, plan, func(round int, j Job, out []byte, err error) error {
		if err != nil {
			if !errors.Is(err, ErrRun) {
				t.Errorf("round %d, %s %s: error %v does not match ErrRun", round, j.Bin.ImportPath, j.Bench, err)
			}
			failed[j.Bin.ImportPath] = true
			ran = append(ran, j.Bin.ImportPath+" failed")
			return nil
		}
		ran = append(ran, j.Bin.ImportPath+" "+strings.Fields(string(out))[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a BenchmarkOne", "b failed", "a BenchmarkTwo", "a BenchmarkOne", "a BenchmarkTwo"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}
}

// TestRoundsStopsOnDoneError: an error from done ends the run with it.
func TestRoundsStopsOnDoneError(t *testing.T) {
	a := fakeBinary(t, "a")
	stop := errors.New("stop")
	calls := 0
	plan := func(int) iter.Seq[Job] { return slices.Values([]Job{{Bin: a, Bench: "One"}, {Bin: a, Bench: "Two"}}) }
	err := Rounds(context.Background(), 3, 0, plan, func(int, Job, []byte, error) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Rounds = %v after %d jobs, want stop after 1", err, calls)
	}
}
