package scenario

// Clients: producers and zombies, and the transaction and group coordinator
// requests they make (InitProducerId, AddPartitionsToTxn, EndTxn,
// TxnOffsetCommit, KIP-890 verification), on top of coord.go.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
)

func (w *world) newProducer(c *command) error {
	cl := w.byName[c.Args[1]]
	pr := &client{name: c.Args[0], identity: c.Args[0], c: cl, txnID: argStr(c, "transactional"),
		seq: map[*partition]int32{}, txnParts: map[*partition]bool{}}
	if pr.txnID != "" {
		if id, ok := w.txnIdentity[pr.txnID]; ok {
			pr.identity = id
		} else {
			w.txnIdentity[pr.txnID] = pr.name
		}
	}
	w.clients[pr.name] = pr
	pr.acksOne = argStr(c, "acks") == "1"
	if c.Has("old-format") || pr.acksOne {
		pr.oldFormat, pr.pid, pr.epoch = c.Has("old-format"), -1, -1
		return nil
	}
	pid, forcePID := argInt64(c, "pid")
	epoch, forceEpoch := argInt64(c, "epoch")
	if !forcePID {
		pid = -1
	}
	if !forceEpoch {
		epoch = -1
	}
	w.initProducer(pr, pid, int16(epoch), true)
	return nil
}

// initProducer is InitProducerId (TransactionCoordinator#handleInitProducerId). forcedPID ≥ 0 or
// forcedEpoch ≥ 0 replace what the coordinator would hand out (raw edge
// cases); -1 means not forced. A forced PID may be any int64 except -1.
func (w *world) initProducer(pr *client, forcedPID int64, forcedEpoch int16, first bool) {
	cl := pr.c
	pr.seq = map[*partition]int32{}
	pr.inTxn, pr.txnParts, pr.fatal = false, map[*partition]bool{}, false
	if pr.oldFormat || pr.acksOne {
		return // no InitProducerId in the old protocol, nor without idempotence
	}
	if cl.failed {
		// The client has no PID; it retries InitProducerId before its next
		// request (ready).
		w.or.clientError(pr.name, cl, nil, errCoordinatorNA)
		pr.pid, pr.epoch, pr.needInit = -1, -1, true
		pr.forcedPID, pr.forcedEpoch = forcedPID, forcedEpoch
		return
	}
	pr.needInit = false
	forced := first && forcedPID != -1
	// retryLater: InitProducerId failed with a retriable error (code); the
	// client has no PID and retries it before its next request (ready).
	retryLater := func(code string) {
		w.or.clientError(pr.name, cl, nil, code)
		pr.pid, pr.epoch, pr.needInit = -1, -1, true
		pr.forcedPID, pr.forcedEpoch = forcedPID, forcedEpoch
	}
	// noPID: the allocator has no block to draw from; a forced PID needs
	// none.
	noPID := func() { retryLater(errCoordinatorLoading) }
	if pr.txnID == "" {
		p, ok := cl.takePID()
		if !ok && !forced {
			noPID()
			return
		}
		pr.pid, pr.epoch = p, 0
		if first && forcedPID != -1 {
			pr.pid = forcedPID
		}
		if first && forcedEpoch >= 0 {
			pr.epoch = forcedEpoch
		}
		return
	}
	t := cl.txn.ids[pr.txnID]
	if t != nil && w.endDecided(t) {
		// PrepareCommit or PrepareAbort: CONCURRENT_TRANSACTIONS
		// (TransactionCoordinator#prepareInitProducerIdTransit), which the
		// client retries after a backoff while the coordinator sends the
		// markers again; a cancelled outcome is not sent again before the
		// coordinator reloads it (cancelMarkers).
		if t.pending != nil && !t.pending.cancelled {
			w.sendMarkers(cl, t, *t.pending, false)
		}
		if w.endDecided(t) {
			retryLater(errConcurrentTxns)
			return
		}
	}
	switch {
	case t == nil:
		p, ok := cl.takePID()
		if !ok && !forced {
			noPID()
			return
		}
		t = &txnState{id: pr.txnID, pid: p, prevPID: -1}
		cl.txn.ids[pr.txnID] = t
		cl.txn.order = append(cl.txn.order, t)
	case epochExhausted(t.epoch):
		// An open transaction is fenced first, at a bumped epoch
		// (TransactionMetadata#prepareFenceProducerEpoch: 32766 becomes
		// Short.MAX_VALUE, which it never passes), and its ABORT markers
		// carry that epoch; the client's retried InitProducerId then finds
		// the epoch exhausted and rotates to a new PID at epoch 0.
		if t.open && t.epoch < math.MaxInt16 {
			t.epoch++
		}
		if w.abortOpen(cl, t, t.epoch) {
			retryLater(errConcurrentTxns)
			return
		}
		p, ok := cl.takePID()
		if !ok && !forced {
			noPID()
			return
		}
		t.pid, t.epoch = p, 0
	default:
		t.epoch++
		if w.abortOpen(cl, t, t.epoch) {
			retryLater(errConcurrentTxns)
			return
		}
	}
	if first && forcedPID != -1 {
		t.pid = forcedPID
	}
	if first && forcedEpoch >= 0 {
		t.epoch = forcedEpoch
	}
	t.ended = ""
	pr.pid, pr.epoch = t.pid, t.epoch
}

// fenceEpoch is the epoch of the markers that end a transaction of epoch
// without an InitProducerId bump before them (EndTxn, the fence of an
// exhausted epoch): under TV2 the coordinator bumps it, and the leader
// needs a marker epoch above the transaction's (never past MaxInt16);
// TV0/TV1 keep it.
func (w *world) fenceEpoch(epoch int16) int16 {
	if txnVersion(w.opts) >= psm.TV2 && epoch < math.MaxInt16 {
		return epoch + 1
	}
	return epoch
}

// abortOpen aborts t's open transaction with markers at epoch (the fence of
// InitProducerId, TransactionMetadata#prepareFenceProducerEpoch). pending
// reports that the ABORT is decided and not yet written on every partition
// (PrepareAbort): Kafka answers the fencing InitProducerId with
// CONCURRENT_TRANSACTIONS, and the client's retry gets it too for as long
// as the markers are not all written (prepareInitProducerIdTransit). When
// they are, the retry bumps the epoch again; the simulator's fence whose
// markers land at once hands out the fence's epoch.
func (w *world) abortOpen(cl *cluster, t *txnState, epoch int16) (pending bool) {
	if t.open {
		w.writeMarkers(cl, t, epoch, true, t.producer)
	}
	return w.endDecided(t)
}

// writeMarkers appends one COMMIT or ABORT marker per partition of t's
// transaction, COORDINATOR origin, stating the transaction version (option
// txn-version). The transaction closes once every partition holds its
// marker. A partition that refuses the marker (a MIRRORING partition's
// READ_ONLY_TOPIC, a failed cluster) keeps the transaction open there: the
// coordinator has decided the outcome and retries the markers until they
// land (TransactionMarkerChannelManager, TransactionMarkerRequestCompletionHandler#onComplete:
// the transaction completes only when every partition acknowledged its
// marker), which retryMarkers does at every sync.
func (w *world) writeMarkers(cl *cluster, t *txnState, epoch int16, abort bool, who string) {
	w.sendMarkers(cl, t, pendingEnd{pid: t.pid, epoch: epoch, abort: abort, who: who}, true)
}

// sendMarkers writes the end markers of e on every partition of t that
// does not hold one yet; a refusal is the client's error when report is set
// (the request it made), not on the coordinator's own retries.
func (w *world) sendMarkers(cl *cluster, t *txnState, e pendingEnd, report bool) {
	var left []*partition
	cancelled := false
	for _, p := range t.parts {
		switch code := w.writeMarker(cl, t, p, e, report); {
		case code == "":
		case markerCancelled(code):
			cancelled = true
			left = append(left, p)
		default:
			left = append(left, p)
		}
	}
	if cancelled {
		w.cancelMarkers(t, e, left)
		return
	}
	t.parts, t.pending = left, nil
	if len(left) == 0 {
		t.open, t.ended = false, "commit"
		if e.abort {
			t.ended = "abort"
		}
		return
	}
	t.pending = &e
}

// writeMarker appends the end marker of e on p; the code of p's refusal,
// "" when p wrote it.
func (w *world) writeMarker(cl *cluster, t *txnState, p *partition, e pendingEnd, report bool) string {
	ts := w.tick()
	w.markers[ts] = markerTruth{producer: t.producer, serial: t.serial, abort: e.abort}
	b := codec.AppendEndTxnMarker(nil, e.pid, e.epoch, cl.txn.coordEpoch, e.abort, ts)
	refused := errCoordinatorNA
	var res appendResult
	if !cl.failed {
		var err error
		if res, err = p.lead().AppendCoordinator(b, txnVersion(w.opts)); err == nil {
			refused = ""
		} else {
			refused = errorName(err)
		}
	}
	if refused != "" {
		if report {
			w.or.clientError(e.who, cl, p, refused)
		}
		return refused
	}
	if !e.abort {
		w.or.committed(p, e.who, t.serial)
	}
	p.advanceHW()
	w.pending = append(w.pending, &pendingWrite{p: p, batch: b, res: res, ts: ts, marker: true, txn: t, end: e})
	return ""
}

// retryMarkers is the coordinator's marker channel: every end marker a
// partition refused is sent again, on every cluster that is up, but for
// the markers the coordinator cancelled (cancelMarkers).
func (w *world) retryMarkers() {
	for _, cl := range w.clusters {
		if cl.failed {
			continue
		}
		for _, t := range cl.txn.order {
			if t.open && t.pending != nil && !t.pending.cancelled {
				w.sendMarkers(cl, t, *t.pending, false)
			}
		}
	}
}

func (w *world) newZombie(name string, of *client) {
	z := &client{name: name, identity: name, c: of.c, txnID: of.txnID, pid: of.pid, epoch: of.epoch, seq: map[*partition]int32{},
		inTxn: of.inTxn, txnParts: map[*partition]bool{}, txnSerial: of.txnSerial, oldFormat: of.oldFormat,
		acksOne: of.acksOne, txnStarted: of.txnStarted}
	for p, s := range of.seq {
		z.seq[p] = s
	}
	for p := range of.txnParts {
		z.txnParts[p] = true
	}
	w.clients[name] = z
}

func (w *world) begin(pr *client) {
	if !w.ready(pr) {
		return
	}
	if pr.fatal {
		w.or.clientError(pr.name, pr.c, nil, errProducerFenced)
		return
	}
	if pr.inTxn {
		w.or.clientError(pr.name, pr.c, nil, errInvalidTxnState)
		return
	}
	pr.inTxn, pr.txnStarted = true, false
	pr.txnParts = map[*partition]bool{}
	pr.txnSerial++
}

// coordinatorCheck is the coordinator's pid/epoch check of AddPartitionsToTxn
// and EndTxn.
func (w *world) coordinatorCheck(pr *client) (*txnState, string) {
	if pr.c.failed {
		return nil, errCoordinatorNA
	}
	t := pr.c.txn.ids[pr.txnID]
	switch {
	case t == nil || t.pid != pr.pid:
		return nil, errPIDMapping
	case t.epoch != pr.epoch:
		return nil, errProducerFenced
	}
	return t, ""
}

func (w *world) endTxn(pr *client, abort bool) {
	if !w.ready(pr) {
		return
	}
	if !pr.inTxn {
		w.or.clientError(pr.name, pr.c, nil, errInvalidTxnState)
		return
	}
	tv2 := txnVersion(w.opts) >= psm.TV2
	t, e := w.coordinatorCheck(pr)
	switch {
	case e == "" && !t.open && len(pr.txnParts) > 0 && !tv2 && !w.endDecided(t):
		// The partitions this client added are in no open transaction
		// at the coordinator: its transaction was ended already, by an
		// instance sharing its epoch (CompleteCommit, CompleteAbort) or
		// by InitProducerId (Empty).
		e = endAfterComplete(t, abort)
	case e == "" && !t.open && pr.txnStarted && tv2 && !w.endDecided(t):
		// TV2 at the coordinator's epoch in Empty, CompleteCommit or
		// CompleteAbort: the client started a transaction the coordinator
		// never added a partition to.
		w.endEmptyTV2(pr, t, abort)
		return
	case e == "":
		e = w.endWhileDecided(t, abort, false)
	case e == errProducerFenced && tv2:
		// An EndTxn one epoch below the coordinator's is the retry of the
		// request that bumped it (retryOnEpochBump).
		t := pr.c.txn.ids[pr.txnID]
		if int32(pr.epoch)+1 == int32(t.epoch) {
			e = w.endRetry(pr, t, abort)
		}
	case e == errPIDMapping && tv2 && retryOnOverflow(pr, pr.c.txn.ids[pr.txnID]):
		e = w.endRetry(pr, pr.c.txn.ids[pr.txnID], abort)
		if e == errPIDMapping {
			e = errProducerFenced // the old PID is valid, its epoch is not (isValidEpoch)
		}
	}
	if e == "" && !pr.inTxn { // a retry answered NONE
		return
	}
	if e != "" {
		w.or.clientError(pr.name, pr.c, nil, e)
		pr.inTxn = false
		return
	}
	pr.inTxn = false
	if !t.open { // nothing was added: EndTxn on an empty transaction writes no marker
		return
	}
	if !tv2 {
		w.writeMarkers(pr.c, t, t.epoch, abort, pr.name)
		return
	}
	// TV2 (TransactionMetadata#prepareAbortOrCommit with an epoch bump):
	// the markers carry epoch + 1, which EndTxn hands the producer; on an
	// exhausted epoch it hands a new PID at epoch 0 instead. The producer
	// starts every partition at sequence 0.
	next := w.fenceEpoch(t.epoch)
	w.writeMarkers(pr.c, t, next, abort, pr.name)
	w.bumpAfterEnd(pr, t, next)
}

// bumpAfterEnd moves t to epoch next after a TV2 EndTxn, or to a new PID at
// epoch 0 when t's epoch is exhausted (TransactionMetadata#prepareComplete
// takes nextProducerId, prevProducerId keeping the old one), and hands it
// to pr, which starts every partition at sequence 0. With no PID block left
// (the allocator's top) the producer keeps its exhausted epoch: the next
// InitProducerId reports it.
func (w *world) bumpAfterEnd(pr *client, t *txnState, next int16) {
	if epochExhausted(t.epoch) {
		if p, ok := pr.c.takePID(); ok {
			t.prevPID, t.pid, next = t.pid, p, 0
		}
	}
	t.epoch = next
	pr.pid, pr.epoch, pr.seq = t.pid, t.epoch, map[*partition]int32{}
}

// endEmptyTV2 is TransactionCoordinator#endTransaction under TV2 for an
// EndTxn at the coordinator's epoch in Empty, CompleteCommit or
// CompleteAbort (no partition was added to the client's transaction): an
// ABORT bumps the epoch with no marker to write
// (prepareAbortOrCommit(PrepareAbort, noPartitionAdded), completed at once:
// CompleteAbort) and hands the producer the bumped epoch, or a new PID at
// an exhausted one; a COMMIT is INVALID_TXN_STATE.
func (w *world) endEmptyTV2(pr *client, t *txnState, abort bool) {
	pr.inTxn = false
	if !abort {
		w.or.clientError(pr.name, pr.c, nil, errInvalidTxnState)
		return
	}
	w.bumpAfterEnd(pr, t, w.fenceEpoch(t.epoch))
	t.ended = "abort"
}

// endRetry is TransactionCoordinator#endTransaction's answer to the retry
// of a TV2 EndTxn that bumped the epoch (retryOnEpochBump) or rotated the
// PID (retryOnOverflow): while the outcome is decided and its markers not
// all written, as in PrepareCommit or PrepareAbort (endWhileDecided); once
// the transaction completed, NONE for the outcome it completed with, and the
// client takes the coordinator's PID and epoch, INVALID_TXN_STATE for the
// other (endAfterComplete); otherwise the code the check gave
// (PRODUCER_FENCED, INVALID_PRODUCER_ID_MAPPING).
func (w *world) endRetry(pr *client, t *txnState, abort bool) string {
	fenced := errProducerFenced
	if t.pid != pr.pid {
		fenced = errPIDMapping
	}
	var e string
	switch {
	case w.endDecided(t):
		e = w.endWhileDecided(t, abort, true)
	case !t.open && t.ended != "":
		e = endAfterComplete(t, abort)
	default:
		return fenced
	}
	if e == "" { // the retried EndTxn had succeeded: NONE, with the current PID and epoch
		pr.inTxn = false
		pr.pid, pr.epoch, pr.seq = t.pid, t.epoch, map[*partition]int32{}
	}
	return e
}

// retryOnOverflow is TransactionCoordinator#endTransaction's test for the
// retry of a TV2 EndTxn that exhausted the epoch: the client's PID is the
// one the coordinator rotated away from (prevProducerId), its epoch the
// last one the client saw (Short.MaxValue - 1), and the new PID still at
// epoch 0.
func retryOnOverflow(pr *client, t *txnState) bool {
	return t != nil && t.prevPID == pr.pid && pr.epoch == math.MaxInt16-1 && t.epoch == 0
}

// endWhileDecided is TransactionCoordinator#handleEndTransaction's answer
// while t's coordinator has decided its last transaction's outcome and not
// written every marker (decidedEnd), in PrepareCommit or PrepareAbort.
// Under TV0/TV1, and for a TV2 retry (one epoch below the coordinator's,
// retry set), EndTxn asking for the same outcome is CONCURRENT_TRANSACTIONS
// (the client retries once the markers land), asking for the other one is
// INVALID_TXN_STATE. Under TV2 a request at the coordinator's epoch is no
// retry, and in PrepareCommit or PrepareAbort only a retry has a valid
// epoch: PRODUCER_FENCED. "" when no outcome is pending.
func (w *world) endWhileDecided(t *txnState, abort, retry bool) string {
	decided, ok := w.decidedEnd(t)
	switch {
	case !ok:
		return ""
	case txnVersion(w.opts) >= psm.TV2 && !retry:
		return errProducerFenced
	case decided == abort:
		return errConcurrentTxns
	}
	return errInvalidTxnState
}

// endAfterComplete is TransactionCoordinator#endTransaction's answer to an
// EndTxn for a transaction the coordinator completed already: under TV0/TV1
// at the producer's epoch, under TV2 as the retry of the request that
// bumped it (retryOnEpochBump). The outcome it completed with answers
// NONE (""), the other one INVALID_TXN_STATE, and so does any EndTxn in
// Empty (the transaction ended by InitProducerId).
func endAfterComplete(t *txnState, abort bool) string {
	asked := "commit"
	if abort {
		asked = "abort"
	}
	if t.ended == asked {
		return ""
	}
	return errInvalidTxnState
}

// offsets is TxnOffsetCommit inside the producer's open transaction
// (docs/scenarios.md, offsets): the transaction coordinator's answer first,
// then the group coordinator's KIP-447 checks (group.checkTxnOffsetCommit).
func (w *world) offsets(c *command) {
	pr, g := w.clients[c.Args[0]], w.groups[c.Args[1]]
	member := c.Args[2]
	if member == "-" {
		member = ""
	}
	gen := int32(-1)
	if known, ok := g.members[member]; ok {
		gen = known
	}
	if v, ok := c.Get("generation"); ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		gen = int32(n)
	}
	if !pr.inTxn {
		w.or.clientError(pr.name, g.c, nil, errInvalidTxnState)
		return
	}
	if txnVersion(w.opts) >= psm.TV2 {
		pr.txnStarted = true // TransactionManager#sendOffsetsToTransaction, before any request
	}
	if g.c.failed {
		w.or.clientError(pr.name, g.c, nil, errCoordinatorNA)
		return
	}
	// The transaction coordinator answers first: under TV1 the client's
	// AddOffsetsToTxn (KafkaApis#handleAddOffsetsToTxnRequest hands the
	// group's __consumer_offsets partition to
	// TransactionCoordinator#handleAddPartitionsToTransaction) precedes the
	// TxnOffsetCommit; under TV2 the group coordinator adds or verifies that
	// partition before it runs the offsets write
	// (CoordinatorRuntime#scheduleTransactionalWriteOperation). While the
	// last transaction's outcome is decided and its markers are not all
	// written (PrepareCommit, PrepareAbort) both answer
	// CONCURRENT_TRANSACTIONS, which the client retries after a backoff
	// (TransactionManager's AddOffsetsToTxnHandler re-enqueues it): the
	// request ends with the error, the transaction stays as it is.
	t, ce := w.coordinatorCheck(pr)
	if ce == "" && w.endDecided(t) {
		w.or.clientError(pr.name, pr.c, nil, errConcurrentTxns)
		return
	}
	e := g.checkTxnOffsetCommit(member, argStr(c, "instance"), gen)
	if e == "" {
		if ce != "" {
			e = errInvalidProducerEpoch // the offsets write is fenced at the __consumer_offsets leader
		} else if !t.open {
			t.open, t.producer, t.serial = true, pr.identity, pr.txnSerial
		}
	}
	if e == "" {
		return
	}
	w.or.clientError(pr.name, g.c, nil, e)
	switch e {
	case errIllegalGeneration, errUnknownMemberID, errFencedInstanceID:
		w.endTxn(pr, true) // CommitFailedException is abortable: the application aborts
	default:
		pr.fatal = true
	}
}

// addToTxn is AddPartitionsToTxn of p to pr's open transaction; false when
// the coordinator refused it (the client saw the error).
func (w *world) addToTxn(pr *client, p *partition) bool {
	t, e := w.coordinatorCheck(pr)
	if e == "" && w.endDecided(t) {
		e = errConcurrentTxns // the last transaction's markers are not all written
	}
	if e != "" {
		w.or.clientError(pr.name, pr.c, p, e)
		return false
	}
	if !t.open {
		t.open, t.producer, t.serial = true, pr.identity, pr.txnSerial
	}
	if !t.has(p) {
		t.parts = append(t.parts, p)
	}
	pr.txnParts[p] = true
	return true
}

// add is AddPartitionsToTxn with no batch after it yet (add): the
// partition belongs to the open transaction and will get its marker, but
// holds no data of it. Without an open transaction the client sees
// INVALID_TXN_STATE.
func (w *world) add(c *command) {
	pr := w.clients[c.Args[0]]
	p := pr.c.part(c.Args[1])
	switch {
	case !w.ready(pr):
	case pr.fatal:
		w.or.clientError(pr.name, pr.c, p, errProducerFenced)
	case !pr.inTxn:
		w.or.clientError(pr.name, pr.c, p, errInvalidTxnState)
	case !pr.txnParts[p]:
		w.addToTxn(pr, p)
	}
}

// send is one produce request of one batch.
func (w *world) send(c *command) error {
	pr := w.clients[c.Args[0]]
	p := pr.c.part(c.Args[1])
	if !w.ready(pr) {
		return nil
	}
	if pr.fatal { // ProducerFencedException is fatal: the client refuses to send
		w.or.clientError(pr.name, pr.c, p, errProducerFenced)
		return nil
	}
	if pr.inTxn && txnVersion(w.opts) >= psm.TV2 {
		pr.txnStarted = true // TransactionManager#maybeAddPartition, before any request
	}
	if pr.c.failed {
		w.or.clientError(pr.name, pr.c, p, errNetwork)
		return nil
	}
	if pr.inTxn && !pr.txnParts[p] {
		if !w.addToTxn(pr, p) {
			return nil
		}
	} else if pr.inTxn && w.opts.Get("txn-verification") == "on" && !openOn(p.lead(), pr.pid, sendEpoch(c, pr), release(w.opts)) {
		// KIP-890 verification (UnifiedLog#maybeStartTransactionVerification,
		// docs/producer-state.md): the partition has
		// no transaction open for this PID, so the leader asks the
		// coordinator whether the partition belongs to the producer's
		// transaction at this epoch.
		t, e := w.coordinatorCheck(pr)
		if e == "" && w.endDecided(t) {
			e = errConcurrentTxns // TransactionCoordinator#handleVerifyPartitionsInTransaction in PrepareCommit or PrepareAbort
		}
		if e != "" {
			w.or.clientError(pr.name, pr.c, p, e)
			return nil
		}
	}
	d := dataBatch{pid: pr.pid, epoch: pr.epoch, seq: pr.seq[p], records: argInt(c, "records", 1),
		bytes: argInt(c, "bytes", defaultSendBytes), txn: pr.inTxn, producer: pr.identity, txnSerial: pr.txnSerial, ts: w.tick()}
	if pr.pid == -1 {
		d.seq, d.epoch = -1, -1
	}
	if v, ok := c.Get("seq"); ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		d.seq = int32(n)
	}
	if _, ok := c.Get("epoch"); ok {
		d.epoch = sendEpoch(c, pr)
	}
	b, err := d.build()
	if err != nil {
		return fmt.Errorf("build batch: %w", err)
	}
	leo := p.lead().LogEndOffset()
	w.or.sent(d, pr.name)
	p.localPIDs.add(d.pid, d.producer) // I6 is about the PIDs that meet, appended or not
	if d.pid != codec.NoProducerID {
		p.origins[d.pid] = pidOrigin{p.c.name, d.pid}
	}
	res, err := p.lead().AppendClient(b)
	if err != nil {
		w.or.clientError(pr.name, pr.c, p, errorName(err))
		return nil
	}
	p.advanceHW()
	if d.seq >= 0 {
		pr.seq[p] = codec.IncrementSequence(d.seq, int32(d.records))
	}
	w.or.checkWrittenOnce(pr, p, d, res, leo)
	w.awaitAck(&pendingWrite{pr: pr, p: p, d: d, batch: b, res: res, leo: leo})
	return nil
}

// sendEpoch is the producer epoch of send c's batch: its epoch= if given,
// else pr's.
func sendEpoch(c *command, pr *client) int16 {
	if v, ok := c.Get("epoch"); ok {
		n, _ := strconv.ParseInt(v, 10, 16)
		return int16(n)
	}
	return pr.epoch
}

// repoint points pr at cluster cl without re-initialising it (a client
// whose bootstrap servers change after a failover): it keeps its PID, epoch
// and, per partition key, its next sequence; a transaction it has open
// stays open in the client, whose partitions must be added again on cl (and
// cl's coordinator does not know its transactional.id: the client's next
// AddPartitionsToTxn or EndTxn is refused there). A client whose
// InitProducerId is pending retries it on cl.
func (w *world) repoint(pr *client, cl *cluster) {
	seq := map[*partition]int32{}
	for p, s := range pr.seq {
		if np := cl.part(p.key); np != nil {
			seq[np] = s
		}
	}
	pr.c, pr.seq, pr.txnParts = cl, seq, map[*partition]bool{}
}

// openOn reports whether r's producer state has a transaction open for pid
// that a batch of epoch continues under release rel
// (UnifiedLog#hasOngoingTransaction: from Kafka 4.0 only at the batch's
// epoch, KAFKA-14563; in 3.x at any epoch).
func openOn(r replica, pid int64, epoch int16, rel psm.Release) bool {
	for _, e := range r.Producers() {
		if e.PID == pid {
			return rel.HasOngoingTransaction(e.TxnFirstOffset, e.Epoch, epoch)
		}
	}
	return false
}
