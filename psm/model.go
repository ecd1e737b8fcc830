package psm

import (
	"iter"
	"maps"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage"
)

// Model is the reference producer-state manager: Go maps, pointers and the
// rules of docs/producer-state.md written as read, one Kafka method per Go
// function, for clarity and not for speed. Store must behave exactly like it;
// FuzzStoreMatchesModel checks that. Its Reset is O(producers).
//
// A Model is not safe for concurrent use.
type Model struct {
	opts   Options
	parts  map[PartitionID]*modelPartition
	guards uint64 // last VerificationGuard value handed out
}

// NewModel returns an empty reference manager.
func NewModel(opts Options) *Model {
	return &Model{opts: opts.withDefaults(), parts: map[PartitionID]*modelPartition{}}
}

// modelEntry is ProducerStateEntry.
type modelEntry struct {
	pid           int64
	epoch         int16
	coordEpoch    int32
	lastTimestamp int64
	txnFirst      int64           // currentTxnFirstOffset, -1 when empty
	batches       []BatchMetadata // oldest first, at most NumBatchesToRetain
}

func emptyModelEntry(pid int64) modelEntry {
	return modelEntry{pid: pid, epoch: codec.NoProducerEpoch, coordEpoch: -1, lastTimestamp: codec.NoTimestamp, txnFirst: -1}
}

func (e *modelEntry) clone() modelEntry {
	c := *e
	c.batches = slices.Clone(e.batches)
	return c
}

func (e *modelEntry) lastSeq() int32 {
	if len(e.batches) == 0 {
		return codec.NoSequence
	}
	return e.batches[len(e.batches)-1].LastSeq
}

// maybeUpdateProducerEpoch: a new epoch clears the cached batches.
func (e *modelEntry) maybeUpdateProducerEpoch(epoch int16) {
	if e.epoch != epoch {
		e.batches = e.batches[:0]
		e.epoch = epoch
	}
}

func (e *modelEntry) addBatchMetadata(m BatchMetadata) {
	if len(e.batches) == NumBatchesToRetain {
		e.batches = slices.Delete(e.batches, 0, 1)
	}
	e.batches = append(e.batches, m)
}

func (e *modelEntry) addBatch(epoch int16, lastSeq int32, lastOffset int64, offsetDelta int32, ts int64, crc uint32, hasCRC bool) {
	e.maybeUpdateProducerEpoch(epoch)
	e.addBatchMetadata(BatchMetadata{LastSeq: lastSeq, LastOffset: lastOffset, OffsetDelta: offsetDelta, Timestamp: ts,
		CRC: crc, HasCRC: hasCRC})
	e.lastTimestamp = ts
}

// update is ProducerStateEntry.update(nextEntry), run at commit.
func (e *modelEntry) update(next *modelEntry) {
	e.maybeUpdateProducerEpoch(next.epoch)
	e.coordEpoch = next.coordEpoch
	e.lastTimestamp = next.lastTimestamp
	for _, m := range next.batches {
		e.addBatchMetadata(m)
	}
	e.txnFirst = next.txnFirst
}

func (e *modelEntry) info() ProducerInfo {
	in := ProducerInfo{ProducerID: e.pid, Epoch: e.epoch, CoordinatorEpoch: e.coordEpoch,
		LastTimestamp: e.lastTimestamp, TxnFirstOffset: e.txnFirst, NumBatches: len(e.batches)}
	copy(in.Batches[:], e.batches)
	return in
}

// modelVerification is VerificationStateEntry.
type modelVerification struct {
	timestamp int64
	guard     Guard
	lowestSeq int32
	epoch     int16
	// supportsEpochBump is VerificationStateEntry#supportsEpochBump: the
	// request that created the entry was transaction version 2. Set once,
	// at creation (ProducerStateManager#maybeCreateVerificationStateEntry).
	supportsEpochBump bool
}

func (v *modelVerification) maybeUpdateLowestSequenceAndEpoch(seq int32, epoch int16) {
	if epoch > v.epoch {
		v.lowestSeq = seq
		v.epoch = epoch
	} else if epoch == v.epoch && seq < v.lowestSeq {
		v.lowestSeq = seq
	}
}

type modelPartition struct {
	producers    map[int64]*modelEntry
	verification map[int64]*modelVerification
	ongoing      map[int64]TxnInfo // by first offset
	unreplicated map[int64]TxnInfo // by first offset
	app          modelAppend
}

func (m *Model) part(p PartitionID) *modelPartition {
	mp := m.parts[p]
	if mp == nil {
		mp = &modelPartition{
			producers:    map[int64]*modelEntry{},
			verification: map[int64]*modelVerification{},
			ongoing:      map[int64]TxnInfo{},
			unreplicated: map[int64]TxnInfo{},
		}
		m.parts[p] = mp
	}
	return mp
}

func (m *Model) isExpired(e *modelEntry, now int64) bool {
	return e.txnFirst < 0 && now-e.lastTimestamp >= m.opts.ExpirationMs
}

// sortedTxns returns the values of a first-offset-keyed map in key order.
func sortedTxns(txns map[int64]TxnInfo) []TxnInfo {
	out := make([]TxnInfo, 0, len(txns))
	for _, k := range slices.Sorted(maps.Keys(txns)) {
		out = append(out, txns[k])
	}
	return out
}

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
		return ErrInvalidProducerEpoch
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
		return ErrOutOfOrderSequence
	}
	if ai.hasVerif && firstSeq > ai.verif.lowestSeq {
		return ErrOutOfOrderSequence
	}
	if epoch != ai.upd.epoch {
		if firstSeq != 0 && ai.upd.epoch != codec.NoProducerEpoch {
			return ErrOutOfOrderSequence
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
		return ErrOutOfOrderSequence
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
			return done, false, false, ErrInvalidRecord
		}
		if b.ControlType != codec.ControlCommit && b.ControlType != codec.ControlAbort {
			return done, false, false, ErrUnknownServerError
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
		return false, ErrInvalidTxnState
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
		return CompletedTxn{}, false, ErrTransactionCoordinatorFenced
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

// Begin starts an append to p.
// Update is Begin, Add, then Commit or Abort (Manager.Update).
func (m *Model) Update(p PartitionID, origin Origin, b *Batch) (*Outcome, *Committed, error) {
	return update(m.Begin(p, origin), b)
}

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
			// validation loop meets the barrier: the producers go now,
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
		return ErrInvalidProducerEpoch
	}
	if b.Control || !a.m.opts.VerifyTransactions {
		return nil
	}
	var stored Guard
	if v := a.part.verification[pid]; v != nil && !a.verifGone {
		stored = v.guard
	}
	if stored == 0 || stored != a.guard {
		return ErrInvalidTxnState
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

func (m *Model) Reset(p PartitionID) int {
	part := m.part(p)
	clear(part.producers)
	if m.opts.BarrierApply == Exact {
		clear(part.verification)
	}
	return len(part.ongoing)
}

// Clear is the reset of ProducerStateManager#truncateAndReload: producers
// and transactions go, the verification entries stay (Kafka keeps its
// verificationStates across a truncation).
func (m *Model) Clear(p PartitionID) {
	part := m.part(p)
	clear(part.producers)
	clear(part.ongoing)
	clear(part.unreplicated)
}

// HasLateTransaction reads the oldest open transaction's producer entry as
// ProducerStateManager#updateOldestTxnTimestamp does (no entry: -1).
func (m *Model) HasLateTransaction(p PartitionID, nowMs int64) bool {
	part := m.part(p)
	if len(part.ongoing) == 0 {
		return false
	}
	oldest := sortedTxns(part.ongoing)[0]
	lastTs := int64(-1)
	if e := part.producers[oldest.ProducerID]; e != nil {
		lastTs = e.lastTimestamp
	}
	return m.opts.late(lastTs, nowMs)
}

func (m *Model) StartVerification(p PartitionID, pid int64, seq int32, epoch int16, tv TxnVersion, nowMs int64) (Guard, error) {
	part := m.part(p)
	if e := part.producers[pid]; e != nil {
		if epoch < e.epoch && m.opts.Release.refusesStaleVerification() {
			return 0, ErrInvalidProducerEpoch // KAFKA-18042
		}
		if m.opts.ongoing(e.txnFirst, e.epoch, epoch) {
			return 0, nil
		}
	}
	v := part.verification[pid]
	if v == nil {
		m.guards++
		v = &modelVerification{timestamp: nowMs, guard: Guard(m.guards), lowestSeq: seq, epoch: epoch,
			supportsEpochBump: tv >= TV2}
		part.verification[pid] = v
	}
	v.maybeUpdateLowestSequenceAndEpoch(seq, epoch)
	return v.guard, nil
}

func (m *Model) Producer(p PartitionID, pid int64) (ProducerInfo, bool) {
	e := m.part(p).producers[pid]
	if e == nil {
		return ProducerInfo{}, false
	}
	return e.info(), true
}

// Producers yields the entries by increasing PID.
func (m *Model) Producers(p PartitionID) iter.Seq[ProducerInfo] {
	return func(yield func(ProducerInfo) bool) {
		part := m.part(p)
		for _, pid := range slices.Sorted(maps.Keys(part.producers)) {
			if !yield(part.producers[pid].info()) {
				return
			}
		}
	}
}

func (m *Model) ProducerCount(p PartitionID) int { return len(m.part(p).producers) }

func (m *Model) OpenTxns(dst []TxnInfo, p PartitionID) []TxnInfo {
	return append(dst, sortedTxns(m.part(p).ongoing)...)
}

func (m *Model) UnreplicatedTxns(dst []TxnInfo, p PartitionID) []TxnInfo {
	return append(dst, sortedTxns(m.part(p).unreplicated)...)
}

func (m *Model) FirstUnstableOffset(p PartitionID) (int64, bool) {
	part := m.part(p)
	first, ok := int64(0), false
	for _, txns := range []map[int64]TxnInfo{part.ongoing, part.unreplicated} {
		for k := range txns {
			if !ok || k < first {
				first, ok = k, true
			}
		}
	}
	return first, ok
}

func (m *Model) LastStableOffset(p PartitionID, hw int64) int64 {
	if fuo, ok := m.FirstUnstableOffset(p); ok && fuo < hw {
		return fuo
	}
	return hw
}

func (m *Model) OnHighWatermark(p PartitionID, hw int64) {
	part := m.part(p)
	for k, t := range part.unreplicated {
		if t.LastOffset < hw {
			delete(part.unreplicated, k)
		}
	}
}

func (m *Model) ExpireProducers(p PartitionID, nowMs int64) int {
	part := m.part(p)
	n := 0
	for pid, e := range part.producers {
		if m.isExpired(e, nowMs) {
			delete(part.producers, pid)
			n++
		}
	}
	for pid, v := range part.verification {
		if nowMs-v.timestamp >= m.opts.ExpirationMs {
			delete(part.verification, pid)
		}
	}
	return n
}

func (m *Model) AppendSnapshot(dst []byte, p PartitionID) []byte {
	part := m.part(p)
	start := len(dst)
	dst = appendSnapshotHeader(dst, len(part.producers))
	for _, pid := range slices.Sorted(maps.Keys(part.producers)) {
		in := part.producers[pid].info()
		dst = appendSnapshotEntry(dst, &in)
	}
	return finishSnapshot(dst, start)
}

func (m *Model) LoadSnapshot(p PartitionID, src []byte, nowMs int64) error {
	n, err := checkSnapshot(src)
	if err != nil {
		return err
	}
	m.Clear(p)
	part := m.part(p)
	for i := range n {
		in := snapshotEntry(src, i)
		e := &modelEntry{pid: in.ProducerID, epoch: in.Epoch, coordEpoch: in.CoordinatorEpoch,
			lastTimestamp: in.LastTimestamp, txnFirst: in.TxnFirstOffset, batches: slices.Clone(in.Window())}
		if m.isExpired(e, nowMs) {
			continue
		}
		part.producers[e.pid] = e
		if e.txnFirst >= 0 {
			part.ongoing[e.txnFirst] = TxnInfo{ProducerID: e.pid, FirstOffset: e.txnFirst, LastOffset: -1}
		}
	}
	return nil
}
