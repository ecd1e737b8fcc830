package psm

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// The producer-state checks that are not plain sequences of appends, each run
// on the Model and on the Store; the sequences are in testdata/sequences
// (TestSequences).

func TestRejectedBatchLeavesStateUnchanged(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 2), txnData(2, 0, 0, 1))
		h.ok(Coordinator, marker(2, 0, false, 3))
		// h.fails compares the whole state before and after.
		h.fails(kafkaerr.InvalidTxnState, Replication, data(1, 0, 2, 1))
		h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(1, 0, 7, 1))
		h.fails(kafkaerr.TransactionCoordinatorFenced, Coordinator, marker(2, 0, false, 1))
		// Inside one append: a rejected batch leaves the earlier ones of the append in place.
		a := h.m.Begin(h.p, Replication)
		b1 := txnData(1, 0, 2, 1)
		b1.BaseOffset = h.next
		if _, err := a.Add(&b1); err != nil {
			t.Fatal(err)
		}
		bad := data(1, 0, 3, 1)
		bad.BaseOffset = h.next + 1
		if _, err := a.Add(&bad); err != kafkaerr.InvalidTxnState {
			t.Fatalf("got %v", err)
		}
		a.Commit()
		if in := h.producer(1); in.NumBatches != 2 || in.LastSeq() != 2 {
			t.Fatalf("after partial append %+v", in)
		}
	})
}

func TestVerificationGuard(t *testing.T) {
	forEachImpl(t, Options{VerifyTransactions: true}, func(t *testing.T, h *harness) {
		h.fails(kafkaerr.InvalidTxnState, Client, txnData(1, 0, 0, 1)) // no guard at all
		g := h.verify(1, 5, 0, TV0, 0)
		if g == 0 {
			t.Fatal("sentinel guard for a producer with no open txn")
		}
		if g2 := h.verify(1, 3, 0, TV0, 0); g2 != g {
			t.Fatalf("existing entry got a new guard %d != %d", g2, g)
		}
		// Wrong guard.
		a := h.m.Begin(h.p, Client)
		a.SetGuard(g + 100)
		if _, err := a.Add(ref(txnData(1, 0, 3, 1))); err != kafkaerr.InvalidTxnState {
			t.Fatalf("wrong guard: %v", err)
		}
		a.Abort()
		// Right guard, but a sequence above the lowest one being verified (3).
		a = h.m.Begin(h.p, Client)
		a.SetGuard(g)
		if _, err := a.Add(ref(txnData(1, 0, 5, 1))); err != kafkaerr.OutOfOrderSequenceNumber {
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
		if g := h.verify(1, 4, 0, TV0, 0); g != 0 {
			t.Fatalf("open txn got guard %d", g)
		}
		h.ok(Client, txnData(1, 0, 4, 1))
		// Non-transactional and replicated data need no guard.
		h.ok(Client, data(2, 0, 0, 1))
		h.ok(Replication, txnData(3, 0, 0, 1))
		// Verification entries expire like producers: pid 4's (age = expiration) goes, pid 5's stays.
		g4 := h.verify(4, 0, 0, TV0, 0)
		g5 := h.verify(5, 0, 0, TV0, 1)
		h.m.ExpireProducers(h.p, DefaultExpirationMs)
		a = h.m.Begin(h.p, Client)
		a.SetGuard(g4)
		if _, err := a.Add(ref(txnData(4, 0, 0, 1))); err != kafkaerr.InvalidTxnState {
			t.Fatalf("expired guard still verified: %v", err)
		}
		a.SetGuard(g5)
		if _, err := a.Add(ref(txnData(5, 0, 0, 1))); err != nil {
			t.Fatalf("unexpired guard: %v", err)
		}
		a.Abort()
	})
}
