package psm

import "testing"

// TestBarrierPrototypeLaterBatchesStartEmpty: under Prototype a batch after
// the barrier of a producer that has no pending update in the append reads
// the table the barrier cleared (LogLoader's loadProducersFromRecords:
// prepareUpdate after the clear finds no entry), not the pre-barrier
// committed entry; an update already pending before the barrier is kept.
func TestBarrierPrototypeLaterBatchesStartEmpty(t *testing.T) {
	for _, mode := range []BarrierApply{Exact, Prototype} {
		forEachImpl(t, Options{BarrierApply: mode}, func(t *testing.T, h *harness) {
			h.ok(Replication, txnData(3, 2, 0, 1))
			h.ok(Replication, marker(3, 2, false, 5))
			h.ok(Replication, data(1, 0, 0, 1), barrierBatch(), data(3, 2, 7, 1), data(1, 0, 1, 1))
			in := h.producer(3)
			if in.NumBatches != 1 || in.Batches[0].LastSeq != 7 || in.Epoch != 2 || in.CoordinatorEpoch != -1 {
				t.Fatalf("mode %d: PID 3 after the barrier %+v, want a fresh entry with one batch (seq 7)", mode, in)
			}
			want := 1 // Exact: PID 1 starts again after the barrier
			if mode == Prototype {
				want = 2 // the pending pre-barrier update is resurrected
			}
			if in := h.producer(1); in.NumBatches != want {
				t.Fatalf("mode %d: PID 1 %+v, want %d batches", mode, in, want)
			}
		})
	}
}
