package psm

import "testing"

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
				g := h.m.StartVerification(h.p, 1, 0, 0, 0)
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
				if _, err := a.Add(&b); err != ErrOutOfOrderSequence {
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
	for _, rel := range []Release{Kafka4, Kafka3} {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{VerifyTransactions: true, Release: rel}, func(t *testing.T, h *harness) {
				a := h.m.Begin(h.p, Client)
				a.SetGuard(h.m.StartVerification(h.p, 1, 0, 0, 0))
				b := txnData(1, 0, 0, 1)
				b.BaseOffset = h.next
				if _, err := a.Add(&b); err != nil {
					t.Fatal(err)
				}
				a.Commit()
				h.next++
				// Open transaction at epoch 0; a verification at epoch 1.
				g := h.m.StartVerification(h.p, 1, 0, 1, 0)
				if rel == Kafka3 && g != 0 {
					t.Fatalf("Kafka 3: guard %d for a producer with an open transaction, want the sentinel", g)
				}
				if rel == Kafka4 && g == 0 {
					t.Fatal("Kafka 4: the sentinel for an open transaction at another epoch")
				}
				// Epoch 1's batch without a guard.
				if rel == Kafka3 {
					h.ok(Client, txnData(1, 1, 0, 1))
				} else {
					h.fails(ErrInvalidTxnState, Client, txnData(1, 1, 0, 1))
				}
			})
		})
	}
}
