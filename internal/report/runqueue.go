package report

import "fmt"

// RunQueue is the machine's run queue sampled while the benchmarks ran
// (Linux: procs_running of /proc/stat, the threads running or ready to run
// on every CPU), less the run's own threads.
//
// Figures in process CPU time, paired by round and interleaved in slices,
// cancel most of what other work does to them, so a run beside busy
// neighbours can pass every interval check; its figures are still not
// those of the machine alone (shared caches, memory bandwidth, a
// hyperthread's sibling), and the report says so: the run is NOISY when
// the other threads ready to run averaged more than maxOthersPerCPU per CPU
// (docs/measuring.md, "Noise", rule 4).
type RunQueue struct {
	CPUs    int     `json:"cpus"`
	Samples int     `json:"samples"`
	Others  float64 `json:"mean_others"` // mean of the runnable threads besides the run's own, per sample
	Max     int     `json:"max_others"`
}

// maxOthersPerCPU is the mean number of other runnable threads per CPU
// above which a run is busy: as many as the machine has CPUs. The count is
// procs_running less two (the benchmark's thread and the sampler's), so it
// also holds the run's own other threads when they run (the collector's
// workers, the Go scheduler's spinning threads): on the quiet 2-vCPU
// machine it averaged about 1.6; two busy loops add 2.
const maxOthersPerCPU = 1.0

// busy reports whether the other threads ready to run averaged more than
// maxOthersPerCPU per CPU.
func (q *RunQueue) busy() bool {
	return q.Samples > 0 && q.CPUs > 0 && q.Others > maxOthersPerCPU*float64(q.CPUs)
}

func (q *RunQueue) reason() string {
	return fmt.Sprintf("machine busy: %.2f threads besides the run's own were ready to run on average (%d samples, at most %d) on %d CPUs, more than %.2f a CPU",
		q.Others, q.Samples, q.Max, q.CPUs, maxOthersPerCPU)
}

// String is the Env line of the report.
func (q *RunQueue) String() string {
	return fmt.Sprintf("run queue during the benchmarks: %.2f other threads ready to run on average, at most %d (%d samples, %d CPUs; NOISY above %.2f a CPU)",
		q.Others, q.Max, q.Samples, q.CPUs, maxOthersPerCPU)
}
