package scenario

import (
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// TestAckWaitsForHighWatermark: under acks=all a send is acknowledged only
// once the high watermark passes its batch (DelayedProduce); a paused
// follower in the ISR holds it back, and the sync after resume delivers it.
func TestAckWaitsForHighWatermark(t *testing.T) {
	src := "cluster A replicas=2\ntopic t\npause A t/0 replica=1\nproducer p on A\nsend p t/0 records=5\n" +
		"resume A t/0 replica=1\nsync\n"
	var afterSend, afterSync bool
	runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.opcode != opSend && c.opcode != opSync {
			return false
		}
		b, ok := batchAt(w.byName["A"].part("t/0").lead(), 0)
		if c.opcode == opSend {
			afterSend = ok && w.ackDelivered(b)
		} else {
			afterSync = ok && w.ackDelivered(b)
		}
		return false
	})
	if afterSend || !afterSync {
		t.Fatalf("acknowledged after the send: %v, after the sync: %v; want false, true", afterSend, afterSync)
	}
}

// TestMarkerWrittenAgainAfterLoss: a transaction's data and its COMMIT
// marker, both lost to a clean election before the high watermark passed
// them, are sent again to the new leader (the client's retry, the
// coordinator's WriteTxnMarkers retry): the new leader ends with the data
// and the COMMIT, and no acknowledged write was lost.
func TestMarkerWrittenAgainAfterLoss(t *testing.T) {
	src := "cluster A replicas=2\ntopic t\npause A t/0 replica=1\nproducer tx on A transactional=x\nbegin tx\n" +
		"send tx t/0 records=3\ncommit tx\nelect A t/0 replica=1\nsync\n"
	r := runInline(t, src)
	if len(r.Violations) != 0 || len(r.ClientErrors) != 0 {
		t.Fatalf("violations %+v, client errors %+v; want none", r.Violations, r.ClientErrors)
	}
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, nil)
	var kinds []string
	for _, b := range batchesFrom(w.byName["A"].part("t/0").lead(), 0) {
		switch {
		case !b.IsControl():
			kinds = append(kinds, "data")
		case readTruth(b).control == codec.ControlCommit:
			kinds = append(kinds, "COMMIT")
		default:
			kinds = append(kinds, "other")
		}
	}
	if !slices.Equal(kinds, []string{"data", "COMMIT"}) {
		t.Fatalf("new leader's log %v; want [data COMMIT]", kinds)
	}
}

// TestMarkerRefusalOneRule: a partition's refusal of a transaction marker
// follows one rule whether the marker is written for the first time or sent
// again after a loss (TransactionMarkerRequestCompletionHandler#onComplete):
// INVALID_PRODUCER_EPOCH and TRANSACTION_COORDINATOR_FENCED cancel the
// transaction's markers (TransactionMarkerChannelManager#removeMarkersForTxnId),
// a retriable refusal keeps the marker owed
// (TransactionMarkerRequestCompletionHandlerTest#shouldCompleteDelayedOperationWhenInvalidProducerEpoch,
// #shouldCompleteDelayedOperationWhenCoordinatorEpochFenced,
// #shouldRetryPartitionWhenNotLeaderOrFollowerError).
func TestMarkerRefusalOneRule(t *testing.T) {
	for _, code := range []string{"INVALID_PRODUCER_EPOCH", "TRANSACTION_COORDINATOR_FENCED"} {
		if !markerCancelled(code) {
			t.Errorf("%s does not cancel the markers", code)
		}
	}
	for _, code := range []string{"READ_ONLY_TOPIC", "NOT_LEADER_OR_FOLLOWER", "COORDINATOR_NOT_AVAILABLE", ""} {
		if markerCancelled(code) {
			t.Errorf("%q cancels the markers; want the marker owed", code)
		}
	}

	// First write: the partition holds the producer at epoch 5 (a batch
	// sent at epoch 5), the COMMIT carries epoch 0: INVALID_PRODUCER_EPOCH,
	// and the coordinator stops sending it; nothing is pending or owed.
	src := "set txn-version=1\ncluster A\ntopic t\nproducer tx on A transactional=x\nbegin tx\n" +
		"send tx t/0\nsend tx t/0 epoch=5 seq=0\ncommit tx\nsync\n"
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, nil)
	tx, p := w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	if errs := w.or.clientErrors; len(errs) != 1 || errs[0].Error != "INVALID_PRODUCER_EPOCH" {
		t.Fatalf("first write: client errors %+v, want the COMMIT's INVALID_PRODUCER_EPOCH", errs)
	}
	if tx.open || tx.pending != nil || w.endDecided(tx) || w.owedMarker(p) {
		t.Errorf("first write refused INVALID_PRODUCER_EPOCH: open=%v pending=%+v decided=%v owed=%v, want the markers cancelled",
			tx.open, tx.pending, w.endDecided(tx), w.owedMarker(p))
	}

	// Resend: the COMMIT is written on the leader and lost before the
	// follower has it; the follower, elected, holds the producer at epoch 5,
	// and refuses the COMMIT sent again: the same cancel.
	src = "set txn-version=1\ncluster A replicas=2\ntopic t\nproducer tx on A transactional=x\nbegin tx\n" +
		"send tx t/0\nsync\npause A t/0 replica=1\ncommit tx\nelect A t/0 replica=1\nsync\n"
	var owedBefore bool
	w, _ = runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.opcode != opCommit {
			return false
		}
		pr, p := w.clients["tx"], w.byName["A"].part("t/0")
		d := dataBatch{pid: pr.pid, epoch: 5, seq: 0, records: 1, bytes: defaultSendBytes, txn: true, producer: "forged", ts: w.tick()}
		b, err := d.build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.reps[1].AppendClient(b); err != nil {
			t.Fatalf("follower append at epoch 5: %v", err)
		}
		owedBefore = w.endDecided(w.byName["A"].txn.ids["x"])
		return false
	})
	tx, p = w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	if owedBefore {
		t.Error("the COMMIT is decided before it was lost; want it written")
	}
	if tx.open || tx.pending != nil || w.endDecided(tx) || w.owedMarker(p) {
		t.Errorf("resend refused INVALID_PRODUCER_EPOCH: open=%v pending=%+v decided=%v owed=%v, want the markers cancelled",
			tx.open, tx.pending, w.endDecided(tx), w.owedMarker(p))
	}
	for _, pw := range w.pending {
		if pw.marker && !pw.cancelled {
			t.Errorf("a marker is still pending at offset %d", pw.res.FirstOffset)
		}
	}
}
