package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withScenarioCommand installs a stand-in scenario command for the test.
func withScenarioCommand(t *testing.T, run func(args []string, stdout, stderr io.Writer) int) {
	old, had := commands["scenario"]
	commands["scenario"] = command{name: "scenario", run: run}
	t.Cleanup(func() {
		if had {
			commands["scenario"] = old
		} else {
			delete(commands, "scenario")
		}
	})
}

func TestRunDegradesAndFindings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/empty\n\ngo 1.22\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "scenarios"), 0o755)
	os.WriteFile(filepath.Join(dir, "scenarios", "x.scn"), []byte("#\n"), 0o644)

	// An unmet expectation is a finding: exit 1.
	withScenarioCommand(t, func(args []string, stdout, stderr io.Writer) int {
		io.WriteString(stdout, `{"file":"x.scn","strategy":"negate","violations":[{"code":"LAT"}],"expectations":[{"held":false}]}`+"\n")
		return 1
	})
	out := filepath.Join(t.TempDir(), "o")
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"run", "--dir", dir, "--out", out, "--no-bench"}, &stdout, &stderr); code != 1 {
		t.Fatalf("unmet expectation: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "x.scn negate") {
		t.Errorf("stderr does not name the unmet expectation:\n%s", stderr.String())
	}

	// A panicking scenario command is reported, not propagated.
	withScenarioCommand(t, func(args []string, stdout, stderr io.Writer) int { panic("boom") })
	stdout.Reset()
	stderr.Reset()
	if code := mainArgs([]string{"run", "--dir", dir, "--out", out, "--no-bench"}, &stdout, &stderr); code != 0 {
		t.Fatalf("panicking scenario command: exit %d", code)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"scenario run panicked: boom", "benchmarks skipped (--no-bench)", "No scenario results"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}

	// No scenario command at all.
	old, had := commands["scenario"]
	delete(commands, "scenario")
	defer func() {
		if had {
			commands["scenario"] = old
		}
	}()
	stdout.Reset()
	if code := mainArgs([]string{"run", "--dir", dir, "--out", out, "--no-bench"}, &stdout, &stderr); code != 0 {
		t.Fatalf("no scenario command: exit %d", code)
	}
	if !strings.Contains(stdout.String(), "scenario command is not built into this binary") {
		t.Errorf("stdout:\n%s", stdout.String())
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
