package psm

import (
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
)

// The Model's append: ProducerAppendInfo (appendInfo) per producer, and
// the append of one partition (modelAppend) that validates batch by batch
// and commits as ProducerStateManager#update and #completeTxn do.

// appendInfo is ProducerAppendInfo.
type appendInfo struct {
	pid      int64
	origin   Origin
	release  Release
	cur      modelEntry // the committed entry, or an empty one
	upd      modelEntry // cur's scalars with an empty batch deque
	verif    modelVerification
	hasVerif bool
}

func (ai *appendInfo) clone() *appendInfo {
	c := *ai
	c.cur = ai.cur.clone()
	c.upd = ai.upd.clone()
	return &c
}

// checkProducerEpoch is ProducerAppendInfo#checkProducerEpoch for a batch
// of epoch stating transaction version tv (TVUnknown for data batches,
// which is checked as TV0).
func (ai *appendInfo) checkProducerEpoch(epoch int16, tv TxnVersion) error {
	current := ai.upd.epoch
	invalid := epoch < current
	if tv >= TV2 {
		invalid = epoch <= current
	}
	if !invalid {
		return nil
	}
	// KAFKA-19999: a TV2 marker at the current epoch with no transaction
	// open is a retry of a marker already written.
	if tv >= TV2 && epoch == current && ai.upd.txnFirst < 0 {
		return nil
	}
	if ai.origin != Replication {
		return kafkaerr.InvalidProducerEpoch
	}
	return nil
}

func inSequence(lastSeq, nextSeq int32) bool {
	return int64(nextSeq) == int64(lastSeq)+1 || (nextSeq == 0 && lastSeq == 1<<31-1)
}

func (ai *appendInfo) checkSequence(epoch int16, firstSeq int32) error {
	// Transaction version 2 (KAFKA-18202, Kafka 4.1): a producer whose
	// committed entry caches no batch must start at sequence 0.
	if ai.release.tv2StartsAtZero() && ai.hasVerif && ai.verif.supportsEpochBump && firstSeq != 0 && len(ai.cur.batches) == 0 {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	if ai.hasVerif && firstSeq > ai.verif.lowestSeq {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	if epoch != ai.upd.epoch {
		if firstSeq != 0 && ai.upd.epoch != codec.NoProducerEpoch {
			return kafkaerr.OutOfOrderSequenceNumber
		}
		return nil
	}
	var last int32
	switch {
	case len(ai.upd.batches) > 0:
		last = ai.upd.lastSeq()
	case epoch == ai.cur.epoch:
		last = ai.cur.lastSeq()
	default:
		last = codec.NoSequence
	}
	if ai.cur.epoch != codec.NoProducerEpoch && !inSequence(last, firstSeq) {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	return nil
}

// append is ProducerAppendInfo.append. started is set when the batch opened a
// transaction.
func (ai *appendInfo) append(b *Batch) (done CompletedTxn, hasDone, started bool, err error) {
	if b.Control {
		if b.RecordsCount == 0 {
			return done, false, false, nil // a marker cleaned away
		}
		if b.RecordsCount < 0 {
			return done, false, false, kafkaerr.InvalidRecord
		}
		if b.ControlType != codec.ControlCommit && b.ControlType != codec.ControlAbort {
			return done, false, false, kafkaerr.UnknownServerError
		}
		done, hasDone, err = ai.appendEndTxnMarker(b)
		return done, hasDone, false, err
	}
	started, err = ai.appendDataBatch(b)
	return done, false, started, err
}

func (ai *appendInfo) appendDataBatch(b *Batch) (started bool, err error) {
	if err := ai.checkProducerEpoch(b.ProducerEpoch, TVUnknown); err != nil {
		return false, err
	}
	if ai.origin == Client {
		if err := ai.checkSequence(b.ProducerEpoch, b.BaseSequence); err != nil {
			return false, err
		}
	}
	ai.upd.addBatch(b.ProducerEpoch, b.LastSequence(), b.LastOffset(), b.LastOffsetDelta, b.MaxTimestamp, b.CRC, b.HasCRC)
	switch {
	case ai.upd.txnFirst >= 0 && !b.Transactional:
		return false, kafkaerr.InvalidTxnState
	case ai.upd.txnFirst < 0 && b.Transactional:
		ai.upd.txnFirst = b.BaseOffset
		return true, nil
	}
	return false, nil
}

func (ai *appendInfo) appendEndTxnMarker(b *Batch) (CompletedTxn, bool, error) {
	tv := b.TxnVersion
	if !ai.release.markerTxnVersion() {
		tv = TV0 // before KAFKA-19446 the leader is not told the version
	}
	if tv == TVUnknown {
		// Only a replicated marker may state none: the leader checked it.
		if ai.origin != Replication {
			return CompletedTxn{}, false, ErrMarkerWithoutTxnVersion
		}
		tv = TV0
	}
	if err := ai.checkProducerEpoch(b.ProducerEpoch, tv); err != nil {
		return CompletedTxn{}, false, err
	}
	if ai.upd.coordEpoch > b.CoordinatorEpoch && ai.origin != Replication {
		return CompletedTxn{}, false, kafkaerr.TransactionCoordinatorFenced
	}
	var done CompletedTxn
	hasDone := ai.upd.txnFirst >= 0
	if hasDone {
		done = CompletedTxn{ProducerID: ai.pid, FirstOffset: ai.upd.txnFirst, LastOffset: b.BaseOffset,
			Aborted: b.ControlType == codec.ControlAbort}
	}
	ai.upd.maybeUpdateProducerEpoch(b.ProducerEpoch)
	ai.upd.coordEpoch = b.CoordinatorEpoch
	ai.upd.lastTimestamp = b.ControlTimestamp
	ai.upd.txnFirst = -1
	return done, hasDone, nil
}

// modelAppend is the append of one partition: UnifiedLog.append's map of
// ProducerAppendInfo plus the transactions it started and completed.
type modelAppend struct {
	m      *Model
	part   *modelPartition
	origin Origin
	guard  Guard

	infos          map[int64]*appendInfo
	started        []TxnInfo // in batch order
	completed      []CompletedTxn
	clearVerif     map[int64]bool
	committedEmpty bool // a barrier was met: committed entries read as absent
	verifGone      bool // an Exact barrier was met: verification entries read as absent
	resetAtCommit  bool // an Exact barrier was met: clear the partition at commit
	barriers       int
	kept           int
	aborted        []storage.AbortedTxn
	out            Outcome
	com            Committed
}

// Update is Begin, Add, then Commit or Abort (Manager.Update).
func (m *Model) Update(p PartitionID, origin Origin, b *Batch) (*Outcome, *Committed, error) {
	return update(m.Begin(p, origin), b)
}

// Begin starts an append to p.
func (m *Model) Begin(p PartitionID, origin Origin) Appender {
	a := &m.part(p).app
	*a = modelAppend{m: m, part: m.part(p), origin: origin,
		infos: map[int64]*appendInfo{}, clearVerif: map[int64]bool{}}
	return a
}

func (a *modelAppend) SetGuard(g Guard) { a.guard = g }

// Pending is ProducerAppendInfo#toEntry: the updated entry.
func (a *modelAppend) Pending(pid int64) (ProducerInfo, bool) {
	ai := a.infos[pid]
	if ai == nil {
		return ProducerInfo{}, false
	}
	return ai.upd.info(), true
}

func (a *modelAppend) committed(pid int64) *modelEntry {
	if a.committedEmpty {
		return nil
	}
	return a.part.producers[pid]
}

func (a *modelAppend) prepareUpdate(pid int64) *appendInfo {
	ai := &appendInfo{pid: pid, origin: a.origin, release: a.m.opts.Release, cur: emptyModelEntry(pid)}
	if e := a.committed(pid); e != nil {
		ai.cur = e.clone()
	}
	ai.upd = ai.cur.clone()
	ai.upd.batches = nil
	if v := a.part.verification[pid]; v != nil && !a.verifGone {
		ai.verif, ai.hasVerif = *v, true
	}
	return ai
}

// findDuplicate is ProducerStateEntry.findDuplicateBatch; under
// Options.DedupCRC a match whose CRC differs is ErrDuplicateCRCMismatch.
func findDuplicate(e *modelEntry, b *Batch) (Duplicate, error) {
	if e == nil || e.epoch != b.ProducerEpoch {
		return Duplicate{}, nil
	}
	last := b.LastSequence()
	for _, m := range e.batches {
		if m.FirstSeq() == b.BaseSequence && m.LastSeq == last {
			if m.crcMismatch(b) {
				return Duplicate{}, ErrDuplicateCRCMismatch
			}
			return Duplicate{Found: true, FirstOffset: m.FirstOffset(), LastOffset: m.LastOffset, Timestamp: m.Timestamp}, nil
		}
	}
	return Duplicate{}, nil
}

func (a *modelAppend) Add(b *Batch) (*Outcome, error) {
	if crc, has := a.m.opts.windowCRC(b); crc != b.CRC || has != b.HasCRC {
		nb := *b // the window keeps a known CRC only under DedupCRC
		nb.CRC, nb.HasCRC = crc, has
		b = &nb
	}
	if b.isBarrier() {
		a.barriers++
		a.kept = len(a.part.ongoing) + len(a.started) - len(a.completed)
		a.committedEmpty = true
		if a.m.opts.BarrierApply == Exact {
			// As if the append's batches were applied one by one: what
			// came before the barrier goes with the committed state.
			a.resetAtCommit, a.verifGone = true, true
			a.infos = map[int64]*appendInfo{}
			a.clearVerif = map[int64]bool{}
		} else {
			// The prototype's expireMirroredProducers, run where the
			// validation loop meets the barrier: the producers go at once,
			// whatever becomes of the append; verification entries and
			// the pending updates of earlier batches stay.
			clear(a.part.producers)
		}
		a.out = Outcome{Barrier: true}
		return &a.out, nil
	}
	pid := b.ProducerID
	if !a.m.opts.tracks(pid) {
		a.out = Outcome{}
		return &a.out, nil
	}
	if a.origin == Client {
		dup, err := findDuplicate(a.committed(pid), b)
		if err != nil {
			return nil, err
		}
		if dup.Found {
			a.out = Outcome{Duplicate: dup}
			return &a.out, nil
		}
	}
	if (a.origin == Client || a.origin == Coordinator) && b.Transactional {
		if err := a.checkTransactional(pid, b); err != nil {
			return nil, err
		}
	}
	ai := a.infos[pid]
	if ai == nil {
		ai = a.prepareUpdate(pid)
	}
	work := ai.clone() // validation works on a copy
	done, hasDone, started, err := work.append(b)
	if err != nil {
		return nil, err
	}
	a.infos[pid] = work
	if started {
		a.started = append(a.started, TxnInfo{ProducerID: pid, FirstOffset: b.BaseOffset, LastOffset: -1})
	}
	if b.Transactional && !a.keepsVerification(pid, b) {
		a.clearVerif[pid] = true
	}
	if hasDone {
		a.completed = append(a.completed, done)
	}
	a.out = Outcome{Completed: done, TxnCompleted: hasDone}
	return &a.out, nil
}

// checkTransactional is the check UnifiedLog#analyzeAndValidateProducerState
// makes of a transactional batch or marker from CLIENT or COORDINATOR
// before ProducerAppendInfo sees it, when its producer has no transaction
// open at its epoch (#hasOngoingTransaction): from Kafka 4.2 an epoch below
// the committed entry's is INVALID_PRODUCER_EPOCH (KAFKA-19690); then,
// with Options.VerifyTransactions, a data batch needs the guard of its
// producer's verification entry (#batchMissingRequiredVerification),
// else INVALID_TXN_STATE.
func (a *modelAppend) checkTransactional(pid int64, b *Batch) error {
	e := a.committed(pid)
	if e != nil && a.m.opts.ongoing(e.txnFirst, e.epoch, b.ProducerEpoch) {
		return nil
	}
	if e != nil && b.ProducerEpoch < e.epoch && a.m.opts.Release.staleEpochFirst() {
		return kafkaerr.InvalidProducerEpoch
	}
	if b.Control || !a.m.opts.VerifyTransactions {
		return nil
	}
	var stored Guard
	if v := a.part.verification[pid]; v != nil && !a.verifGone {
		stored = v.guard
	}
	if stored == 0 || stored != a.guard {
		return kafkaerr.InvalidTxnState
	}
	return nil
}

// keepsVerification is the exception of UnifiedLog#updateProducers to
// removing the verification entry of a producer whose transactional batch
// or marker passed: from Kafka 4.0, a marker at the epoch of an entry that
// supports the epoch bump (created by a TV2 request) keeps it, for it was
// made for the producer's next transaction, verified before this marker
// closed the last one (KAFKA-18654).
func (a *modelAppend) keepsVerification(pid int64, b *Batch) bool {
	if !b.Control || !a.m.opts.Release.keepsTV2Verification() {
		return false
	}
	v := a.part.verification[pid]
	return v != nil && v.supportsEpochBump && b.ProducerEpoch == v.epoch
}

func (a *modelAppend) Commit() *Committed {
	part := a.part
	if a.resetAtCommit {
		clear(part.producers)
		clear(part.verification)
	}
	// Under Prototype the barrier cleared the producers already (Add).
	for pid, ai := range a.infos {
		if e := part.producers[pid]; e != nil {
			e.update(&ai.upd)
		} else {
			e := ai.upd.clone()
			part.producers[pid] = &e
		}
	}
	for _, t := range a.started {
		part.ongoing[t.FirstOffset] = t
	}
	for pid := range a.clearVerif {
		delete(part.verification, pid)
	}
	a.aborted = a.aborted[:0]
	for _, ct := range a.completed {
		lso := ct.LastOffset + 1 // PSM.lastStableOffset(completedTxn)
		for _, t := range sortedTxns(part.ongoing) {
			if t.ProducerID != ct.ProducerID {
				lso = t.FirstOffset
				break
			}
		}
		if ct.Aborted {
			a.aborted = append(a.aborted, storage.AbortedTxn{ProducerID: ct.ProducerID, FirstOffset: ct.FirstOffset, LastOffset: ct.LastOffset, LastStableOffset: lso})
		}
		if t, ok := part.ongoing[ct.FirstOffset]; ok { // completeTxn
			delete(part.ongoing, ct.FirstOffset)
			t.LastOffset = ct.LastOffset
			part.unreplicated[ct.FirstOffset] = t
		}
	}
	a.com = Committed{Completed: a.completed, Aborted: a.aborted, Barriers: a.barriers}
	if a.barriers > 0 {
		a.com.KeptOpenTxns = a.kept
	}
	a.infos = nil
	return &a.com
}

func (a *modelAppend) Abort() { a.infos = nil }
