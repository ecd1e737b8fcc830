package scenario

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// TestCleanKeepsWhatTheCleanerKeeps checks the log scenarios/46 leaves on B
// after the cleaner: i's five records (the aborted records after them for
// the same keys shadow nothing), none of tx's, tx's batch kept empty as the
// last batch of PID 5, the ABORT marker, and under barrier the barrier.
func TestCleanKeepsWhatTheCleanerKeeps(t *testing.T) {
	for _, st := range []string{"verbatim", "barrier"} {
		w := runWorld(t, "../scenarios/46-compaction-aborted-txn.scn", st)
		for _, r := range w.byName["B"].part("c/0").reps {
			records := map[string]int{}
			empty, aborts, barriers := 0, 0, 0
			for _, b := range batchesFrom(r, 0) {
				switch {
				case b.IsControl():
					switch readTruth(b).control {
					case codec.ControlAbort:
						aborts++
					case codec.ControlMirrorPidReset:
						barriers++
					}
				case b.RecordsCount() == 0:
					empty++
					if !b.IsTransactional() || b.ProducerEpoch() != 1 {
						t.Errorf("%s: the empty batch is not tx's (epoch %d)", st, b.ProducerEpoch())
					}
				default:
					records[readTruth(b).producer] += int(b.RecordsCount())
				}
			}
			wantBarriers := 0
			if st == "barrier" {
				wantBarriers = 1
			}
			if records["i"] != 5 || records["tx"] != 0 || empty != 1 || aborts != 1 || barriers != wantBarriers {
				t.Errorf("%s: records %v, %d empty batches, %d ABORT markers, %d barriers; want i:5, one empty, one ABORT, %d barriers",
					st, records, empty, aborts, barriers, wantBarriers)
			}
		}
	}
}
