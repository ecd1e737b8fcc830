package scenario

import (
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
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
// transaction's markers without completing the transaction
// (TransactionMarkerChannelManager#removeMarkersForTxn), a retriable refusal
// keeps the marker owed
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
	// and the coordinator stops sending it; the COMMIT stays decided.
	w, _ := runSourceUntil(t, "inline", []byte(cancelledCommitSrc), "verbatim", nil, nil)
	tx, p := w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	if errs := w.or.clientErrors; len(errs) != 1 || errs[0].Error != "INVALID_PRODUCER_EPOCH" {
		t.Fatalf("first write: client errors %+v, want the COMMIT's INVALID_PRODUCER_EPOCH", errs)
	}
	wantCancelled(t, "first write refused INVALID_PRODUCER_EPOCH", w, tx, p)

	// Resend: the COMMIT is written on the leader and lost before the
	// follower has it; the follower, elected, holds the producer at epoch 5,
	// and refuses the COMMIT sent again: the same cancel.
	src := "set txn-version=1\ncluster A replicas=2\ntopic t\nproducer tx on A transactional=x\nbegin tx\n" +
		"send tx t/0\nsync\npause A t/0 replica=1\ncommit tx\nelect A t/0 replica=1\nsync\n"
	var owedBefore bool
	w, _ = runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.opcode != opCommit {
			return false
		}
		forgeEpoch5(t, w, w.byName["A"].part("t/0").reps[1])
		owedBefore = w.endDecided(w.byName["A"].txn.ids["x"])
		return false
	})
	tx, p = w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	if owedBefore {
		t.Error("the COMMIT is decided before it was lost; want it written")
	}
	wantCancelled(t, "resend refused INVALID_PRODUCER_EPOCH", w, tx, p)
}

// cancelledCommitSrc: tx's COMMIT on A t/0 is refused at its first write
// with INVALID_PRODUCER_EPOCH (a batch at epoch 5 of the same PID is in
// the log), so the coordinator cancels it.
const cancelledCommitSrc = "set txn-version=1\ncluster A\ntopic t\nproducer tx on A transactional=x\nbegin tx\n" +
	"send tx t/0\nsend tx t/0 epoch=5 seq=0\ncommit tx\nsync\n"

// forgeEpoch5 appends to r a transactional batch of tx's PID at epoch 5.
func forgeEpoch5(t *testing.T, w *world, r replica) {
	t.Helper()
	pr := w.clients["tx"]
	d := dataBatch{pid: pr.pid, epoch: 5, seq: 0, records: 1, bytes: defaultSendBytes, txn: true, producer: "forged", ts: w.tick()}
	b, err := d.build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.AppendClient(b); err != nil {
		t.Fatalf("append at epoch 5: %v", err)
	}
}

// wantCancelled checks that tx's COMMIT was cancelled on p: the outcome
// stays decided at the coordinator (PrepareCommit), no marker of tx is
// owed or pending, and none is sent again.
func wantCancelled(t *testing.T, what string, w *world, tx *txnState, p *partition) {
	t.Helper()
	abort, decided := w.decidedEnd(tx)
	if !decided || abort || tx.pending == nil || !tx.pending.cancelled || !tx.open || !tx.has(p) {
		t.Errorf("%s: open=%v pending=%+v decided=%v abort=%v, want the COMMIT decided, cancelled, on %s",
			what, tx.open, tx.pending, decided, abort, p.key)
	}
	if w.owedMarker(p) {
		t.Errorf("%s: a marker is owed to %s; want none sent again", what, p.key)
	}
	for _, pw := range w.pending {
		if pw.marker && !pw.cancelled {
			t.Errorf("%s: a marker is still pending at offset %d", what, pw.res.FirstOffset)
		}
	}
}

// TestCancelledMarkersKeepPrepareState: after the coordinator cancelled a
// transaction's markers it still holds the decided outcome
// (TransactionMarkerChannelManager#removeMarkersForTxn drops the pending
// completion; maybeWriteTxnCompletion never writes CompleteCommit), so the
// transactional.id answers as in PrepareCommit: InitProducerId
// CONCURRENT_TRANSACTIONS, and again at every retry
// (TransactionCoordinatorTest#shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepareCommitState);
// sync sends nothing; the partition's LSO stays pinned by the transaction
// the COMMIT did not close, which no coordinator holds open (M6).
func TestCancelledMarkersKeepPrepareState(t *testing.T) {
	src := cancelledCommitSrc + "sync\ninit tx\nbegin tx\n"
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, nil)
	tx, p := w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	wantCancelled(t, "after sync, init, begin", w, tx, p)
	var concurrent int
	for _, e := range w.or.clientErrors {
		if e.Error == errConcurrentTxns && e.Producer == "tx" {
			concurrent++
		}
	}
	if concurrent != 2 {
		t.Errorf("CONCURRENT_TRANSACTIONS %d times, want 2 (init, and its retry before begin): %+v", concurrent, w.or.clientErrors)
	}
	if pr := w.clients["tx"]; !pr.needInit || pr.pid != -1 || pr.inTxn {
		t.Errorf("client after init: needInit=%v pid=%d inTxn=%v, want no PID and InitProducerId still to retry", pr.needInit, pr.pid, pr.inTxn)
	}
	if lead := p.lead(); lead.LastStableOffset() >= lead.HighWatermark() {
		t.Errorf("A t/0 LSO %d, high watermark %d: want the LSO pinned by the uncommitted transaction", lead.LastStableOffset(), lead.HighWatermark())
	}
	if w.localTxnOpen(p) {
		t.Error("A's coordinator holds the cancelled transaction open on A t/0; want the pinned LSO a hang")
	}
	if !slices.ContainsFunc(w.or.violations, func(v Violation) bool { return v.Code == CodeM6 && v.Partition == "t/0" }) {
		t.Errorf("findings %+v, want M6 for the pinned LSO of A t/0", w.or.violations)
	}
}

// TestReloadSendsCancelledMarkersAgain: a restart of the coordinator's
// cluster reloads its transactions at a new coordinator epoch
// (TransactionCoordinator#onElection), and
// TransactionStateManager#loadTransactionsForTxnTopicPartition sends the
// markers of every transaction in PrepareCommit or PrepareAbort again
// (TransactionStateManagerTest#shouldWriteTxnMarkersForTransactionInPreparedCommitState),
// a cancelled one included: refused again for the same reason, it is
// cancelled again; once the partition accepts it, the transaction
// completes and InitProducerId succeeds.
func TestReloadSendsCancelledMarkersAgain(t *testing.T) {
	w, _ := runSourceUntil(t, "inline", []byte(cancelledCommitSrc+"restart A\n"), "verbatim", nil, nil)
	tx, p := w.byName["A"].txn.ids["x"], w.byName["A"].part("t/0")
	if got := w.byName["A"].txn.coordEpoch; got != 1 {
		t.Errorf("coordinator epoch after the restart %d, want 1", got)
	}
	wantCancelled(t, "reload refused again", w, tx, p)
	var refusals int
	for _, e := range w.or.clientErrors {
		if e.Error == "INVALID_PRODUCER_EPOCH" {
			refusals++
		}
	}
	if refusals != 1 {
		t.Errorf("INVALID_PRODUCER_EPOCH reported %d times, want once: the reload's refusal is the coordinator's, no client's", refusals)
	}

	// The refusal is TRANSACTION_COORDINATOR_FENCED: an ABORT of the PID at
	// coordinator epoch 1 is in the log. The reload's COMMIT carries
	// coordinator epoch 1 and lands.
	src := "set txn-version=1\ncluster A\ntopic t\nproducer tx on A transactional=x\nbegin tx\nsend tx t/0\n" +
		"commit tx\nsync\nrestart A\ninit tx\n"
	var cancelled bool
	w, _ = runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		a := w.byName["A"]
		switch c.opcode {
		case opSend:
			b := codec.AppendEndTxnMarker(nil, w.clients["tx"].pid, 0, 1, true, w.tick())
			if _, err := a.part("t/0").lead().AppendCoordinator(b, psm.TV1); err != nil {
				t.Fatalf("ABORT at coordinator epoch 1: %v", err)
			}
		case opCommit:
			cancelled = a.txn.ids["x"].pending != nil && a.txn.ids["x"].pending.cancelled
		}
		return false
	})
	if !cancelled {
		t.Fatal("the COMMIT at coordinator epoch 0 was not cancelled")
	}
	tx = w.byName["A"].txn.ids["x"]
	if w.endDecided(tx) || tx.open || tx.ended != "" || tx.epoch != 1 {
		t.Errorf("after the reload and init: decided=%v open=%v ended=%q epoch=%d, want the COMMIT written and the epoch bumped",
			w.endDecided(tx), tx.open, tx.ended, tx.epoch)
	}
	if pr := w.clients["tx"]; pr.needInit || pr.epoch != 1 {
		t.Errorf("client after init: needInit=%v epoch=%d, want epoch 1", pr.needInit, pr.epoch)
	}
}

// TestStoppingAbortDoesNotWedgeCoordinator: the ABORT that the
// destination's STOPPING writes under TV2 carries the producer's epoch + 1,
// the epoch the coordinator's own TV2 marker carries
// (TransactionMetadata#prepareAbortOrCommit bumps once). After a failback
// that brings that ABORT to the source, the coordinator's COMMIT, refused
// while the source mirrors and sent again once it stops, meets an equal
// epoch with no transaction open: Kafka 4.2 accepts it as a retried marker
// (KAFKA-19999), older releases check only that it is not below. It is not
// refused with INVALID_PRODUCER_EPOCH, so the coordinator does not cancel
// it (cancelMarkers) and the transactional.id is not wedged: its next
// transaction commits.
func TestStoppingAbortDoesNotWedgeCoordinator(t *testing.T) {
	const src = "set txn-version=2\ncluster A\ncluster B\ntopic t\nmirror B from A\n" +
		"producer tA on A transactional=tx-A\nbegin tA\nsend tA t/0\nsync\nstop B\nmirror A from B\n" +
		"commit tA\nsync\nstop A\nsync\nbegin tA\nsend tA t/0\ncommit tA\nsync\n"
	for _, rel := range []string{"4.2", "4.1", "4.0", "3.6"} {
		for _, st := range []string{"verbatim", "negate-skip", "barrier"} {
			var cancelled bool
			w, _ := runSourceUntil(t, "inline", []byte(src), st, map[string]string{"kafka-release": rel}, func(w *world, c *command) bool {
				if a := w.byName["A"]; a != nil && a.txn.ids["tx-A"] != nil && a.txn.ids["tx-A"].pending != nil && a.txn.ids["tx-A"].pending.cancelled {
					cancelled = true
				}
				return false
			})
			if cancelled {
				t.Errorf("%s %s: the coordinator cancelled tA's COMMIT", rel, st)
			}
			tx := w.byName["A"].txn.ids["tx-A"]
			if w.endDecided(tx) || tx.open || tx.ended != "commit" || tx.serial != 2 {
				t.Errorf("%s %s: decided=%v open=%v ended=%q serial=%d, want tA's second transaction committed",
					rel, st, w.endDecided(tx), tx.open, tx.ended, tx.serial)
			}
			for _, e := range w.or.clientErrors {
				if e.Error != "READ_ONLY_TOPIC" {
					t.Errorf("%s %s: client error %+v; want only the COMMIT's READ_ONLY_TOPIC while A mirrors", rel, st, e)
				}
			}
		}
	}
}

// TestConflatedEpochWedgesCoordinator: what does wedge the source's
// coordinator after a failback is a PID conflation. Under verbatim B's
// local transactional producer draws tA's PID from B's allocator, at epoch
// 2 (two InitProducerIds); the failback brings its batch to A, where tA's
// PID is then at epoch 2, and the coordinator's TV2 ABORT of tA's
// transaction, at epoch 1, is refused with INVALID_PRODUCER_EPOCH: the
// coordinator cancels it, tA's transaction stays PrepareAbort, and tA's
// InitProducerId gets CONCURRENT_TRANSACTIONS until a reload. The
// strategies that keep B's PIDs apart from A's (allocator's advance, the
// rewriting ones, barrier's reset) leave the ABORT to land.
func TestConflatedEpochWedgesCoordinator(t *testing.T) {
	const src = "set txn-version=2\ncluster A\ncluster B\ntopic t\nmirror B from A\n" +
		"producer tA on A transactional=tx-A\nbegin tA\nsend tA t/0\nsync\nstop B\n" +
		"producer tB on B transactional=tx-B\ninit tB\ninit tB\nbegin tB\nsend tB t/0\ncommit tB\n" +
		"mirror A from B\nabort tA\nsync\nstop A\nsync\ninit tA\n"
	for _, st := range []string{"verbatim", "negate", "negate-skip", "bitfield", "barrier", "allocator"} {
		w, _ := runSourceUntil(t, "inline", []byte(src), st, nil, nil)
		tx := w.byName["A"].txn.ids["tx-A"]
		wedged := tx.pending != nil && tx.pending.cancelled
		busy := slices.ContainsFunc(w.or.clientErrors, func(e ClientError) bool { return e.Error == errConcurrentTxns })
		if want := st == "verbatim"; wedged != want || busy != want {
			t.Errorf("%s: ABORT cancelled=%v, InitProducerId CONCURRENT_TRANSACTIONS=%v; want %v", st, wedged, busy, want)
		}
	}
}
