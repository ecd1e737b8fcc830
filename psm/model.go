package psm

import (
	"iter"
	"maps"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
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
	lastTS := int64(-1)
	if e := part.producers[oldest.ProducerID]; e != nil {
		lastTS = e.lastTimestamp
	}
	return m.opts.late(lastTS, nowMs)
}

func (m *Model) StartVerification(p PartitionID, pid int64, seq int32, epoch int16, tv TxnVersion, nowMs int64) (Guard, error) {
	part := m.part(p)
	if e := part.producers[pid]; e != nil {
		if epoch < e.epoch && m.opts.Release.refusesStaleVerification() {
			return 0, kafkaerr.InvalidProducerEpoch // KAFKA-18042
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
