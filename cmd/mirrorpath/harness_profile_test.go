//go:build e2e

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProfileEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/prof\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "p", "p_test.go"), []byte(`package p

import "testing"

var sink uint64
var buf []byte

//go:noinline
func spinHard(n int) uint64 {
	h := uint64(1)
	for i := 0; i < n; i++ {
		h = h*1099511628211 ^ uint64(i)
	}
	return h
}

//go:noinline
func allocLots() []byte { return make([]byte, 4096) }

func BenchmarkSpin(b *testing.B) {
	for b.Loop() {
		sink = spinHard(20000)
		buf = allocLots()
	}
}
`), 0o644)
	// A count, not a duration: 10000 ops are about 200 ms of CPU (20 samples of
	// spinHard) and 40 MB of allocLots however loaded the machine is, where a
	// wall-clock benchtime gives a starved process next to no samples.
	out := filepath.Join(t.TempDir(), "prof")
	var stdout, stderr bytes.Buffer
	code := mainArgs([]string{"profile", "--dir", dir, "--pkg", "./p", "--bench", "Spin", "--benchtime", "10000x", "--out", out}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, f := range []string{"cpu.pprof", "mem.pprof", "bench.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	cpu, _ := os.ReadFile(filepath.Join(out, "cpu.svg"))
	alloc, _ := os.ReadFile(filepath.Join(out, "alloc.svg"))
	wellFormed(t, filepath.Join(out, "cpu.svg"))
	wellFormed(t, filepath.Join(out, "alloc.svg"))
	if !strings.Contains(string(cpu), "example.com/prof/p.spinHard") {
		t.Errorf("cpu.svg has no spinHard frame")
	}
	if !strings.Contains(string(alloc), "example.com/prof/p.allocLots") {
		t.Errorf("alloc.svg has no allocLots frame")
	}
	if !strings.Contains(stdout.String(), "p.spinHard") || !strings.Contains(stdout.String(), "flat%") {
		t.Errorf("no top list:\n%s", stdout.String())
	}
	// The test binary goes to --out, not into the module.
	if _, err := os.Stat(filepath.Join(dir, "p.test")); err == nil {
		t.Error("p.test left in the module")
	}
}

func TestProfileArgs(t *testing.T) {
	t.Parallel()
	mod := t.TempDir()
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/e\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(mod, "q"), 0o755)
	os.WriteFile(filepath.Join(mod, "q", "q_test.go"), []byte("package q\n\nimport \"testing\"\n\nfunc TestQ(t *testing.T) {}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"profile", "-h"}, 0, "-pkg P"},
		{[]string{"profile", "--pkg", "./..."}, 2, "exactly one package"},
		{[]string{"profile", "--pkg", "./a ./b"}, 2, "exactly one package"},
		{[]string{"profile", "--top", "-1"}, 2, `invalid value "-1" for flag -top: below the least 0`},
		{[]string{"profile", "--wat"}, 2, "flag provided but not defined"},
		{[]string{"profile", "--dir", mod, "--pkg", "./q", "--out", t.TempDir()}, 1, "no benchmark in ./q"},
		{[]string{"profile", "--dir", mod, "--pkg", "./nope", "--out", t.TempDir()}, 1, "go test failed"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
