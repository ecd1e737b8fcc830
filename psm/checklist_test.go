package psm

import (
	"math"
	"testing"
)

// The producer-state rules of docs/producer-state.md, one test per rule,
// each run on the Model and on the Store.

func TestUnknownPIDAcceptsAnyEpochAndSequence(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(7, 3, 42, 4))
		in := h.producer(7)
		if in.Epoch != 3 || in.LastSeq() != 45 || in.NumBatches != 1 || in.LastTimestamp != 1000 {
			t.Fatalf("entry %+v", in)
		}
		if w := in.Batches[0]; w.FirstOffset() != 0 || w.LastOffset != 3 || w.FirstSeq() != 42 {
			t.Fatalf("batch %+v", w)
		}
		h.ok(Client, data(8, 0, math.MaxInt32-1, 3)) // a fresh producer may even start across the wrap
		if got := h.producer(8).LastSeq(); got != 0 {
			t.Fatalf("wrapped last seq %d", got)
		}
	})
}

func TestSameEpochSequenceMustFollowWithWrap(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 5))
		h.fails(ErrOutOfOrderSequence, Client, data(1, 0, 6, 1)) // gap
		h.fails(ErrOutOfOrderSequence, Client, data(1, 0, 4, 1)) // overlap
		h.ok(Client, data(1, 0, 5, 1))

		h.ok(Client, data(2, 0, math.MaxInt32-10, 11)) // ends at MAX
		h.fails(ErrOutOfOrderSequence, Client, data(2, 0, 1, 1))
		h.ok(Client, data(2, 0, 0, 1)) // MAX -> 0

		h.ok(Client, data(3, 0, 0, 1))
		h.ok(Client, data(3, 0, 1, math.MaxInt32)) // 1 .. MAX
		h.ok(Client, data(3, 0, 0, 10))            // wrap then 0..9
		h.ok(Client, data(4, 0, math.MaxInt32-10, 20))
		if got := h.producer(4).LastSeq(); got != 8 {
			t.Fatalf("batch spanning the wrap: last seq %d, want 8", got)
		}
	})
}

func TestHigherEpochNeedsSequenceZero(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 3))
		h.fails(ErrOutOfOrderSequence, Client, data(1, 1, 3, 1))
		h.ok(Client, data(1, 1, 0, 1))
		if in := h.producer(1); in.Epoch != 1 || in.NumBatches != 1 {
			t.Fatalf("after bump %+v", in)
		}
		// Stored epoch -1 (an entry made by an empty control batch): any sequence.
		empty := marker(2, 5, false, 0)
		empty.RecordsCount = 0
		h.ok(Client, data(9, 0, 0, 1)) // unrelated, keeps offsets moving
		h.ok(Coordinator, empty)
		if in := h.producer(2); in.Epoch != -1 {
			t.Fatalf("empty control batch entry %+v", in)
		}
		h.ok(Client, data(2, 4, 17, 1))
	})
}

func TestLowerEpochRejectedUnlessReplication(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 5, 0, 1))
		h.fails(ErrInvalidProducerEpoch, Client, data(1, 4, 1, 1))
		h.fails(ErrInvalidProducerEpoch, Coordinator, data(1, 4, -1, 1))
		h.fails(ErrInvalidProducerEpoch, Coordinator, marker(1, 4, false, 0))
		h.fails(ErrInvalidProducerEpoch, Client, marker(1, 4, true, 0))
		h.ok(Replication, data(1, 4, 99, 1)) // M2: accepted, window wiped
		if in := h.producer(1); in.Epoch != 4 || in.NumBatches != 1 || in.LastSeq() != 99 {
			t.Fatalf("after replicated regression %+v", in)
		}
		h.ok(Replication, marker(1, 2, false, 0))
		if in := h.producer(1); in.Epoch != 2 || in.NumBatches != 0 {
			t.Fatalf("after replicated marker regression %+v", in)
		}
	})
}

func TestExactDuplicateReturnsOriginalOffsets(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		var at []int64
		for i := range int32(5) {
			r := h.ok(Client, data(1, 0, 3*i, 3))
			at = append(at, r.at[0])
		}
		end := h.next
		for i := range int32(5) {
			r := h.ok(Client, data(1, 0, 3*i, 3))
			d := r.outs[0].Duplicate
			if !d.Found || d.FirstOffset != at[i] || d.LastOffset != at[i]+2 || d.Timestamp != 1000 {
				t.Fatalf("duplicate of batch %d: %+v, want offsets %d..%d", i, d, at[i], at[i]+2)
			}
		}
		if h.next != end {
			t.Fatalf("duplicates moved the log end %d -> %d", end, h.next)
		}
		if in := h.producer(1); in.NumBatches != 5 || in.LastSeq() != 14 {
			t.Fatalf("duplicates changed the entry %+v", in)
		}
		// Only CLIENT deduplicates: a replicated copy is applied (and wipes nothing at the same epoch).
		r := h.ok(Replication, data(1, 0, 12, 3))
		if r.outs[0].Duplicate.Found {
			t.Fatal("REPLICATION batch reported as duplicate")
		}
	})
}

func TestOldOrPartialDuplicateIsOutOfOrder(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		for i := range int32(6) {
			h.ok(Client, data(1, 0, 2*i, 2))
		}
		h.fails(ErrOutOfOrderSequence, Client, data(1, 0, 0, 2)) // 6th newest
		h.fails(ErrOutOfOrderSequence, Client, data(1, 0, 2, 1)) // partial: first matches, last does not
		h.fails(ErrOutOfOrderSequence, Client, data(1, 0, 3, 1)) // partial: last matches, first does not
		// Same sequences under another epoch: not a duplicate, and a bump needs seq 0.
		h.fails(ErrOutOfOrderSequence, Client, data(1, 1, 10, 2))
		r := h.ok(Client, data(1, 1, 0, 2))
		if r.outs[0].Duplicate.Found {
			t.Fatal("duplicate across epochs")
		}
	})
}

func TestWindowKeepsFiveBatchesAndEpochChangeClears(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		for i := range int32(8) {
			h.ok(Client, data(1, 0, i, 1))
		}
		in := h.producer(1)
		if in.NumBatches != 5 || in.Batches[0].LastSeq != 3 || in.Batches[4].LastSeq != 7 {
			t.Fatalf("window %+v", in.Window())
		}
		// Several batches of one producer in one append fill the window in order.
		h.ok(Replication, data(1, 0, 8, 1), data(1, 0, 9, 1), data(1, 0, 10, 1))
		if in := h.producer(1); in.NumBatches != 5 || in.Batches[0].LastSeq != 6 || in.Batches[4].LastSeq != 10 {
			t.Fatalf("window after multi-batch append %+v", in.Window())
		}
		h.ok(Client, data(1, 1, 0, 1))
		if in := h.producer(1); in.NumBatches != 1 || in.Epoch != 1 {
			t.Fatalf("epoch change kept the window %+v", in)
		}
	})
}

func TestMarkerOnlyProducerThenData(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Coordinator, marker(1, 3, false, 0))
		if in := h.producer(1); in.Epoch != 3 || in.LastSeq() != -1 || in.TxnFirstOffset != -1 {
			t.Fatalf("marker-only entry %+v", in)
		}
		h.fails(ErrOutOfOrderSequence, Client, data(1, 3, 17, 1))
		h.fails(ErrInvalidProducerEpoch, Client, data(1, 2, 0, 1))
		h.ok(Client, data(1, 3, 0, 1))

		// Data, then a same-epoch marker: the next data continues at lastSeq+1.
		h.ok(Client, txnData(2, 0, 0, 4))
		h.ok(Coordinator, marker(2, 0, false, 0))
		h.fails(ErrOutOfOrderSequence, Client, data(2, 0, 0, 1))
		h.ok(Client, data(2, 0, 4, 1))
	})
}

func TestMarkerWithBumpedEpochClearsCache(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 4))
		h.ok(Coordinator, marker(1, 1, true, 0))
		if in := h.producer(1); in.Epoch != 1 || in.NumBatches != 0 {
			t.Fatalf("after bumped marker %+v", in)
		}
		h.fails(ErrOutOfOrderSequence, Client, data(1, 1, 4, 1))
		h.ok(Client, data(1, 1, 0, 1))
	})
}

func TestNonTransactionalDataInOpenTxnIsInvalidTxnState(t *testing.T) {
	for _, origin := range []Origin{Client, Coordinator, Replication} {
		t.Run("origin="+origin.String(), func(t *testing.T) {
			forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
				h.ok(Client, txnData(1, 0, 0, 2))
				seq := int32(2)
				if origin == Coordinator {
					seq = -1
				}
				h.fails(ErrInvalidTxnState, origin, data(1, 0, seq, 1))
				h.ok(origin, txnData(1, 0, seq, 1)) // transactional data is fine
			})
		})
	}
}

func TestCoordinatorEpochFencing(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 1))
		h.ok(Coordinator, marker(1, 0, false, 5))
		h.ok(Client, txnData(1, 0, 1, 1))
		h.fails(ErrTransactionCoordinatorFenced, Coordinator, marker(1, 0, false, 4))
		h.fails(ErrTransactionCoordinatorFenced, Client, marker(1, 0, false, 4))
		h.ok(Coordinator, marker(1, 0, false, 5)) // equal is fine
		h.ok(Client, txnData(1, 0, 2, 1))
		h.ok(Coordinator, marker(1, 0, true, 6))  // higher is fine
		h.ok(Replication, marker(1, 0, false, 2)) // KAFKA-9144: accepted on replication
		if in := h.producer(1); in.CoordinatorEpoch != 2 {
			t.Fatalf("coordinator epoch %d, want the replicated 2", in.CoordinatorEpoch)
		}
	})
}

func TestEmptyControlBatchAndMarkerWithoutTxn(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 1))
		empty := marker(1, 9, false, 9)
		empty.RecordsCount = 0
		r := h.ok(Coordinator, empty)
		if in := h.producer(1); in.Epoch != 0 || in.CoordinatorEpoch != -1 || r.outs[0].TxnCompleted {
			t.Fatalf("empty control batch changed %+v", in)
		}
		r = h.ok(Coordinator, marker(1, 2, true, 7))
		if r.outs[0].TxnCompleted || len(r.c.Completed) != 0 || len(r.c.Aborted) != 0 {
			t.Fatalf("marker without a txn completed something: %+v", r)
		}
		if in := h.producer(1); in.Epoch != 2 || in.CoordinatorEpoch != 7 || in.LastTimestamp != 2000 {
			t.Fatalf("marker without a txn did not update the entry: %+v", in)
		}
		other := marker(1, 2, false, 7)
		other.ControlType = 2 // LEADER_CHANGE on a data partition
		h.fails(ErrUnknownServerError, Coordinator, other)
	})
}

func TestRejectedBatchLeavesStateUnchanged(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 2), txnData(2, 0, 0, 1))
		h.ok(Coordinator, marker(2, 0, false, 3))
		// h.fails compares the whole state before and after.
		h.fails(ErrInvalidTxnState, Replication, data(1, 0, 2, 1))
		h.fails(ErrOutOfOrderSequence, Client, txnData(1, 0, 7, 1))
		h.fails(ErrTransactionCoordinatorFenced, Coordinator, marker(2, 0, false, 1))
		// Inside one append: a rejected batch leaves the earlier ones of the append in place.
		a := h.m.Begin(h.p, Replication)
		b1 := txnData(1, 0, 2, 1)
		b1.BaseOffset = h.next
		if _, err := a.Add(&b1); err != nil {
			t.Fatal(err)
		}
		bad := data(1, 0, 3, 1)
		bad.BaseOffset = h.next + 1
		if _, err := a.Add(&bad); err != ErrInvalidTxnState {
			t.Fatalf("got %v", err)
		}
		a.Commit()
		if in := h.producer(1); in.NumBatches != 2 || in.LastSeq() != 2 {
			t.Fatalf("after partial append %+v", in)
		}
	})
}

func TestCoordinatorOriginSkipsSequence(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Coordinator, txnData(1, 0, -1, 1))
		h.ok(Coordinator, txnData(1, 0, -1, 1))
		h.ok(Coordinator, marker(1, 0, false, 0))
		h.ok(Coordinator, data(1, 0, -1, 3))
		if in := h.producer(1); in.LastSeq() != -1 || in.NumBatches != 3 {
			t.Fatalf("entry %+v", in)
		}
		// CLIENT would have refused the same gap.
		h.ok(Client, data(2, 0, 0, 1))
		h.fails(ErrOutOfOrderSequence, Client, data(2, 0, 5, 1))
		h.ok(Coordinator, data(2, 0, 5, 1))
	})
}

func TestVerificationGuard(t *testing.T) {
	forEachImpl(t, Options{VerifyTransactions: true}, func(t *testing.T, h *harness) {
		h.fails(ErrInvalidTxnState, Client, txnData(1, 0, 0, 1)) // no guard at all
		g := h.m.StartVerification(h.p, 1, 5, 0, 0)
		if g == 0 {
			t.Fatal("sentinel guard for a producer with no open txn")
		}
		if g2 := h.m.StartVerification(h.p, 1, 3, 0, 0); g2 != g {
			t.Fatalf("existing entry got a new guard %d != %d", g2, g)
		}
		// Wrong guard.
		a := h.m.Begin(h.p, Client)
		a.SetGuard(g + 100)
		if _, err := a.Add(ref(txnData(1, 0, 3, 1))); err != ErrInvalidTxnState {
			t.Fatalf("wrong guard: %v", err)
		}
		a.Abort()
		// Right guard, but a sequence above the lowest one being verified (3).
		a = h.m.Begin(h.p, Client)
		a.SetGuard(g)
		if _, err := a.Add(ref(txnData(1, 0, 5, 1))); err != ErrOutOfOrderSequence {
			t.Fatalf("seq above lowest: %v", err)
		}
		b := txnData(1, 0, 3, 1)
		b.BaseOffset = h.next
		if _, err := a.Add(&b); err != nil {
			t.Fatalf("verified append: %v", err)
		}
		a.Commit()
		h.next++
		// Open txn at this epoch: the sentinel, and no guard needed.
		if g := h.m.StartVerification(h.p, 1, 4, 0, 0); g != 0 {
			t.Fatalf("open txn got guard %d", g)
		}
		h.ok(Client, txnData(1, 0, 4, 1))
		// Non-transactional and replicated data need no guard.
		h.ok(Client, data(2, 0, 0, 1))
		h.ok(Replication, txnData(3, 0, 0, 1))
		// Verification entries expire like producers: pid 4's (age = expiration) goes, pid 5's stays.
		g4 := h.m.StartVerification(h.p, 4, 0, 0, 0)
		g5 := h.m.StartVerification(h.p, 5, 0, 0, 1)
		h.m.ExpireProducers(h.p, DefaultExpirationMs)
		a = h.m.Begin(h.p, Client)
		a.SetGuard(g4)
		if _, err := a.Add(ref(txnData(4, 0, 0, 1))); err != ErrInvalidTxnState {
			t.Fatalf("expired guard still verified: %v", err)
		}
		a.SetGuard(g5)
		if _, err := a.Add(ref(txnData(5, 0, 0, 1))); err != nil {
			t.Fatalf("unexpired guard: %v", err)
		}
		a.Abort()
	})
}
