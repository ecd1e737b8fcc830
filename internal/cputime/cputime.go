// Package cputime measures benchmarks in process CPU time (user + system),
// which a machine shared with other jobs does not inflate by descheduling the
// way it inflates wall time. It serves the opt-in CPU-time tests and the
// cpu-ns/op metric of the hot-path benchmarks.
package cputime

import (
	"syscall"
	"testing"
	"time"
)

// Process returns the CPU time this process has used so far (user + system),
// or 0 when the platform cannot say.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minReported is the least CPU time a benchmark loop must use before Report
// adds its metric: shorter loops (CI's -benchtime=50x) would be dominated by
// the process's background threads.
const minReported = 20 * time.Millisecond

// Report adds the metric cpu-ns/op to b for the loop that started when
// Process returned start.
func Report(b *testing.B, start time.Duration) {
	if used := Process() - start; b.N > 0 && used >= minReported {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// Job is one measured piece of work: Run(n) performs n operations.
type Job struct {
	Name string
	N    int
	Run  func(n int)
}

// Single adapts a one-operation function to Job.Run.
func Single(f func()) func(n int) {
	return func(n int) {
		for range n {
			f()
		}
	}
}

// MinPerOp runs every job once per round, interleaved so that drift of the
// machine touches all jobs alike, and returns each job's least CPU time per
// operation over the rounds, in nanoseconds (fractional: fast paths take a
// few ns).
func MinPerOp(rounds int, jobs []Job) map[string]float64 {
	best := make(map[string]float64, len(jobs))
	for range rounds {
		for _, j := range jobs {
			start := Process()
			j.Run(j.N)
			d := float64(Process()-start) / float64(j.N)
			if prev, ok := best[j.Name]; !ok || d < prev {
				best[j.Name] = d
			}
		}
	}
	return best
}
