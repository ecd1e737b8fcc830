package psm

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// ProducerStateManager#truncateAndReload clears the producers and the
// transactions and loads a snapshot, but leaves the verification entries
// alone: a guard handed out before a truncation still holds after it, and
// the entry's lowest sequence still bounds the next transactional append.
// Clear and LoadSnapshot are that reload here.
func TestTruncationKeepsVerificationEntries(t *testing.T) {
	for _, reload := range []string{"Clear", "LoadSnapshot"} {
		t.Run(reload, func(t *testing.T) {
			forEachImpl(t, Options{VerifyTransactions: true}, func(t *testing.T, h *harness) {
				h.ok(Client, data(2, 0, 0, 1))
				snap := h.m.AppendSnapshot(nil, h.p)
				g := h.verify(1, 0, 0, TV0, 0)
				if reload == "Clear" {
					h.m.Clear(h.p)
				} else if err := h.m.LoadSnapshot(h.p, snap, 0); err != nil {
					t.Fatal(err)
				}
				// pid 1 is unknown, so only the verification entry (lowest
				// sequence 0) refuses sequence 3; without it the append would
				// be accepted (or refused for its guard).
				a := h.m.Begin(h.p, Client)
				a.SetGuard(g)
				b := txnData(1, 0, 3, 1)
				b.BaseOffset = h.next
				if _, err := a.Add(&b); err != kafkaerr.OutOfOrderSequenceNumber {
					t.Fatalf("seq 3 above the verified lowest 0 after %s: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", reload, err)
				}
				b = txnData(1, 0, 0, 1)
				b.BaseOffset = h.next
				if _, err := a.Add(&b); err != nil {
					t.Fatalf("guard handed out before %s: %v", reload, err)
				}
				a.Commit()
			})
		})
	}
}

// UnifiedLog#hasOngoingTransaction decides whether a transactional batch
// needs a verification guard. Kafka 4.0 (KAFKA-14563) counts an open
// transaction only at the batch's epoch; Kafka 3.x at any epoch.
func TestReleaseOngoingTransactionEpoch(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{VerifyTransactions: true, Release: rel}, func(t *testing.T, h *harness) {
				a := h.m.Begin(h.p, Client)
				a.SetGuard(h.verify(1, 0, 0, TV0, 0))
				b := txnData(1, 0, 0, 1)
				b.BaseOffset = h.next
				if _, err := a.Add(&b); err != nil {
					t.Fatal(err)
				}
				a.Commit()
				h.next++
				// Open transaction at epoch 0; a verification at epoch 1.
				g := h.verify(1, 0, 1, TV0, 0)
				if rel == Kafka3 && g != 0 {
					t.Fatalf("Kafka 3: guard %d for a producer with an open transaction, want the sentinel", g)
				}
				if rel != Kafka3 && g == 0 {
					t.Fatal("Kafka 4: the sentinel for an open transaction at another epoch")
				}
				// Epoch 1's batch without a guard.
				if rel == Kafka3 {
					h.ok(Client, txnData(1, 1, 0, 1))
				} else {
					h.fails(kafkaerr.InvalidTxnState, Client, txnData(1, 1, 0, 1))
				}
			})
		})
	}
}

// ProducerStateManagerTest#testHasLateTransaction: the oldest open
// transaction's producer timestamp decides; completing it hands the
// question to the next one.
func TestHasLateTransaction(t *testing.T) {
	const maxTimeout = 60000
	late := int64(maxTimeout + LateTransactionBufferMs)
	forEachImpl(t, Options{MaxTransactionTimeoutMs: maxTimeout}, func(t *testing.T, h *harness) {
		now := int64(1_700_000_000_000)
		at := func(b Batch) Batch {
			b.MaxTimestamp, b.ControlTimestamp = now, now
			return b
		}
		check := func(want bool) {
			t.Helper()
			if got := h.m.HasLateTransaction(h.p, now); got != want {
				t.Fatalf("HasLateTransaction at %d = %v, want %v", now, got, want)
			}
		}
		h.ok(Client, at(txnData(39, 2, 0, 1)))
		check(false)
		now += 500
		h.ok(Client, at(txnData(57, 9, 0, 1)))
		check(false)
		now += late - 500 // exactly the bound for pid 39: not yet late (>)
		check(false)
		now++
		check(true) // only the first transaction is late
		now += 500
		check(true) // both are
		h.ok(Coordinator, at(marker(39, 2, false, 0)))
		check(true) // pid 57's is late too
		h.ok(Coordinator, at(marker(57, 9, false, 0)))
		check(false)
	})
}

// ProducerStateManagerTest#testHasLateTransactionInitializedAfterReload:
// the open transactions of a loaded snapshot count, with their producers'
// timestamps.
func TestHasLateTransactionAfterSnapshotLoad(t *testing.T) {
	late := int64(DefaultMaxTransactionTimeoutMs + LateTransactionBufferMs)
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		b := txnData(39, 2, 0, 1)
		b.MaxTimestamp = 1_700_000_000_000
		h.ok(Client, b)
		snap := h.m.AppendSnapshot(nil, h.p)
		h.m.Clear(h.p)
		if h.m.HasLateTransaction(h.p, b.MaxTimestamp+late+1) {
			t.Fatal("late transaction after Clear")
		}
		if err := h.m.LoadSnapshot(h.p, snap, b.MaxTimestamp); err != nil {
			t.Fatal(err)
		}
		if h.m.HasLateTransaction(h.p, b.MaxTimestamp+late) || !h.m.HasLateTransaction(h.p, b.MaxTimestamp+late+1) {
			t.Fatal("the loaded open transaction is not late exactly past the bound")
		}
	})
}

// ProducerStateManagerTest#testPrepareUpdateDoesNotMutate: an append's
// batches change nothing committed until Commit, and the pending entry
// (ProducerAppendInfo#toEntry) already holds them: the new scalars and only
// this append's batches. Plain data (the Store's fast path) and a
// transactional batch (its general path) alike.
func TestPendingEntryBeforeCommit(t *testing.T) {
	for _, txn := range []bool{false, true} {
		name := "data"
		if txn {
			name = "txn"
		}
		t.Run(name, func(t *testing.T) {
			forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
				h.ok(Client, data(5, 0, 0, 2))
				a := h.m.Begin(h.p, Client)
				if _, ok := a.Pending(5); ok {
					t.Fatal("pending entry before any batch")
				}
				b := data(5, 0, 2, 3)
				b.Transactional, b.BaseOffset, b.MaxTimestamp = txn, h.next, 1500
				if _, err := a.Add(&b); err != nil {
					t.Fatal(err)
				}
				if got := h.producer(5); got.LastSeq() != 1 || got.NumBatches != 1 || got.TxnFirstOffset != -1 {
					t.Fatalf("committed entry changed before Commit: %+v", got)
				}
				in, ok := a.Pending(5)
				if !ok {
					t.Fatal("no pending entry")
				}
				wantTxn := int64(-1)
				if txn {
					wantTxn = h.next
				}
				if in.ProducerID != 5 || in.Epoch != 0 || in.LastSeq() != 4 || in.NumBatches != 1 ||
					in.LastTimestamp != 1500 || in.TxnFirstOffset != wantTxn || in.Batches[0].LastOffset != h.next+2 {
					t.Fatalf("pending entry %+v", in)
				}
				if _, ok := a.Pending(6); ok {
					t.Fatal("pending entry of a producer with no batch in the append")
				}
				a.Commit()
				if got := h.producer(5); got.LastSeq() != 4 || got.NumBatches != 2 {
					t.Fatalf("after Commit %+v", got)
				}
			})
		})
	}
}
