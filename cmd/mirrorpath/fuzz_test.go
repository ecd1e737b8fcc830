package main

import (
	"bytes"
	"os"
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
	if testing.Short() {
		t.Skip("fuzzes a throwaway module")
	}
	dir := fuzzModule(t)
	var stdout, stderr bytes.Buffer
	code := mainArgs([]string{"fuzz", "--dir", dir, "--time", "3s", "--minimize", "1s", "--parallel", "1"}, &stdout, &stderr)
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

	// --target narrows the campaign; the clean target alone passes.
	stdout.Reset()
	stderr.Reset()
	if code := mainArgs([]string{"fuzz", "--dir", dir, "--time", "1s", "--target", "Clean$", "--parallel", "1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("clean target: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "FuzzCrash") {
		t.Errorf("--target not applied:\n%s", stdout.String())
	}
}

func TestFuzzArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fuzz", "-h"}, 0, "-minimize D"},
		{[]string{"fuzz", "--time", "x"}, 2, "invalid value"},
		{[]string{"fuzz", "--time", "0s"}, 2, "--time must be positive"},
		{[]string{"fuzz", "--target", "("}, 2, "--target: error parsing regexp"},
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
		!strings.Contains(stderr.String(), "no fuzz target matches") || !strings.Contains(stderr.String(), "2 targets found") {
		t.Errorf("no match: exit %d\n%s", code, stderr.String())
	}
}
