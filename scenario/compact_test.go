package scenario

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// TestCleanKeepsWhatTheCleanerKeeps checks the log scenarios/46 leaves on B
// after the cleaner: i's five records (the aborted records after them for
// the same keys shadow nothing), none of tx's, the ABORT marker, and tx's
// batch kept empty as the last batch of PID 5 where producer state holds
// PID 5 (Cleaner#isBatchLastRecordOfProducer): under verbatim; under barrier
// the barrier, which cleared PID 5, so the emptied batch goes.
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
			wantBarriers, wantEmpty := 0, 1
			if st == "barrier" {
				wantBarriers, wantEmpty = 1, 0
			}
			if records["i"] != 5 || records["tx"] != 0 || empty != wantEmpty || aborts != 1 || barriers != wantBarriers {
				t.Errorf("%s: records %v, %d empty batches, %d ABORT markers, %d barriers; want i:5, %d empty, one ABORT, %d barriers",
					st, records, empty, aborts, barriers, wantEmpty, wantBarriers)
			}
		}
	}
}
