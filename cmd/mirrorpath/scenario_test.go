package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeScenario(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runScenarioCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := mainArgs(append([]string{"scenario"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

const reuseScenario = `cluster A
cluster B pid-start=5
topic t
mirror B from A
producer p on A pid=5
send p t/0 records=5
sync
fail A
stop B
producer q on B
send q t/0 records=5
expect strategy=verbatim modes=M4
expect strategy=barrier ok
`

func TestScenarioRunExitStatus(t *testing.T) {
	ok := writeScenario(t, "ok.scn", reuseScenario)
	if code, out, errOut := runScenarioCmd("run", ok); code != 0 || !strings.Contains(out, "verbatim") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	wrong := writeScenario(t, "wrong.scn", strings.Replace(reuseScenario, "modes=M4", "ok", 1))
	if code, out, _ := runScenarioCmd("run", wrong); code != 1 || !strings.Contains(out, "FAILED line 12") {
		t.Fatalf("unmet expectation: exit %d, stdout %q", code, out)
	}
	bad := writeScenario(t, "bad.scn", "cluster A\nsend nobody t/0\n")
	code, _, errOut := runScenarioCmd("run", bad)
	if code != 2 || !strings.Contains(errOut, "bad.scn:2: send: unknown producer \"nobody\"") {
		t.Fatalf("reference error: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{}, {"run"}, {"walk", ok}, {"run", "--strategy", "best", ok},
		{"run", filepath.Join(t.TempDir(), "missing.scn")}} {
		if code, _, _ := runScenarioCmd(args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

func TestScenarioRunJSON(t *testing.T) {
	f := writeScenario(t, "reuse.scn", reuseScenario)
	code, out, errOut := runScenarioCmd("run", "--json", "--strategy", "verbatim", f)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d JSON lines, want one per (file, strategy):\n%s", len(lines), out)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[0]), &obj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"file", "strategy", "options", "violations", "client_errors", "expectations"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("missing key %q in %s", k, lines[0])
		}
	}
	var r struct {
		Strategy   string
		Violations []struct {
			Code, Cluster, Partition, Detail string
			Step                             int
		}
		Expectations []struct {
			Line int
			Want []string
			Got  []string
			Held bool
		}
	}
	json.Unmarshal([]byte(lines[0]), &r)
	if r.Strategy != "verbatim" || len(r.Violations) != 1 || r.Violations[0].Code != "M4" ||
		r.Violations[0].Step != 11 || r.Violations[0].Cluster != "B" || r.Violations[0].Partition != "t/0" {
		t.Errorf("violations %+v", r.Violations)
	}
	if len(r.Expectations) != 1 || !r.Expectations[0].Held || r.Expectations[0].Line != 12 {
		t.Errorf("expectations %+v", r.Expectations)
	}
}

// TestScenarioFlagOverridesFile: a flag beats the file's set line.
func TestScenarioFlagOverridesFile(t *testing.T) {
	f := writeScenario(t, "stock.scn", "set has-producer-id=stock\n"+strings.Replace(reuseScenario,
		"expect strategy=barrier ok", "expect strategy=negate modes=M5", 1))
	if code, out, errOut := runScenarioCmd("run", "--strategy=negate", f); code != 0 {
		t.Fatalf("file setting: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runScenarioCmd("run", "--strategy=negate", "--has-producer-id=not-minus-one", f)
	if code != 1 || !strings.Contains(out, "FAILED") {
		t.Fatalf("flag override: exit %d\n%s", code, out)
	}
}
