package scenario

import (
	"math"
	"slices"
	"testing"
)

func TestPIDAllocatorInOrderAcrossBlocks(t *testing.T) {
	a := newPIDAllocator(998)
	for want := int64(998); want < 998+2*pidBlockSize+3; want++ {
		if got, ok := a.take(); got != want || !ok {
			t.Fatalf("take = %d %v, want %d", got, ok, want)
		}
	}
	if a.blockEnd != 998+3*pidBlockSize {
		t.Errorf("blockEnd = %d, want three blocks claimed", a.blockEnd)
	}
}

// The last block the controller grants ends at MaxInt64; the next claim is
// refused (ProducerIdControlManager#generateNextProducerId) and changes
// nothing.
func TestPIDAllocatorLastBlock(t *testing.T) {
	a := newPIDAllocator(math.MaxInt64 - pidBlockSize)
	for want := int64(math.MaxInt64 - pidBlockSize); want < math.MaxInt64; want++ {
		if got, ok := a.take(); got != want || !ok {
			t.Fatalf("take = %d %v, want %d", got, ok, want)
		}
	}
	before := a
	if got, ok := a.take(); ok || a != before {
		t.Fatalf("take past the last block = %d %v, allocator %+v", got, ok, a)
	}
	a = newPIDAllocator(math.MaxInt64 - pidBlockSize + 1)
	if _, ok := a.take(); ok {
		t.Fatal("a block ending past MaxInt64 was claimed")
	}
}

func newTestWorld() (*world, *cluster) {
	w := newWorld("verbatim", DefaultOptions())
	cl := &cluster{name: "A", pids: newPIDAllocator(7), txn: txnCoordinator{ids: map[string]*txnState{}}}
	w.clusters = append(w.clusters, cl)
	w.byName["A"] = cl
	return w, cl
}

func TestInitProducerID(t *testing.T) {
	w, cl := newTestWorld()
	idem := &client{name: "i", c: cl}
	w.initProducer(idem, -1, -1, true)
	if idem.pid != 7 || idem.epoch != 0 {
		t.Errorf("idempotent: pid %d epoch %d, want 7/0", idem.pid, idem.epoch)
	}
	w.initProducer(idem, -1, -1, false)
	if idem.pid != 8 || idem.epoch != 0 {
		t.Errorf("idempotent re-init: pid %d epoch %d, want a fresh PID 8/0", idem.pid, idem.epoch)
	}
	tx := &client{name: "t", c: cl, txnID: "tx1"}
	w.initProducer(tx, -1, -1, true)
	if tx.pid != 9 || tx.epoch != 0 {
		t.Fatalf("transactional: pid %d epoch %d, want 9/0", tx.pid, tx.epoch)
	}
	other := &client{name: "u", c: cl, txnID: "tx1"}
	w.initProducer(other, -1, -1, true)
	if other.pid != 9 || other.epoch != 1 {
		t.Errorf("same transactional id: pid %d epoch %d, want 9/1 (epoch bumped)", other.pid, other.epoch)
	}
	// An exhausted epoch rotates to a fresh PID at epoch 0
	// (TransactionMetadata.isEpochExhausted: epoch >= Short.MAX_VALUE - 1).
	cl.txn.ids["tx1"].epoch = math.MaxInt16 - 1
	w.initProducer(other, -1, -1, false)
	if other.pid != 10 || other.epoch != 0 {
		t.Errorf("exhausted epoch: pid %d epoch %d, want rotation to 10/0", other.pid, other.epoch)
	}
	forced := &client{name: "f", c: cl, txnID: "tx2"}
	w.initProducer(forced, math.MinInt64, 3, true)
	if forced.pid != math.MinInt64 || forced.epoch != 3 || cl.txn.ids["tx2"].pid != math.MinInt64 {
		t.Errorf("forced: pid %d epoch %d", forced.pid, forced.epoch)
	}
}

func TestCoordinatorFencing(t *testing.T) {
	w, cl := newTestWorld()
	p := &client{name: "p", c: cl, txnID: "tx1"}
	w.initProducer(p, -1, -1, true)
	z := &client{name: "z", c: cl, txnID: "tx1", pid: p.pid, epoch: p.epoch}
	w.initProducer(p, -1, -1, false)
	if _, e := w.coordinatorCheck(z); e != errProducerFenced {
		t.Errorf("zombie: %q, want %s", e, errProducerFenced)
	}
	if _, e := w.coordinatorCheck(p); e != "" {
		t.Errorf("current instance: %q", e)
	}
	z.pid = 12345
	if _, e := w.coordinatorCheck(z); e != errPIDMapping {
		t.Errorf("unknown pid: %q, want %s", e, errPIDMapping)
	}
	cl.failed = true
	if _, e := w.coordinatorCheck(p); e != errCoordinatorNA {
		t.Errorf("failed cluster: %q", e)
	}
}

// TestTxnOffsetCommitChecks is the table of the group coordinator's checks of a
// transactional offset commit (GroupCoordinator#validateOffsetCommit).
func TestTxnOffsetCommitChecks(t *testing.T) {
	g := &group{members: map[string]int32{}, instances: map[string]string{}}
	if e := g.checkTxnOffsetCommit("", "", -1); e != "" {
		t.Errorf("empty group, generation -1: %q", e)
	}
	if e := g.checkTxnOffsetCommit("m1", "", 0); e != errUnknownMemberID {
		t.Errorf("empty group, unknown member: %q", e)
	}
	g.gen = 3
	g.members["m1"], g.members["m2"] = 1, 3
	g.instances["i1"] = "m2"
	cases := []struct {
		member, instance string
		gen              int32
		want             string
	}{
		{"m2", "", 3, ""},
		{"m1", "", 1, errIllegalGeneration},
		{"m1", "", 3, ""},
		{"nobody", "", 3, errUnknownMemberID},
		{"", "", 3, errUnknownMemberID},
		{"m1", "i1", 3, errFencedInstanceID},
		{"m2", "i1", 3, ""},
		{"m2", "i9", 3, errUnknownMemberID},
		{"m2", "i1", 2, errIllegalGeneration},
		{"", "", -1, ""}, // old-style commit: accepted without a membership check
	}
	for _, c := range cases {
		if got := g.checkTxnOffsetCommit(c.member, c.instance, c.gen); got != c.want {
			t.Errorf("member %q instance %q generation %d: %q, want %q", c.member, c.instance, c.gen, got, c.want)
		}
	}
}

// InitProducerId on epoch 32766 with a transaction open fences it at 32767
// (TransactionMetadata#prepareFenceProducerEpoch): the ABORT marker carries
// the bumped epoch, and the producer then rotates to a new PID at epoch 0.
func TestFenceAtExhaustedEpoch(t *testing.T) {
	w, cl := newTestWorld()
	cl.replicas = 1
	if err := w.addPartitions(cl, topicDecl{name: "t", partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := &client{name: "p", c: cl, txnID: "tx1"}
	w.initProducer(p, -1, math.MaxInt16-1, true)
	tx := cl.txn.ids["tx1"]
	tx.open, tx.parts, tx.producer = true, []*partition{cl.parts[0]}, "p"
	old := p.pid
	w.initProducer(p, -1, -1, false)
	if p.pid == old || p.epoch != 0 {
		t.Fatalf("after the fence: pid %d epoch %d, want a new PID at epoch 0", p.pid, p.epoch)
	}
	var fenced []int16
	for _, e := range cl.parts[0].lead().Producers() {
		if e.PID == old {
			fenced = append(fenced, e.Epoch)
		}
	}
	if len(fenced) != 1 || fenced[0] != math.MaxInt16 {
		t.Fatalf("entry epochs of PID %d after the fence %v, want [32767] (the ABORT marker's)", old, fenced)
	}
}

// TestRefusedMarkerKeepsTransactionOpen: a transaction whose end marker a
// partition refused stays open at its coordinator on that partition, which
// retries the marker at every sync until it lands
// (TransactionMarkerChannelManager#maybeWriteTxnCompletion completes a
// transaction only once no partition waits for its marker). A's partition
// is MIRRORING when InitProducerId fences tA's transaction; under bitfield
// the ABORT mirrored back from B carries B's mapped PID, so the transaction
// holds A's LSO until A stops and the retried marker lands.
func TestRefusedMarkerKeepsTransactionOpen(t *testing.T) {
	const file = "testdata/oracle/m6-fence-marker-refused.scn"
	var fenced, retried bool
	w, _ := runWorldUntil(t, file, "bitfield", nil, func(w *world, c *command) bool {
		a := w.byName["A"]
		p, tx := a.part("t/0"), a.txn.ids["tx-A"]
		switch {
		case c.opcode == opInit:
			fenced = true
			if !tx.open || tx.pending == nil || !tx.pending.abort || !tx.has(p) {
				t.Errorf("after the refused fence: open=%v pending=%+v parts=%d, want the ABORT pending on A t/0",
					tx.open, tx.pending, len(tx.parts))
			}
			// PrepareAbort: InitProducerId is CONCURRENT_TRANSACTIONS
			// (TransactionCoordinator#prepareInitProducerIdTransit), retried
			// before the client's next request.
			errs := w.or.clientErrors
			if pr := w.clients["tA"]; len(errs) == 0 || errs[len(errs)-1].Error != errConcurrentTxns || !pr.needInit {
				t.Errorf("after the refused fence: client errors %+v, needInit=%v; want CONCURRENT_TRANSACTIONS and InitProducerId to retry",
					errs, pr.needInit)
			}
		case c.opcode == opSync && fenced && p.state == stateMirroring:
			if lead := p.lead(); lead.LastStableOffset() >= lead.HighWatermark() {
				t.Errorf("A t/0 LSO %d, high watermark %d: want the LSO held by tA's transaction",
					lead.LastStableOffset(), lead.HighWatermark())
			}
			if !w.localTxnOpen(p) {
				t.Error("A's coordinator does not hold tA's transaction open on A t/0")
			}
		case c.opcode == opSync && fenced && !retried:
			retried = true
			if tx.open || tx.pending != nil {
				t.Errorf("after A stopped and synced: open=%v pending=%+v, want the retried ABORT written", tx.open, tx.pending)
			}
			return true
		}
		return false
	})
	if !retried {
		t.Fatal("the file never reached the sync after A stopped")
	}
	p := w.byName["A"].part("t/0")
	if lead := p.lead(); lead.LastStableOffset() != lead.HighWatermark() {
		t.Errorf("A t/0 LSO %d, high watermark %d after the retried ABORT", lead.LastStableOffset(), lead.HighWatermark())
	}
	w = runWorld(t, file, "bitfield")
	if pr, tx := w.clients["tA"], w.byName["A"].txn.ids["tx-A"]; pr.needInit || pr.epoch != tx.epoch || tx.ended != "commit" {
		t.Errorf("at the end: needInit=%v client epoch %d coordinator epoch %d ended %q, want InitProducerId retried and the next transaction committed",
			pr.needInit, pr.epoch, tx.epoch, tx.ended)
	}
}

// TestLostMarkerStaysOwed: an end marker its partition lost before
// acknowledging it, and refused when the coordinator sent it again, is still
// owed. Kafka's coordinator re-enqueues every partition whose WriteTxnMarkers
// did not answer NONE (TransactionMarkerRequestCompletionHandler#onComplete)
// and completes the transaction only once all did
// (TransactionMarkerChannelManager#maybeWriteTxnCompletion): the transaction
// is open at the coordinator, and holds the partition's LSO as an open one,
// until the marker lands. A's fence ABORT is not replicated when A fails
// back to B; the failback truncates it and A, MIRRORING, refuses it again.
// Under bitfield B's ABORT, mirrored back, carries the mapped PID and closes
// nothing on A.
func TestLostMarkerStaysOwed(t *testing.T) {
	const file = "testdata/oracle/m6-fence-marker-lost.scn"
	var failedBack, landed bool
	w, _ := runWorldUntil(t, file, "bitfield", nil, func(w *world, c *command) bool {
		a := w.byName["A"]
		p, tx := a.part("t/0"), a.txn.ids["tx-A"]
		switch {
		case c.opcode == opMirror && c.Args[0] == "A":
			failedBack = true
			if !w.owedMarker(p) || !w.endDecided(tx) || !w.localTxnOpen(p) {
				t.Errorf("after the failback: owed=%v decided=%v open=%v, want the ABORT owed to A t/0 and tA's transaction open at A's coordinator",
					w.owedMarker(p), w.endDecided(tx), w.localTxnOpen(p))
			}
		case c.opcode == opSync && failedBack && p.state == stateMirroring:
			if lead := p.lead(); lead.LastStableOffset() >= lead.HighWatermark() {
				t.Errorf("A t/0 LSO %d, high watermark %d: want the LSO held by tA's transaction",
					lead.LastStableOffset(), lead.HighWatermark())
			}
			if !w.localTxnOpen(p) {
				t.Error("A's coordinator does not hold tA's transaction open on A t/0 while it owes the ABORT")
			}
		case c.opcode == opSync && failedBack && !landed:
			landed = true
			if w.owedMarker(p) || w.endDecided(tx) {
				t.Errorf("after A stopped and synced: owed=%v decided=%v, want the owed ABORT written", w.owedMarker(p), w.endDecided(tx))
			}
			return true
		}
		return false
	})
	if !landed {
		t.Fatal("the file never reached the sync after A stopped")
	}
	p := w.byName["A"].part("t/0")
	if lead := p.lead(); lead.LastStableOffset() != lead.HighWatermark() {
		t.Errorf("A t/0 LSO %d, high watermark %d after the owed ABORT landed", lead.LastStableOffset(), lead.HighWatermark())
	}
	for _, v := range w.or.violations {
		t.Errorf("unexpected %s at step %d: %s", v.Code, v.Step, v.Detail)
	}
}

// TestTxnOffsetCommitWhileOutcomeDecided: while the coordinator has decided
// the outcome of the producer's transaction and not written every marker
// (PrepareCommit, PrepareAbort), the offsets of a TxnOffsetCommit get
// CONCURRENT_TRANSACTIONS: under TV1 from the client's AddOffsetsToTxn,
// which KafkaApis#handleAddOffsetsToTxnRequest hands to
// TransactionCoordinator#handleAddPartitionsToTransaction
// (TransactionCoordinatorTest#shouldRespondWithConcurrentTransactionsOnAddPartitionsWhenStateIsPrepareCommit,
// #shouldRespondWithConcurrentTransactionOnAddPartitionsWhenStateIsPrepareAbort),
// under TV2 from the transaction verification the group coordinator runs
// before the offsets write (TransactionCoordinator#handleVerifyPartitionsInTransaction,
// TransactionCoordinatorTest#testVerifyPartitionHandling). The error is
// retriable: the client is not fenced, its transaction stays open, and the
// group's checks are not reached (m1's generation is stale since the
// rebalance: ILLEGAL_GENERATION). Once the markers are written the same commit is
// checked by the group coordinator.
func TestTxnOffsetCommitWhileOutcomeDecided(t *testing.T) {
	const src = "cluster A\ntopic t\ngroup g on A\njoin g m1\nrebalance g\nproducer p on A transactional=tx1\n" +
		"begin p\nsend p t/0\noffsets p g m1\n"
	for _, abort := range []bool{false, true} {
		w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
			if c.opcode == opSend {
				tx := w.byName["A"].txn.ids["tx1"]
				tx.pending = &pendingEnd{pid: tx.pid, epoch: tx.epoch, abort: abort, who: "p"}
			}
			return false
		})
		pr, tx := w.clients["p"], w.byName["A"].txn.ids["tx1"]
		errs := w.or.clientErrors
		if len(errs) != 1 || errs[0].Error != errConcurrentTxns {
			t.Fatalf("abort=%v: client errors %+v, want one %s", abort, errs, errConcurrentTxns)
		}
		if pr.fatal || !pr.inTxn || !tx.open {
			t.Errorf("abort=%v: fatal=%v inTxn=%v open=%v, want the transaction left as it was", abort, pr.fatal, pr.inTxn, tx.open)
		}
		// The markers written, the group coordinator checks the commit.
		tx.pending = nil
		w.offsets(&command{opcode: opOffsets, Args: []string{"p", "g", "m1"}})
		if errs := w.or.clientErrors; len(errs) != 2 || errs[1].Error != errIllegalGeneration {
			t.Errorf("abort=%v: after the markers: client errors %+v, want %s", abort, errs, errIllegalGeneration)
		}
	}
}

// TestEndTxnWhileOutcomeDecided: while the coordinator has decided the
// outcome of the transaction and not written every marker (PrepareCommit,
// PrepareAbort), EndTxn asking for the same outcome gets
// CONCURRENT_TRANSACTIONS, the other outcome INVALID_TXN_STATE
// (TransactionCoordinator#handleEndTransaction;
// TransactionCoordinatorTest#shouldReturnConcurrentTxnRequestOnEndTxnRequestWhenStatusIsPrepareCommit,
// #shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsPrepareAbort).
// Under TV2 that holds for a retry, one epoch below the coordinator's
// bumped epoch; at the coordinator's epoch the request is no retry and
// gets PRODUCER_FENCED (TransactionCoordinator#endTransaction, isValidEpoch:
// PrepareCommit and PrepareAbort accept only retryOnEpochBump). Either way
// no marker is written and the decided outcome stays pending.
func TestEndTxnWhileOutcomeDecided(t *testing.T) {
	for _, tc := range []struct {
		tv             string
		retry          bool // the client's epoch one below the coordinator's
		decided, asked string
		want           string
	}{
		{"1", false, "commit", "commit", errConcurrentTxns},
		{"1", false, "abort", "abort", errConcurrentTxns},
		{"1", false, "commit", "abort", errInvalidTxnState},
		{"1", false, "abort", "commit", errInvalidTxnState},
		{"2", true, "commit", "commit", errConcurrentTxns},
		{"2", true, "abort", "abort", errConcurrentTxns},
		{"2", true, "commit", "abort", errInvalidTxnState},
		{"2", true, "abort", "commit", errInvalidTxnState},
		{"2", false, "commit", "commit", errProducerFenced},
		{"2", false, "abort", "commit", errProducerFenced},
	} {
		src := "set txn-version=" + tc.tv + "\ncluster A\ntopic t\nproducer p on A transactional=tx1\nbegin p\nsend p t/0\n" + tc.asked + " p\n"
		w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
			if c.opcode == opSend {
				tx := w.byName["A"].txn.ids["tx1"]
				tx.pending = &pendingEnd{pid: tx.pid, epoch: tx.epoch, abort: tc.decided == "abort", who: "p"}
				if tc.retry {
					tx.epoch++ // the bump of the EndTxn the client retries
				}
			}
			return false
		})
		tx := w.byName["A"].txn.ids["tx1"]
		if errs := w.or.clientErrors; len(errs) != 1 || errs[0].Error != tc.want {
			t.Errorf("TV%s retry=%v Prepare%s, EndTxn %s: client errors %+v, want one %s", tc.tv, tc.retry, tc.decided, tc.asked, errs, tc.want)
		}
		if !tx.open || tx.pending == nil || tx.pending.abort != (tc.decided == "abort") {
			t.Errorf("Prepare%s, EndTxn %s: open=%v pending=%+v, want the decided outcome still pending",
				tc.decided, tc.asked, tx.open, tx.pending)
		}
		if n := len(batchesFrom(w.byName["A"].part("t/0").lead(), 0)); n != 1 {
			t.Errorf("Prepare%s, EndTxn %s: %d batches, want the data batch alone (no marker)", tc.decided, tc.asked, n)
		}
	}
}

// TestEndTxnAfterComplete: an EndTxn for a transaction its coordinator
// completed already (CompleteCommit, CompleteAbort) answers NONE for the
// outcome it completed with and INVALID_TXN_STATE for the other
// (TransactionCoordinator#handleEndTransaction;
// TransactionCoordinatorTest#shouldReturnOkOnEndTxnWhenStatusIsCompleteCommitAndResultIsCommit,
// #shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbort,
// #shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteAbortAndResultIsNotAbort,
// #shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsCompleteCommitAndResultIsNotCommit).
// Under TV1 the request comes from an instance at the same epoch (a
// zombie copied before the commit); under TV2 it is the retry one epoch
// below the coordinator's bumped epoch (retryOnEpochBump). No marker is
// written a second time.
func TestEndTxnAfterComplete(t *testing.T) {
	for _, tc := range []struct {
		tv, ended, asked string
		want             string
	}{
		{"1", "commit", "commit", ""},
		{"1", "abort", "abort", ""},
		{"1", "abort", "commit", errInvalidTxnState},
		{"1", "commit", "abort", errInvalidTxnState},
		{"2", "commit", "commit", ""},
		{"2", "abort", "abort", ""},
		{"2", "abort", "commit", errInvalidTxnState},
		{"2", "commit", "abort", errInvalidTxnState},
	} {
		src := "set txn-version=" + tc.tv + "\ncluster A\ntopic t\nproducer p on A transactional=tx1\nbegin p\nsend p t/0\n" +
			"zombie z of p\n" + tc.ended + " p\n" + tc.asked + " z\n"
		w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, nil)
		got, want := clientErrorNames(w, ""), optionalError(tc.want)
		if !slices.Equal(got, want) {
			t.Errorf("TV%s Complete%s, EndTxn %s: client errors %v, want %v", tc.tv, tc.ended, tc.asked, got, want)
		}
		if n := len(batchesFrom(w.byName["A"].part("t/0").lead(), 0)); n != 2 {
			t.Errorf("TV%s Complete%s, EndTxn %s: %d batches, want the data and one marker", tc.tv, tc.ended, tc.asked, n)
		}
	}
}

// TestEndTxnTV2AbortAtCurrentEpochBumps: under TV2 an EndTxn at the
// coordinator's epoch in Empty, CompleteCommit or CompleteAbort comes from a
// client that started a transaction (a send, TransactionManager's
// transactionStarted) the coordinator never added a partition to. An ABORT
// bumps the epoch with no marker to write, and the client takes the bumped
// epoch (a new PID at epoch 0 when the epoch is exhausted); a COMMIT is
// INVALID_TXN_STATE (TransactionCoordinator#endTransaction;
// TransactionCoordinatorTest#testEndTxnRequestWhenStatusIsCompleteCommitAndResultIsAbortInV2,
// #shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2,
// #TestEndTxnRequestWhenEmptyTransactionStateForAbortInV2,
// #TestEndTxnRequestWhenEmptyTransactionStateForCommitInV2,
// #testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV2,
// #shouldGenerateNewProducerIdIfEpochsExhaustedV2). A client that sent
// nothing in the transaction sends no EndTxn: nothing changes.
func TestEndTxnTV2AbortAtCurrentEpochBumps(t *testing.T) {
	const failedSend = "begin p\nfail A\nsend p t/0\nrecover A\n"
	for _, tc := range []struct {
		state, before, asked string
		epoch                string // the producer's epoch= option, "" for none
		wantErr              string
		wantEpoch            int16 // the client's epoch after the EndTxn
		rotated              bool  // a new PID
	}{
		{"CompleteCommit", "begin p\nsend p t/0\ncommit p\n" + failedSend, "abort", "", "", 2, false},
		{"CompleteAbort", "begin p\nsend p t/0\nabort p\n" + failedSend, "abort", "", "", 2, false},
		{"Empty", failedSend, "abort", "", "", 1, false},
		{"Empty", failedSend, "commit", "", errInvalidTxnState, 0, false},
		{"CompleteCommit", "begin p\nsend p t/0\ncommit p\n" + failedSend, "commit", "", errInvalidTxnState, 1, false},
		{"Empty, exhausted", failedSend, "abort", "32766", "", 0, true},
		{"Empty, nothing sent", "begin p\n", "abort", "", "", 0, false},
	} {
		prod := "producer p on A transactional=tx1\n"
		if tc.epoch != "" {
			prod = "producer p on A transactional=tx1 epoch=" + tc.epoch + "\n"
		}
		src := "set txn-version=2\ncluster A\ntopic t\n" + prod + tc.before + tc.asked + " p\n"
		var pidBefore int64
		var batchesBefore int
		w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
			if c.opcode == opBegin { // the last begin: the transaction the EndTxn ends
				pidBefore = w.clients["p"].pid
				batchesBefore = len(batchesFrom(w.byName["A"].part("t/0").lead(), 0))
			}
			return false
		})
		pr, tx := w.clients["p"], w.byName["A"].txn.ids["tx1"]
		got, want := clientErrorNames(w, errNetwork), optionalError(tc.wantErr)
		if !slices.Equal(got, want) {
			t.Errorf("%s, EndTxn %s: client errors %v, want %v", tc.state, tc.asked, got, want)
		}
		if pr.epoch != tc.wantEpoch || tx.epoch != tc.wantEpoch || (pr.pid != pidBefore) != tc.rotated || tx.pid != pr.pid {
			t.Errorf("%s, EndTxn %s: client pid %d epoch %d, coordinator pid %d epoch %d (pid before %d); want epoch %d, rotated=%v",
				tc.state, tc.asked, pr.pid, pr.epoch, tx.pid, tx.epoch, pidBefore, tc.wantEpoch, tc.rotated)
		}
		if tc.rotated && tx.prevPID != pidBefore {
			t.Errorf("%s: prevPID %d, want the rotated-away PID %d", tc.state, tx.prevPID, pidBefore)
		}
		if n := len(batchesFrom(w.byName["A"].part("t/0").lead(), 0)); n != batchesBefore {
			t.Errorf("%s, EndTxn %s: %d batches, want %d (no marker)", tc.state, tc.asked, n, batchesBefore)
		}
		if pr.inTxn {
			t.Errorf("%s, EndTxn %s: the client's transaction is still open", tc.state, tc.asked)
		}
	}
}

// TestEndTxnRetryOnOverflow: under TV2 the EndTxn that exhausts the epoch
// (32766) completes with a new PID at epoch 0 (prevProducerId keeps the
// old one); its retry, with the old PID at 32766, is a retry
// (retryOnOverflow): CONCURRENT_TRANSACTIONS while the outcome is decided
// and its markers not all written, then NONE with the new PID and epoch for
// the outcome it completed with, INVALID_TXN_STATE for the other
// (TransactionCoordinator#endTransaction;
// TransactionCoordinatorTest#shouldReturnOkOnEndTxnV2IfEndTxnV2RetryEpochOverflow).
// Once the new PID's epoch moved on, the old PID is unknown:
// INVALID_PRODUCER_ID_MAPPING.
func TestEndTxnRetryOnOverflow(t *testing.T) {
	const head = "set txn-version=2\ncluster A\ntopic t\nproducer p on A transactional=tx1 epoch=32766\nbegin p\nsend p t/0\nzombie z of p\n"
	for _, tc := range []struct {
		name, tail string
		decided    bool // the COMMIT still pending when z retries
		want       string
	}{
		{"CompleteCommit, commit", "commit p\ncommit z\n", false, ""},
		{"CompleteCommit, abort", "commit p\nabort z\n", false, errInvalidTxnState},
		{"PrepareCommit, commit", "commit p\ncommit z\n", true, errConcurrentTxns},
		{"epoch moved on", "commit p\nbegin p\nsend p t/0\ncommit p\ncommit z\n", false, errPIDMapping},
	} {
		var oldPID int64
		w, _ := runSourceUntil(t, "inline", []byte(head+tc.tail), "verbatim", nil, func(w *world, c *command) bool {
			if w.byName["A"] == nil || w.byName["A"].txn.ids["tx1"] == nil {
				return false
			}
			tx := w.byName["A"].txn.ids["tx1"]
			if c.opcode == opZombie {
				oldPID = tx.pid
			}
			if c.opcode == opCommit && c.Args[0] == "p" && tc.decided && tx.pending == nil {
				tx.pending, tx.open = &pendingEnd{pid: oldPID, epoch: 32767, who: "p"}, true
			}
			return false
		})
		z, tx := w.clients["z"], w.byName["A"].txn.ids["tx1"]
		if tx.prevPID != oldPID || tx.pid == oldPID {
			t.Fatalf("%s: coordinator pid %d prevPID %d, want a new PID and prevPID %d", tc.name, tx.pid, tx.prevPID, oldPID)
		}
		got, want := clientErrorNames(w, ""), optionalError(tc.want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: client errors %v, want %v", tc.name, got, want)
		}
		if tc.want == "" && (z.pid != tx.pid || z.epoch != 0 || z.inTxn) {
			t.Errorf("%s: retry answered NONE, client z pid %d epoch %d inTxn %v, want the new PID %d at epoch 0",
				tc.name, z.pid, z.epoch, z.inTxn, tx.pid)
		}
		if tc.want != "" && z.pid != oldPID {
			t.Errorf("%s: client z took pid %d after %s", tc.name, z.pid, tc.want)
		}
	}
}

// clientErrorNames lists the error names of w's client errors in order,
// leaving out skip ("" keeps all).
func clientErrorNames(w *world, skip string) []string {
	var names []string
	for _, e := range w.or.clientErrors {
		if skip == "" || e.Error != skip {
			names = append(names, e.Error)
		}
	}
	return names
}

// optionalError is the list of one expected error name, or none for "".
func optionalError(name string) []string {
	if name == "" {
		return nil
	}
	return []string{name}
}
