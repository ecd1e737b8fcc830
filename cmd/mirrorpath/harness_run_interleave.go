package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/internal/cputime"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

// runInterleaveTest is the test of each benchmark package that measures the
// default selection interleaved in slices (cputime.Interleave): every
// configuration a ratio compares alternates with the others in one
// process, so that the two sides of a ratio see the same moments of the
// machine, not two processes seconds apart.
const runInterleaveTest = "^TestInterleavedFigures$"

// runInterleavePlan is the default run's plan: 20 rounds, each of 25
// slices of about 2 ms of CPU time per configuration (50 ms a configuration
// a round, 1 s in all). benchmath's 95% interval of a median needs 6
// rounds; the interval of a ratio's median narrows with more of them, and a
// round or two that ran apart from the others (a slow stretch of the host)
// moves a bootstrap interval of 10 rounds past ±10 %, of 20 much less
// (docs/measuring.md, "Noise").
var runInterleavePlan = cputime.Plan{Rounds: 20, Slices: 25, Slice: 2 * time.Millisecond}

// interleaved runs each binary's TestInterleavedFigures with plan and
// returns the output merged round by round: every binary prints its
// rounds one after the other, and the report pairs the i-th result of two
// configurations only when the file lists every configuration's i-th
// result before any (i+1)-th (report.ParseBench), so round i of every
// binary comes before round i+1 of any. A binary that prints no result
// (a package without the test) is returned in none.
func interleaved(ctx context.Context, bins []benchgate.Binary, plan cputime.Plan, stderr io.Writer) (out []byte, none []string, err error) {
	var outputs []pkgOutput
	for _, b := range bins {
		step := progress(stderr, "run", fmt.Sprintf("benchmarks of %s, %d rounds interleaved in slices of %s", b.ImportPath, plan.Rounds, plan.Slice), nil)
		cmd := exec.CommandContext(ctx, b.Path, "-test.run", runInterleaveTest, "-test.count", "1", "-test.timeout", "30m")
		cmd.Dir = b.Dir
		cmd.Env = append(os.Environ(), cputime.PlanEnv+"="+plan.String())
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		raw, err := cmd.Output()
		if err != nil {
			step("failed")
			return nil, nil, fmt.Errorf("%s: %v\n%s%s", b.ImportPath, err, lastBytes(raw, 2000), lastBytes(errOut.Bytes(), 2000))
		}
		outputs = append(outputs, pkgOutput{b.ImportPath, raw})
		step(fmt.Sprintf("%d results", bytes.Count(raw, []byte("\nBenchmark"))))
	}
	out, none = mergeRounds(outputs, cpuModel())
	return out, none, nil
}

// pkgOutput is one package's benchmark output.
type pkgOutput struct {
	pkg string
	raw []byte
}

// mergeRounds merges the packages' outputs round by round: the n-th result
// line of a name belongs to round n, and round n of every package comes
// before round n+1 of any, each package's lines under its own pkg line.
// Lines that are not results (goos, PASS) are dropped; one goos, goarch
// and cpu head the whole. none lists the packages that printed no result.
func mergeRounds(outputs []pkgOutput, cpu string) (out []byte, none []string) {
	var rounds [][]byte
	for _, o := range outputs {
		n := 0
		seen := map[string]int{}
		for _, line := range strings.Split(string(o.raw), "\n") {
			name, _, isResult := strings.Cut(line, "\t")
			if !isResult || !strings.HasPrefix(name, "Benchmark") {
				continue
			}
			r := seen[name]
			seen[name]++
			for len(rounds) <= r {
				rounds = append(rounds, nil)
			}
			if !bytes.Contains(rounds[r], []byte("pkg: "+o.pkg+"\n")) {
				rounds[r] = append(rounds[r], "pkg: "+o.pkg+"\n"...)
			}
			rounds[r] = append(rounds[r], line+"\n"...)
			n++
		}
		if n == 0 {
			none = append(none, o.pkg)
		}
	}
	var b bytes.Buffer
	b.WriteString("goos: " + runtime.GOOS + "\ngoarch: " + runtime.GOARCH + "\n")
	if cpu != "" {
		b.WriteString("cpu: " + cpu + "\n")
	}
	for _, r := range rounds {
		b.Write(r)
	}
	return b.Bytes(), none
}

// lastBytes is the end of b, at most n bytes.
func lastBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// runQueueSampler samples /proc/stat's procs_running every period until
// stopped: the threads running or ready to run on every CPU. own is the
// count the run itself accounts for (its benchmark thread and the sampler
// reading the file).
type runQueueSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	q    report.RunQueue
}

// runQueueOwn: the benchmark binary's thread and the sampler's own.
const runQueueOwn = 2

func startRunQueue(period time.Duration) *runQueueSampler {
	s := &runQueueSampler{stop: make(chan struct{}), q: report.RunQueue{CPUs: runtime.NumCPU()}}
	if _, ok := procsRunning(); !ok {
		return s // not Linux: nothing to sample
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		sum := 0
		for {
			select {
			case <-s.stop:
				if s.q.Samples > 0 {
					s.q.Others = float64(sum) / float64(s.q.Samples)
				}
				return
			case <-t.C:
				if n, ok := procsRunning(); ok {
					o := max(n-runQueueOwn, 0)
					sum += o
					s.q.Max = max(s.q.Max, o)
					s.q.Samples++
				}
			}
		}
	}()
	return s
}

// Stop ends the sampling; nil when nothing was sampled.
func (s *runQueueSampler) Stop() *report.RunQueue {
	close(s.stop)
	s.done.Wait()
	if s.q.Samples == 0 {
		return nil
	}
	q := s.q
	return &q
}

// procsRunning reads procs_running from /proc/stat.
func procsRunning() (int, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "procs_running "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return n, err == nil
		}
	}
	return 0, false
}
