package cputime

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// roundEnv holds, in the environment of a test binary that RoundsApart
// started, the index of the one round it measures (its Plan.First).
const roundEnv = "MIRRORPATH_INTERLEAVE_ROUND"

// ChildRound reports whether this process is one of RoundsApart's, and
// which round it measures. A malformed roundEnv is an error.
func ChildRound() (round int, child bool, err error) {
	v, ok := os.LookupEnv(roundEnv)
	if !ok {
		return 0, false, nil
	}
	r, err := strconv.Atoi(v)
	if err != nil || r < 0 {
		return 0, true, fmt.Errorf("cputime: %s=%q: want a round index (0, 1, …)", roundEnv, v)
	}
	return r, true, nil
}

// RoundsApart measures each of p's rounds in a process of its own: it runs
// the test binary it is called from (os.Args[0]) once per round, in round
// order, with -test.run run, PlanEnv holding p with one round and roundEnv
// the round's index, and copies the go test result lines ("Benchmark…")
// each prints to w. The test in that binary measures one round when
// ChildRound says it is a child, with Plan.First set to the round.
//
// In one process, whatever stays in place for the process's life (for
// instance the physical pages behind the heap's addresses, which the
// runtime keeps and hands out again after each collection) goes with every
// round of it, and
// the rounds of a ratio are then not independent samples: a bias shared by
// all of them is not in their spread, so no interval can show it. A process
// per round puts that variation between rounds, where the interval sees it.
func RoundsApart(ctx context.Context, run string, p Plan, w io.Writer, stderr io.Writer) error {
	if p.Rounds <= 0 {
		return nil
	}
	one := p
	one.Rounds = 1
	args := []string{"-test.run", run, "-test.count", "1"}
	if f := flag.Lookup("test.timeout"); f != nil && f.Value.String() != "0s" {
		args = append(args, "-test.timeout", f.Value.String())
	}
	for r := range p.Rounds {
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), PlanEnv+"="+one.String(), roundEnv+"="+strconv.Itoa(r))
		var errOut bytes.Buffer
		cmd.Stderr = io.MultiWriter(&errOut, stderr)
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("cputime: round %d of %d: %s: %v\n%s", r+1, p.Rounds, os.Args[0], err, tail(out, errOut.Bytes()))
		}
		results := 0
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "Benchmark") && strings.Contains(line, "\t") {
				if _, err := fmt.Fprintln(w, line); err != nil {
					return err
				}
				results++
			}
		}
		if results == 0 {
			return fmt.Errorf("cputime: round %d of %d: %s printed no result line\n%s", r+1, p.Rounds, os.Args[0], tail(out, errOut.Bytes()))
		}
	}
	return nil
}

// tail is the last 2000 bytes of a child's output and of its stderr.
func tail(out, errOut []byte) string {
	const n = 2000
	last := func(b []byte) []byte {
		if len(b) > n {
			return b[len(b)-n:]
		}
		return b
	}
	return string(last(out)) + string(last(errOut))
}
