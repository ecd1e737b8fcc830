package fuzzcampaign

import (
	"bytes"
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
	names, broken := ParseList([]byte(listOutput))
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
	p, ok := ParseProgress("fuzz: elapsed: 3s, execs: 12345 (4115/sec), new interesting: 3 (total: 20)")
	if !ok || p.Elapsed != 3*time.Second || p.Execs != 12345 || p.PerSec != 4115 || p.NewInteresting != 3 || p.Corpus != 20 {
		t.Fatalf("%+v %v", p, ok)
	}
	for _, line := range []string{
		"fuzz: elapsed: 0s, gathering baseline coverage: 0/20 completed",
		"fuzz: elapsed: 1m3s, execs: x (1/sec), new interesting: 0 (total: 1)",
		"--- FAIL: FuzzX (0.12s)",
		"",
	} {
		if _, ok := ParseProgress(line); ok && !strings.Contains(line, "1m3s") {
			t.Errorf("%q parsed as progress", line)
		}
	}
	if p, ok := ParseProgress("fuzz: elapsed: 1m3s, execs: 7 (0/sec), new interesting: 0 (total: 1)"); !ok || p.Elapsed != 63*time.Second {
		t.Errorf("minutes: %+v %v", p, ok)
	}
}

func TestWriteSummary(t *testing.T) {
	rs := []Result{
		{Target: Target{Rel: "./codec", Name: "FuzzA"}, Last: Progress{Elapsed: 10 * time.Second, Execs: 500000, NewInteresting: 4, Corpus: 30}},
		{Target: Target{Rel: "./psm", Name: "FuzzB"}, Failed: true, Last: Progress{Elapsed: 2 * time.Second, Execs: 100},
			Crashers: []Crasher{{Path: "/m/psm/testdata/fuzz/FuzzB/abc", Repro: "go test -run 'FuzzB/abc' ./psm"}}},
		{Target: Target{Rel: "./pid", Name: "FuzzC"}, Failed: true, Tail: "build failed"},
	}
	var b bytes.Buffer
	if err := WriteSummary(&b, rs); err != nil {
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
