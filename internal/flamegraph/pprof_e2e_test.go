//go:build e2e

package flamegraph

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAgainstGoToolPprof decodes a real CPU profile and compares every stack
// (location IDs, leaf first) and its values with `go tool pprof -raw`, an
// independent decoder. It runs go tool pprof: an end-to-end test (-tags e2e).
func TestAgainstGoToolPprof(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go tool pprof needs the go command: %v", err)
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("CPU profiling unavailable: %v", err)
	}
	burnCPUFor(t, 200*time.Millisecond, 1<<14)
	pprof.StopCPUProfile()
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goTool, "tool", "pprof", "-raw", path).Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v", err)
	}
	// "          2   20000000: 17 11 12 13 14 8 9 "
	line := regexp.MustCompile(`^\s+(\d+)\s+(\d+): ([\d ]+)$`)
	want := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if m := line.FindStringSubmatch(strings.TrimRight(l, " ")); m != nil {
			want[m[3]] = addValues(want[m[3]], m[1], m[2])
		}
	}
	if len(want) == 0 {
		t.Fatalf("go tool pprof -raw printed no samples of 200 ms of CPU:\n%s", out)
	}
	p, err := Parse(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range p.Sample {
		var ids []string
		for _, l := range s.Location {
			ids = append(ids, strconv.FormatUint(l.ID, 10))
		}
		k := strings.Join(ids, " ")
		got[k] = addValues(got[k], strconv.FormatInt(s.Value[0], 10), strconv.FormatInt(s.Value[1], 10))
	}
	if len(got) != len(want) {
		t.Fatalf("%d distinct stacks, go tool pprof has %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stack %s: values %q, go tool pprof %q", k, got[k], v)
		}
	}
}

// addValues sums "a b" pairs held as text.
func addValues(acc, a, b string) string {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	if acc != "" {
		f := strings.Fields(acc)
		x0, _ := strconv.ParseInt(f[0], 10, 64)
		y0, _ := strconv.ParseInt(f[1], 10, 64)
		x, y = x+x0, y+y0
	}
	return fmt.Sprintf("%d %d", x, y)
}
