package cputime

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// failEnv makes the child of TestRoundsApartChildFails fail in one round.
const failEnv = "MIRRORPATH_TEST_FAIL_ROUND"

// TestRoundsApart: each round runs in a process of its own, in round order,
// with a one-round plan and its index, and only the result lines of each
// reach the output.
func TestRoundsApart(t *testing.T) {
	if r, child, err := ChildRound(); child {
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParsePlan(os.Getenv(PlanEnv))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("goos: test\nnot a result\nBenchmarkRound/round=%d/rounds=%d/pid=%d-1\t1\t1.00 ns/op\n", r, p.Rounds, os.Getpid())
		return
	}
	var out bytes.Buffer
	plan := Plan{Rounds: 3, Slices: 4, Slice: time.Millisecond}
	if err := RoundsApart(t.Context(), "^TestRoundsApart$", plan, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q: want one result line per round", out.String())
	}
	pids := map[string]bool{fmt.Sprint(os.Getpid()): true}
	for r, line := range lines {
		var round, rounds, pid int
		if _, err := fmt.Sscanf(line, "BenchmarkRound/round=%d/rounds=%d/pid=%d-1", &round, &rounds, &pid); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if round != r || rounds != 1 {
			t.Errorf("line %d: round %d of a plan of %d rounds, want round %d of 1", r, round, rounds, r)
		}
		pids[fmt.Sprint(pid)] = true
	}
	if len(pids) != 4 {
		t.Errorf("processes %v: want three children apart from each other and from the test", pids)
	}
}

// TestRoundsApartChildFails: a round whose process fails ends the run with
// an error naming the round and carrying the process's output.
func TestRoundsApartChildFails(t *testing.T) {
	if r, child, _ := ChildRound(); child {
		if fmt.Sprint(r) == os.Getenv(failEnv) {
			fmt.Println("the child's own words")
			os.Exit(1)
		}
		fmt.Printf("BenchmarkRound/round=%d-1\t1\t1.00 ns/op\n", r)
		return
	}
	t.Setenv(failEnv, "1")
	var out bytes.Buffer
	err := RoundsApart(t.Context(), "^TestRoundsApartChildFails$", Plan{Rounds: 3, Slices: 1, Slice: time.Millisecond}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "round 2 of 3") || !strings.Contains(err.Error(), "the child's own words") {
		t.Errorf("err = %v, want round 2 of 3 named with the child's output", err)
	}
	if got := strings.TrimSpace(out.String()); got != "BenchmarkRound/round=0-1\t1\t1.00 ns/op" {
		t.Errorf("output %q: want round 1's line only", got)
	}
}

// TestRoundsApartNoResult: a child that prints no result line is an error,
// not a round of nothing.
func TestRoundsApartNoResult(t *testing.T) {
	if _, child, _ := ChildRound(); child {
		fmt.Println("PASS")
		return
	}
	err := RoundsApart(t.Context(), "^TestRoundsApartNoResult$", Plan{Rounds: 2, Slices: 1, Slice: time.Millisecond}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "round 1 of 2") || !strings.Contains(err.Error(), "no result line") {
		t.Errorf("err = %v, want round 1 of 2 printed no result line", err)
	}
}

// TestChildRound reads roundEnv: absent, a round, or malformed.
func TestChildRound(t *testing.T) {
	if _, child, _ := ChildRound(); child {
		t.Skip("a child of another test")
	}
	for _, c := range []struct {
		v     string
		round int
		bad   bool
	}{{"0", 0, false}, {"19", 19, false}, {"-1", 0, true}, {"x", 0, true}, {"", 0, true}} {
		t.Setenv(roundEnv, c.v)
		r, child, err := ChildRound()
		if !child || r != c.round || (err != nil) != c.bad {
			t.Errorf("%s=%q: round %d, child %v, err %v; want %d, true, error %v", roundEnv, c.v, r, child, err, c.round, c.bad)
		}
	}
	os.Unsetenv(roundEnv)
	if _, child, err := ChildRound(); child || err != nil {
		t.Errorf("without %s: child %v, err %v; want false, nil", roundEnv, child, err)
	}
}
