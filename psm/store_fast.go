package psm

import "github.com/mirrorpath/mirrorpath/kafkaerr"

// The Store's fast path: an append whose batches are plain data batches of
// known producers, outside a transaction, with no verification entry in the
// partition, is checked straight against the committed slot and written
// back by slot index at Commit, with no pending entry (see the package
// doc). The check is one sequence of steps (fastEligible, the table
// lookup, maybeDuplicate, checkClient, the open-transaction test) written
// three times: fastSlot, and by hand in Add and in Store.Update, because
// Go inlines neither fastSlot nor the write, and the call costs those two
// paths measurably (see their comments). TestFastPathCopiesAgree drives
// the three copies with one case list, so that a drift between them fails
// a unit test; FuzzStoreMatchesModel holds all three to the Model.

// Add validates b (Appender.Add). Its fast path takes the first batch of an
// append when it is a CLIENT or REPLICATION data batch outside a
// transaction, after no barrier, and under REPLICATION the batches after it
// while they all take it. It hands the batch to addGeneral, with nothing
// changed, when the rest of the fast case does not hold (untracked or new
// producer, a verification entry, a possible CLIENT duplicate, an epoch
// change in a REPLICATION run). Otherwise fastSlot's steps run the general path's
// checks (apply, and for CLIENT checkSequence, with the pending window empty
// and no verification entry) in the same order against the committed slot.
// REPLICATION has no epoch fence and no sequence check, so only the
// transaction-state check is left; the batches of one append before this
// one, pending on the fast path, cannot have changed it (none opens or
// closes a transaction), so the committed slot still answers it, whether
// they came from this producer or not.
func (a *StoreAppender) Add(b *Batch) (*Outcome, error) {
	// Until an append leaves the fast path (general), it has no pending
	// entry and met no barrier. Its first batch may take the fast path
	// (below); so may the ones after it under REPLICATION (addNext).
	if a.general || a.fastSet {
		return a.addNext(b)
	}
	// fastSlot, written out for the first batch (every CLIENT append), as
	// Update does: Go does not inline fastSlot, and its call and the
	// second shardOf after it cost the staged protocol a few per cent at 1k
	// producers. The steps are fastSlot's, in its order, through the same
	// helpers; FuzzStoreMatchesModel holds Add to the Model.
	sp := a.part
	if !sp.fastEligible(a.s.trackBelow, a.origin, b) {
		return a.addGeneral(b)
	}
	pid := b.ProducerID
	h := hashPID(pid, a.seed)
	sh := sp.shardOf(h)
	sh.prefetchWindow(h)
	i, found := sh.find(pid, sp.gen, h)
	if !found {
		return a.addGeneral(b)
	}
	cv := &sh.slots[i]
	epoch := b.ProducerEpoch
	if a.origin == Client {
		if cv.maybeDuplicate(epoch, b.LastSequence()) {
			return a.addGeneral(b) // the general path walks the window
		}
		switch cv.checkClient(epoch, b.BaseSequence) {
		case clientOutOfOrder:
			return nil, kafkaerr.OutOfOrderSequenceNumber
		case clientFenced:
			return nil, kafkaerr.InvalidProducerEpoch
		}
	}
	if cv.txnFirst >= 0 {
		return nil, kafkaerr.InvalidTxnState
	}
	// No Outcome is built on this path: copying a returned struct that was
	// just stored costs a store-forwarding stall. more is emptied here
	// rather than in Begin (an appender dropped without Commit or Abort may
	// have left some).
	a.more = a.more[:0]
	f := &a.fast
	f.pid, f.h, f.shard, f.slot, f.version = pid, h, uint8(h>>shardShift), int32(i), sh.version
	f.epoch = epoch
	f.m = BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
		OffsetDelta: b.LastOffsetDelta}
	f.m.CRC, f.m.HasCRC = a.s.opts.windowCRC(b)
	a.fastSet = true
	return &a.none, nil
}

// addNext is Add of a batch after the first: the general path, or under
// REPLICATION the fast path again while every batch takes it (a mirror
// fetch of many batches), REPLICATION checking a data batch only against
// the committed entry's transaction state.
//
//go:noinline
func (a *StoreAppender) addNext(b *Batch) (*Outcome, error) {
	if a.general || a.origin != Replication {
		return a.addGeneral(b)
	}
	sp := a.part
	h, i, err := sp.fastSlot(a.s.trackBelow, a.seed, a.origin, b)
	if i < 0 {
		return a.addGeneral(b)
	}
	if err != nil {
		return nil, err
	}
	sh := sp.shardOf(h)
	epoch := b.ProducerEpoch
	if epoch != sh.slots[i].epoch || !a.firstKeepsEpoch() {
		// See fastAppend. fastSlot's kafkaerr.InvalidTxnState comes first here,
		// which is the general path's answer too: under REPLICATION the
		// pending entries of this append copy the committed txnFirst.
		return a.addGeneral(b)
	}
	a.more = append(a.more, fastAppend{})
	f := &a.more[len(a.more)-1]
	f.pid, f.h, f.shard, f.slot, f.version = b.ProducerID, h, uint8(h>>shardShift), int32(i), sh.version
	f.epoch = epoch
	f.m = BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
		OffsetDelta: b.LastOffsetDelta}
	f.m.CRC, f.m.HasCRC = a.s.opts.windowCRC(b)
	return &a.none, nil
}

// fastAppend is the pending update of one batch on the fast path: a CLIENT
// or REPLICATION data batch outside a transaction from a producer with a
// committed entry and no verification entry, after no barrier (the usual
// produce request; under REPLICATION, each batch of the usual fetch). The
// batch was validated straight against the committed slot, and Commit
// writes it there with the remembered slot index unless a rehash moved it.
//
// A REPLICATION batch joins the fast updates of its append only when it and
// the append's first batch carry their producers' committed epochs: then
// no update resets a window, and writing them one by one at Commit gives
// what Kafka's merge of a pending entry gives. (With an epoch change inside
// the append it does not: the pending entry's window restarts at each
// change, and the merge clears the committed window only if the final epoch
// differs from the committed one.)
type fastAppend struct {
	pid     int64
	h       uint64
	shard   uint8
	slot    int32
	version uint32
	epoch   int16 // the batch's
	m       BatchMetadata
}

// What checkClient says of a CLIENT batch.
const (
	clientOK         = iota
	clientOutOfOrder // OUT_OF_ORDER_SEQUENCE_NUMBER
	clientFenced     // INVALID_PRODUCER_EPOCH
)

// checkClient is checkSequence and the epoch fence of a CLIENT data batch
// (epoch, first sequence) against committed slot cv, with no pending window
// and no verification entry: its cases in its order (epoch < cv.epoch is
// tested first only where it cannot be equal). The caller has ruled out a
// duplicate. Small enough for Go to inline into Add and Update.
func (cv *slot) checkClient(epoch int16, first int32) int {
	switch {
	case epoch == cv.epoch:
		// In sequence: first = lastSeq+1, or 0 after MaxInt32 (Kafka's
		// inSequence, in int64), or 0 after no batch.
		next := int32(0)
		if cv.n > 0 && cv.last != 1<<31-1 {
			next = cv.last + 1
		}
		if cv.epoch != -1 && first != next {
			return clientOutOfOrder
		}
	case epoch < cv.epoch:
		return clientFenced
	case first != 0 && cv.epoch != -1:
		return clientOutOfOrder
	}
	return clientOK
}

// fastSlot is the fast path's check: whether data batch b from origin takes
// the fast path against p's committed entry, and if so the general path's
// checks (apply, and for CLIENT checkSequence, with the pending window empty
// and no verification entry) in the same order. It returns i < 0 when the
// general path must take the batch, with nothing changed (fastEligible
// fails, a new producer, a possible CLIENT duplicate); else the error the
// batch is rejected with, or nil and the committed slot i of shard
// h>>shardShift to write. seed is p's (seedOf). addNext calls it; Add (for
// an append's first batch) and Update write it out (see there).
func (sp *storePart) fastSlot(trackBelow, seed uint64, origin Origin, b *Batch) (h uint64, i int, err error) {
	if !sp.fastEligible(trackBelow, origin, b) {
		return 0, -1, nil
	}
	pid := b.ProducerID
	h = hashPID(pid, seed)
	sh := sp.shardOf(h)
	sh.prefetchWindow(h)
	i, found := sh.find(pid, sp.gen, h)
	if !found {
		return 0, -1, nil
	}
	cv := &sh.slots[i]
	if origin == Client {
		epoch := b.ProducerEpoch
		if cv.maybeDuplicate(epoch, b.LastSequence()) {
			return 0, -1, nil // the general path walks the window
		}
		switch cv.checkClient(epoch, b.BaseSequence) {
		case clientOutOfOrder:
			return h, i, kafkaerr.OutOfOrderSequenceNumber
		case clientFenced:
			return h, i, kafkaerr.InvalidProducerEpoch
		}
	}
	if cv.txnFirst >= 0 {
		return h, i, kafkaerr.InvalidTxnState
	}
	return h, i, nil
}

// fastEligible is the fast case before the table is read: a CLIENT or
// REPLICATION data batch outside a transaction from a tracked producer, in a
// partition with no verification entry.
func (sp *storePart) fastEligible(trackBelow uint64, origin Origin, b *Batch) bool {
	return origin != Coordinator && !b.Control && !b.Transactional && uint64(b.ProducerID) < trackBelow &&
		len(sp.verif) == 0
}

// maybeDuplicate reports that a CLIENT batch of epoch ending at sequence
// last may repeat a batch cv caches (its last sequence matches one), which
// only the general path's walk of the window can tell.
func (cv *slot) maybeDuplicate(epoch int16, last int32) bool {
	return epoch == cv.epoch && cv.seqs.has(last)
}

// Update applies b to p as an append of b alone: Begin, Add, then Commit
// when Add accepts it (Manager.Update). Its fast case, Add's (a known
// producer's data batch outside a transaction, no verification entry, not
// a possible duplicate), is checked and written straight into the slot in
// one call, with no pending update and no Commit.
func (s *Store) Update(p PartitionID, origin Origin, b *Batch) (*Outcome, *Committed, error) {
	// part, written out: Go does not inline part, and a partition not made
	// yet takes the general way, which makes it.
	var sp *storePart
	if ps := s.parts.Load(); ps != nil && int(p) < len(*ps) {
		sp = (*ps)[p]
	}
	// fastSlot and shard.write, written out: Go inlines neither, and a call
	// of fastSlot here costs BenchmarkUpdateOne 59 % at 100k producers and
	// 78 % at 1M (cpu-sec/op, 10 interleaved rounds, p < 0.01). This path
	// is short enough for the processor to overlap one update's cache
	// misses with the next's; the call's extra instructions stop that. The
	// steps are fastSlot's, in
	// its order, through the same helpers (fastEligible, maybeDuplicate,
	// checkClient); FuzzStoreMatchesModel holds Update to the Model.
	if sp == nil || sp.app.general || !sp.fastEligible(s.trackBelow, origin, b) {
		return s.updateGeneral(p, origin, b)
	}
	pid := b.ProducerID
	h := hashPID(pid, seedOf(p))
	sh := sp.shardOf(h)
	sh.prefetchWindow(h)
	i, found := sh.find(pid, sp.gen, h)
	if !found {
		return s.updateGeneral(p, origin, b)
	}
	a := &sp.app
	a.fastSet = false // Begin's discarding of an unfinished append
	cv := &sh.slots[i]
	epoch := b.ProducerEpoch
	if origin == Client {
		if cv.maybeDuplicate(epoch, b.LastSequence()) {
			return s.updateGeneral(p, origin, b)
		}
		switch cv.checkClient(epoch, b.BaseSequence) {
		case clientOutOfOrder:
			return nil, nil, kafkaerr.OutOfOrderSequenceNumber
		case clientFenced:
			return nil, nil, kafkaerr.InvalidProducerEpoch
		}
	}
	if cv.txnFirst >= 0 {
		return nil, nil, kafkaerr.InvalidTxnState
	}
	if cv.epoch != epoch {
		cv.n, cv.head = 0, 0
		cv.epoch = epoch
	}
	cv.lastTS = b.MaxTimestamp
	sh.noteTS(b.MaxTimestamp)
	m := BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
		OffsetDelta: b.LastOffsetDelta}
	m.CRC, m.HasCRC = a.s.opts.windowCRC(b)
	cv.push(&sh.wins[i], m)
	checkSlot(sp, sh, i)
	return &a.none, &a.comNone, nil
}

// firstKeepsEpoch reports that the append's first batch, pending on the
// fast path, carries its producer's committed epoch (its slot is unchanged
// until Commit).
func (a *StoreAppender) firstKeepsEpoch() bool {
	f := &a.fast
	return a.part.shards[f.shard].slots[f.slot].epoch == f.epoch
}

// promote turns the fast pending updates into the pending entries the
// general path would have built, in batch order, before anything but Commit
// happens to the append. The committed entry an update starts from is the
// slot Add's fast path validated against, unchanged since: only this append writes
// the partition's table until Commit. Should a rehash have moved it, it is
// found again.
func (a *StoreAppender) promote() {
	a.fastSet = false
	a.general = true
	a.promoteOne(&a.fast)
	for i := range a.more {
		a.promoteOne(&a.more[i])
	}
	a.more = a.more[:0]
}

// promoteOne is apply's update for one fast batch (REPLICATION's, or the
// one CLIENT batch): into the producer's pending entry if an earlier batch
// of the append made one, else into a new one.
func (a *StoreAppender) promoteOne(f *fastAppend) {
	if len(a.pend) > 0 {
		if pi := a.findPending(f.pid, f.h); pi >= 0 {
			u := &a.pend[pi].upd
			u.maybeUpdateEpoch(f.epoch)
			u.push(f.m)
			u.lastTS = f.m.Timestamp
			return
		}
	}
	sp := a.part
	sh := &sp.shards[f.shard]
	i, ok := int(f.slot), true
	if sh.version != f.version {
		i, ok = sh.find(f.pid, sp.gen, f.h)
	}
	w := pendingEntry{pid: f.pid, h: f.h, slot: -1, curEpoch: -1, curLastSeq: -1,
		upd: slotVal{lastTS: f.m.Timestamp, txnFirst: -1, coordEpoch: -1, epoch: -1}}
	if ok {
		cv := &sh.slots[i]
		w.slot, w.version, w.curEpoch, w.curLastSeq = int32(i), sh.version, cv.epoch, cv.lastSeq()
		w.upd.txnFirst, w.upd.coordEpoch, w.upd.epoch = cv.txnFirst, cv.coordEpoch, cv.epoch
	}
	a.pend = append(a.pend, w)
	u := &a.pend[len(a.pend)-1].upd
	u.maybeUpdateEpoch(f.epoch)
	u.push(f.m)
	a.indexPending(len(a.pend) - 1)
}

// Commit applies the append: producer entries, started transactions, then
// each completed transaction in batch order with its LSO
// (ProducerStateManager#update, #completeTxn).
func (a *StoreAppender) Commit() *Committed {
	if a.fastSet && len(a.more) == 0 {
		// One batch (every CLIENT append): shard.write written out (Go
		// does not inline it), which saves the staged protocol about 8 % at
		// 1k producers.
		sp := a.part
		f := &a.fast
		if sh := &sp.shards[f.shard]; sh.version == f.version {
			a.fastSet = false
			i := int(f.slot)
			s := &sh.slots[i]
			if s.epoch != f.epoch {
				s.n, s.head = 0, 0
				s.epoch = f.epoch
			}
			s.lastTS = f.m.Timestamp
			sh.noteTS(f.m.Timestamp)
			s.push(&sh.wins[i], f.m)
			checkSlot(sp, sh, i)
			return &a.comNone
		}
	}
	return a.commitMore()
}

// commitMore is Commit past its one-batch case: a REPLICATION run of fast
// updates, or the general path.
//
//go:noinline
func (a *StoreAppender) commitMore() *Committed {
	if a.fastSet {
		if a.commitRun() {
			return &a.comNone
		}
		a.promote() // a rehash moved a slot
	}
	return a.commitGeneral()
}

// commitRun writes the fast pending updates of a REPLICATION append of
// several batches to their slots in batch order (merge, one batch at a
// time, which for batches of one producer gives what merge of their
// pending entry gives), unless a rehash moved a slot (false, nothing
// written).
func (a *StoreAppender) commitRun() bool {
	sp := a.part
	if sp.shards[a.fast.shard].version != a.fast.version {
		return false
	}
	for i := range a.more {
		if f := &a.more[i]; sp.shards[f.shard].version != f.version {
			return false
		}
	}
	a.fastSet = false
	a.fast.write(sp)
	for i := range a.more {
		a.more[i].write(sp)
	}
	a.more = a.more[:0]
	return true
}

// write writes f's batch to its slot (shard.write).
func (f *fastAppend) write(sp *storePart) { sp.shards[f.shard].write(sp, int(f.slot), f.epoch, &f.m) }

// write is ProducerStateEntry.update of slot i with one batch of epoch
// (m), as merge does with one batch; coordEpoch and txnFirst (no
// transaction) are unchanged.
func (sh *shard) write(sp *storePart, i int, epoch int16, m *BatchMetadata) {
	s := &sh.slots[i]
	if s.epoch != epoch {
		s.n, s.head = 0, 0
		s.epoch = epoch
	}
	s.lastTS = m.Timestamp
	sh.noteTS(m.Timestamp)
	s.push(&sh.wins[i], *m)
	checkSlot(sp, sh, i)
}
