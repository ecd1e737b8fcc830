package codec

import (
	"os"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// TestCPUTimeRatios measures the gates of docs/measuring.md in CPU time, which a
// machine shared with other jobs does not inflate by descheduling (wall-clock
// benchmarks there swing ±50%): ParseBatch+VerifyCRC over the bare CRC,
// the O(1) CRC patch, and the uncompressed record walk. Each figure is the
// minimum over 9 interleaved rounds. Opt-in: MIRRORPATH_CPUTIME=1.
func TestCPUTimeRatios(t *testing.T) {
	if os.Getenv("MIRRORPATH_CPUTIME") == "" {
		t.Skip("set MIRRORPATH_CPUTIME=1")
	}
	type job = cputime.Job
	one := cputime.Single
	var jobs []job
	for _, s := range batchSizes {
		bb := benchBatch(s.n)
		n := max(200, (64<<20)/s.n/16)
		jobs = append(jobs,
			job{Name: "crc/batch=" + s.name, N: n, Run: one(func() { _ = Checksum(bb[CRCStart:]) })},
			job{Name: "parseverify/batch=" + s.name, N: n, Run: one(func() {
				p, err := ParseBatch(bb)
				if err != nil || p.VerifyCRC() != nil {
					t.Fatal("invalid")
				}
			})},
			job{Name: "patch/batch=" + s.name, N: 200000, Run: one(func() { bb.SetProducerID(bb.ProducerID() + 1) })},
		)
	}
	wb := walkBench16KiB(t)
	jobs = append(jobs, job{Name: "recordwalk/batch=16KiB", N: 5000, Run: one(func() {
		if _, err := walkBatch(wb); err != nil {
			t.Fatal(err)
		}
	})})
	byName := cputime.MinPerOp(9, jobs)
	for _, j := range jobs {
		t.Logf("%-24s %10.1f ns/op", j.Name, byName[j.Name])
	}
	for _, s := range []string{"16KiB", "1MiB"} {
		t.Logf("parseverify/crc batch=%s: %.3f", s, byName["parseverify/batch="+s]/byName["crc/batch="+s])
	}
	t.Logf("parseverify - crc at 100B: %.1f ns", byName["parseverify/batch=100B"]-byName["crc/batch=100B"])
	for _, s := range batchSizes {
		t.Logf("patch/crc batch=%s: %.3f", s.name, byName["patch/batch="+s.name]/byName["crc/batch="+s.name])
	}
}
