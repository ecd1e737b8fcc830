package fuzzcampaign

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listOutput is `go test -list '^Fuzz' ./...` as printed by go1.26 for a
// module with one package that does not build.
const listOutput = `ok  	example.com/m/appendpath	0.081s
FuzzPatchCRC
FuzzParseRepaired
FuzzParseRaw
ok  	example.com/m/codec	0.028s
?   	example.com/m/corpus/gen	[no test files]
FuzzParse
ok  	example.com/m/internal/flamegraph	0.013s
# example.com/m/scenario
# [example.com/m/scenario]
vet: scenario/wire.go:4:2: could not import encoding/binary
FAIL	example.com/m/scenario [build failed]
FAIL
`

func TestParseList(t *testing.T) {
	names, broken := parseList([]byte(listOutput))
	if got := strings.Join(names["example.com/m/codec"], ","); got != "FuzzParseRaw,FuzzParseRepaired,FuzzPatchCRC" {
		t.Errorf("codec targets %q", got)
	}
	if got := strings.Join(names["example.com/m/internal/flamegraph"], ","); got != "FuzzParse" {
		t.Errorf("flamegraph targets %q", got)
	}
	if len(names) != 2 {
		t.Errorf("packages with targets: %v", names)
	}
	why, ok := broken["example.com/m/scenario"]
	if !ok || !strings.Contains(why, "build failed") || !strings.Contains(why, "could not import encoding/binary") {
		t.Errorf("broken = %q", broken)
	}
}

func TestParseProgress(t *testing.T) {
	p, ok := parseProgress("fuzz: elapsed: 3s, execs: 12345 (4115/sec), new interesting: 3 (total: 20)")
	if !ok || p.Elapsed != 3*time.Second || p.Execs != 12345 || p.PerSec != 4115 || p.NewInteresting != 3 || p.Corpus != 20 {
		t.Fatalf("%+v %v", p, ok)
	}
	for _, line := range []string{
		"fuzz: elapsed: 0s, gathering baseline coverage: 0/20 completed",
		"fuzz: elapsed: 1m3s, execs: x (1/sec), new interesting: 0 (total: 1)",
		"--- FAIL: FuzzX (0.12s)",
		"",
	} {
		if _, ok := parseProgress(line); ok && !strings.Contains(line, "1m3s") {
			t.Errorf("%q parsed as progress", line)
		}
	}
	if p, ok := parseProgress("fuzz: elapsed: 1m3s, execs: 7 (0/sec), new interesting: 0 (total: 1)"); !ok || p.Elapsed != 63*time.Second {
		t.Errorf("minutes: %+v %v", p, ok)
	}
}

func TestWriteSummary(t *testing.T) {
	rs := []Result{
		{Target: Target{Rel: "./codec", Name: "FuzzA"}, Speed: Speed{Last: Progress{Elapsed: 10 * time.Second, Execs: 500000, NewInteresting: 4, Corpus: 30}}},
		{Target: Target{Rel: "./psm", Name: "FuzzB"}, Failed: true, Speed: Speed{Last: Progress{Elapsed: 2 * time.Second, Execs: 100}},
			Crashers: []Crasher{{Path: "/m/psm/testdata/fuzz/FuzzB/abc", Repro: "go test -run 'FuzzB/abc' ./psm"}}},
		{Target: Target{Rel: "./pid", Name: "FuzzC"}, Failed: true, Tail: "build failed"},
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, rs, Limits{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"./codec  FuzzA   ok", "500000  50000", "FAIL", "reproduce: go test -run 'FuzzB/abc' ./psm", "FuzzC failed without a new crasher:\n  build failed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestDeadlineRaceIsNotAFinding(t *testing.T) {
	race := "--- FAIL: FuzzParse (30.10s)\n    context deadline exceeded\nFAIL\nexit status 1"
	if !deadlineRace(race, 0) {
		t.Fatal("the coordinator's deadline error with no input is golang/go#75804")
	}
	if deadlineRace(race, 1) {
		t.Fatal("a written crasher is a finding whatever else is printed")
	}
	written := "--- FAIL: FuzzX (1.2s)\n    context deadline exceeded\n    Failing input written to testdata/fuzz/FuzzX/abc"
	if deadlineRace(written, 0) {
		t.Fatal("a failing input written is a finding")
	}
	if deadlineRace("--- FAIL: FuzzX\n    panic: boom", 0) {
		t.Fatal("a panic is a finding")
	}
}

// speedOf feeds a recorded `go test -fuzz` output to a Speed.
func speedOf(t *testing.T, name string) (Speed, int) {
	t.Helper()
	log, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s Speed
	n := 0
	for _, line := range strings.Split(string(log), "\n") {
		if _, ok := s.add(line); ok {
			n++
		}
	}
	return s, n
}

// TestSpeedStalls reads the output of a 20 s fuzz run with 2 workers that
// stalled while minimizing large inputs: three stretches of one status
// interval at 0/sec (6-9 s, 12-15 s, 18-21 s, the last reported twice at
// exit) and 6376 execs in 21 s.
func TestSpeedStalls(t *testing.T) {
	s, n := speedOf(t, "fuzzdump-stalls.log")
	if n != 8 || s.Last.Elapsed != 21*time.Second || s.Last.Execs != 6376 {
		t.Fatalf("%d status lines, last %+v", n, s.Last)
	}
	if s.Stall != 3*time.Second || s.StallFrom != 6*time.Second {
		t.Errorf("longest stall %s from %s, want 3s from 6s", s.Stall, s.StallFrom)
	}
	if s.rate() != 303 {
		t.Errorf("rate %d, want 6376/21 = 303", s.rate())
	}
	why := s.slow(Limits{MinRate: DefaultMinRate, MaxStall: DefaultMaxStall})
	if len(why) != 2 || why[0] != "303 execs/s overall, below 1000" || why[1] != "3s at 0 execs/s from 6s" {
		t.Errorf("Slow = %q", why)
	}
	if why := s.slow(Limits{MinRate: 300, MaxStall: 4 * time.Second}); why != nil {
		t.Errorf("under lower limits: %q", why)
	}
	if why := s.slow(Limits{}); why != nil {
		t.Errorf("no limits: %q", why)
	}
}

// TestSpeedClean reads an 11 s FuzzPatchCRC run: never at 0/sec.
func TestSpeedClean(t *testing.T) {
	s, n := speedOf(t, "patchcrc-clean.log")
	if n != 4 || s.Stall != 0 || s.rate() != 364266/11 {
		t.Fatalf("%d lines, stall %s, rate %d", n, s.Stall, s.rate())
	}
	if why := s.slow(Limits{MinRate: DefaultMinRate, MaxStall: DefaultMaxStall}); why != nil {
		t.Errorf("Slow = %q", why)
	}
}

// TestSpeedStretch: consecutive 0/sec lines make one stretch, measured from
// the status line before the first (the baseline line counts: each rate
// covers the interval since the previous line); a line with execs ends it.
func TestSpeedStretch(t *testing.T) {
	var s Speed
	for _, l := range []string{
		"fuzz: elapsed: 0s, gathering baseline coverage: 0/3 completed",
		"fuzz: elapsed: 2s, gathering baseline coverage: 3/3 completed, now fuzzing with 2 workers",
		"fuzz: elapsed: 3s, execs: 40 (40/sec), new interesting: 0 (total: 3)",
		"fuzz: elapsed: 6s, execs: 40 (0/sec), new interesting: 1 (total: 4)",
		"fuzz: elapsed: 9s, execs: 40 (0/sec), new interesting: 1 (total: 4)",
		"fuzz: elapsed: 12s, execs: 41 (0/sec), new interesting: 2 (total: 5)",
		"fuzz: elapsed: 15s, execs: 9000 (2986/sec), new interesting: 2 (total: 5)",
		"fuzz: elapsed: 18s, execs: 9000 (0/sec), new interesting: 2 (total: 5)",
	} {
		s.add(l)
	}
	if s.Stall != 9*time.Second || s.StallFrom != 3*time.Second {
		t.Errorf("stall %s from %s, want 9s from 3s", s.Stall, s.StallFrom)
	}
	var b Speed
	b.add("fuzz: elapsed: 4s, gathering baseline coverage: 9/9 completed, now fuzzing with 2 workers")
	b.add("fuzz: elapsed: 6s, execs: 9 (0/sec), new interesting: 0 (total: 9)")
	if b.Stall != 2*time.Second || b.StallFrom != 4*time.Second {
		t.Errorf("after baseline: stall %s from %s, want 2s from 4s", b.Stall, b.StallFrom)
	}
}

func TestSummaryFlagsSlow(t *testing.T) {
	s, _ := speedOf(t, "fuzzdump-stalls.log")
	rs := []Result{
		{Target: Target{Rel: "./cmd/mirrorpath", Name: "FuzzDump"}, Speed: s},
		{Target: Target{Rel: "./codec", Name: "FuzzA"}, Speed: Speed{Last: Progress{Elapsed: 10 * time.Second, Execs: 500000}}},
		{Target: Target{Rel: "./psm", Name: "FuzzB"}, Failed: true, Tail: "panic: boom", Speed: s},
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, rs, Limits{MinRate: DefaultMinRate, MaxStall: DefaultMaxStall}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"FuzzDump  ok      21s        6376    303      7                67      0         3s           SLOW",
		"500000  50000    0                0       0         0s           ok",
		"warning: ./cmd/mirrorpath FuzzDump is slow: 303 execs/s overall, below 1000; 3s at 0 execs/s from 6s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FuzzB is slow") || strings.Contains(out, "FuzzA is slow") {
		t.Errorf("a failed or fast target flagged:\n%s", out)
	}
}

func TestValidMinimize(t *testing.T) {
	for s, want := range map[string]bool{"1000x": true, "0x": true, "5s": true, "0": true, "1m30s": true,
		"x": false, "-1x": false, "-5s": false, "tenx": false, "1.5x": false, "": false, "5": false} {
		if ValidMinimize(s) != want {
			t.Errorf("ValidMinimize(%q) = %v", s, !want)
		}
	}
}
