package psm

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// The transaction-version rules of a COMMIT or ABORT marker
// (ProducerAppendInfo#appendEndTxnMarker and #checkProducerEpoch, Kafka 4.2
// and later: KIP-1228, KAFKA-19446, KAFKA-19999), each run on the Model and
// on the Store.

// tvMarker is marker stating transaction version tv.
func tvMarker(pid int64, epoch int16, abort bool, coordEpoch int32, tv TxnVersion) Batch {
	b := marker(pid, epoch, abort, coordEpoch)
	b.TxnVersion = tv
	return b
}

// ProducerAppendInfo#checkProducerEpoch, transactionVersion >= 2: the
// coordinator bumps the epoch before it writes the marker, so a marker at
// the epoch of the open transaction is late or duplicate and refused; one
// above it closes the transaction and becomes the producer's epoch, which
// empties the duplicate window, so the next transaction starts at seq 0.
func TestTV2MarkerEpochAboveProducer(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 3))
		h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(1, 0, false, 0, TV2))
		r := h.ok(Coordinator, tvMarker(1, 1, false, 0, TV2))
		if !r.outs[0].TxnCompleted || r.outs[0].Completed.Aborted {
			t.Fatalf("TV2 COMMIT at epoch + 1 did not complete the transaction: %+v", r.outs[0])
		}
		in := h.producer(1)
		if in.Epoch != 1 || in.NumBatches != 0 || in.TxnFirstOffset != -1 {
			t.Fatalf("after the TV2 marker: %+v, want epoch 1, no cached batch, no open transaction", in)
		}
		h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(1, 1, 3, 1))
		h.ok(Client, txnData(1, 1, 0, 1))
	})
}

// ProducerAppendInfo#checkProducerEpoch, transactionVersion 0 and 1: a
// marker's epoch must not be below the producer's; the epoch of the
// transaction's data is accepted.
func TestTV0MarkerEpochNotBelowProducer(t *testing.T) {
	for _, tv := range []TxnVersion{TV0, TV1} {
		t.Run(tv.String(), func(t *testing.T) {
			forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
				h.ok(Client, txnData(1, 2, 0, 3))
				h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(1, 1, true, 0, tv))
				r := h.ok(Coordinator, tvMarker(1, 2, true, 0, tv))
				if !r.outs[0].TxnCompleted || !r.outs[0].Completed.Aborted {
					t.Fatalf("ABORT at the producer's epoch did not abort: %+v", r.outs[0])
				}
				if in := h.producer(1); in.Epoch != 2 || in.NumBatches != 1 {
					t.Fatalf("a marker at the same epoch changed the window: %+v", in)
				}
			})
		})
	}
}

// KAFKA-19999 (#checkProducerEpoch): a TV2 marker at the producer's epoch
// with no transaction open is a retried marker (coordinator failover, lost
// response) and is accepted; with a transaction open at that epoch it is
// refused, and a lower epoch always is.
func TestTV2RetriedMarker(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 1))
		h.ok(Coordinator, tvMarker(1, 1, false, 0, TV2))
		r := h.ok(Coordinator, tvMarker(1, 1, false, 0, TV2))
		if r.outs[0].TxnCompleted {
			t.Fatal("a retried marker completed a transaction")
		}
		h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(1, 0, false, 0, TV2))
		h.ok(Client, txnData(1, 1, 0, 1)) // the next transaction, at the bumped epoch
		h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(1, 1, true, 0, TV2))
		// The retry rule reads the pending entry: inside one append, a marker
		// that closes the transaction lets a retry of it through.
		h.ok(Coordinator, tvMarker(1, 2, true, 0, TV2), tvMarker(1, 2, true, 0, TV2))
	})
}

// ProducerAppendInfo#appendEndTxnMarker: a marker from COORDINATOR (or
// CLIENT) must state its transaction version (IllegalArgumentException,
// UNKNOWN_SERVER_ERROR on the wire). A replicated marker states none and is
// checked as TV0: the leader checked it.
func TestMarkerWithoutTxnVersion(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 1))
		h.fails(ErrMarkerWithoutTxnVersion, Coordinator, tvMarker(1, 0, true, 0, TVUnknown))
		h.fails(ErrMarkerWithoutTxnVersion, Coordinator, tvMarker(1, 1, true, 0, TVUnknown))
		h.fails(ErrMarkerWithoutTxnVersion, Client, tvMarker(1, 1, true, 0, TVUnknown))
		r := h.ok(Replication, tvMarker(1, 0, true, 0, TVUnknown))
		if !r.outs[0].TxnCompleted {
			t.Fatal("a replicated marker stating no version did not complete the transaction")
		}
		// REPLICATION never refuses an epoch, even a lower one.
		h.ok(Replication, txnData(2, 3, 0, 1))
		h.ok(Replication, tvMarker(2, 1, true, 0, TV2))
	})
}

// Options.Release: before Kafka 4.2 the partition leader is not told a
// marker's version (WriteTxnMarkers v2, KIP-1228), so every marker follows
// the TV0/TV1 rule, and one stating none is accepted.
func TestReleaseMarkerTxnVersion(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{Release: rel}, func(t *testing.T, h *harness) {
				h.ok(Client, txnData(1, 0, 0, 1), txnData(2, 0, 0, 1))
				if rel == Kafka4 {
					h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(1, 0, true, 0, TV2))
					h.fails(ErrMarkerWithoutTxnVersion, Coordinator, tvMarker(2, 0, true, 0, TVUnknown))
					return
				}
				h.ok(Coordinator, tvMarker(1, 0, true, 0, TV2))
				h.ok(Coordinator, tvMarker(2, 0, true, 0, TVUnknown))
				h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, tvMarker(2, -1, true, 0, TV2))
			})
		})
	}
}

// ProducerAppendInfo#checkSequence, transaction version 2 (Kafka 4.1 and
// later, KAFKA-18202): when the producer's verification entry supports the
// epoch bump (VerificationStateEntry#supportsEpochBump, set by the TV2
// produce request that created it) and the producer's committed entry
// caches no batch, a CLIENT batch must start at sequence 0:
// OUT_OF_ORDER_SEQUENCE_NUMBER otherwise. Kafka 3.x and 4.0 accept any
// sequence from a producer the partition does not know.
func TestTV2VerifiedProducerWithoutStateStartsAtZero(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{Release: rel}, func(t *testing.T, h *harness) {
				h.verify(1, 3, 0, TV2, 0)
				if rel == Kafka4 || rel == Kafka41 { // 4.1 and later
					h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(1, 0, 3, 1))
					h.ok(Client, txnData(1, 0, 0, 1))
				} else {
					h.ok(Client, txnData(1, 0, 3, 1))
				}
				// The committed entry now caches a batch: the rule is off and
				// the sequence continues as usual.
				last := h.producer(1).Batches[0].LastSeq
				h.ok(Client, txnData(1, 0, last+1, 1))
			})
		})
	}
}

// The rule reads the entry's flag, fixed when the entry was created
// (ProducerStateManager#maybeCreateVerificationStateEntry creates it once
// and then only updates its lowest sequence and epoch): an entry created by
// a TV0 or TV1 request never requires sequence 0, even after a TV2 request;
// one created by a TV2 request always does. Only CLIENT batches are checked.
func TestTV2SupportsEpochBumpSetAtCreation(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{Release: rel}, func(t *testing.T, h *harness) {
				for _, tv := range []TxnVersion{TVUnknown, TV0, TV1} {
					h.verify(1, 3, 0, tv, 0)
				}
				h.verify(1, 3, 0, TV2, 0)
				h.ok(Client, txnData(1, 0, 3, 1))

				h.verify(2, 3, 0, TV2, 0)
				h.verify(2, 3, 0, TV0, 0)
				if rel == Kafka4 || rel == Kafka41 { // 4.1 and later
					h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(2, 0, 3, 1))
				} else {
					h.ok(Client, txnData(2, 0, 3, 1))
				}

				h.verify(4, 3, 0, TV2, 0)
				h.ok(Replication, txnData(4, 0, 3, 1))
			})
		})
	}
}
