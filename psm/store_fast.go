package psm

import "github.com/mirrorpath/mirrorpath/kafkaerr"

// The Store's fast path: an append whose first batch is a plain data batch
// of a known producer, outside a transaction, with no verification entry in
// the partition, is checked straight against the committed slot and, when
// it stays the append's only batch, written back by slot index at Commit,
// with no pending entry (see the package doc). The check is one sequence
// of steps (fastEligible, the table lookup, maybeDuplicate, checkClient,
// the open-transaction test) written twice, by hand in Add and in
// Store.Update, because Go inlines neither a shared function nor the
// write, and the call costs those two paths measurably (see their
// comments). TestFastPathCopiesAgree drives the two copies with one case
// list, so that a drift between them fails a unit test;
// FuzzStoreMatchesModel holds both to the Model.
//
// An append of several batches keeps one pending entry per producer
// (ProducerAppendInfo), as Kafka's UnifiedLog#analyzeAndValidateProducerState
// does for the whole append: the committed entry is read at the producer's
// first batch of the append, and Commit merges each entry once
// (ProducerStateManager#update). A REPLICATION data batch takes that
// entry's short step (addNext); BeginChunk starts an append there from its
// first batch. A producer's first REPLICATION batch of the append, a plain
// data batch of a known producer before any barrier, is kept as a single
// record (a fastAppend) that Commit writes straight into its slot, as the
// one-batch fast path's Commit does; the producer's second batch makes its
// pending entry from it (pendSingle).

// Add validates b (Appender.Add). Its fast path takes the first batch of an
// append when it is a CLIENT or REPLICATION data batch outside a
// transaction, after no barrier. It hands the batch to addGeneral, with
// nothing changed, when the rest of the fast case does not hold (untracked
// or new producer, a verification entry, a possible CLIENT duplicate).
// Otherwise it runs the general path's checks (apply, and for CLIENT
// checkSequence, with the pending window empty and no verification entry)
// in the same order against the committed slot. REPLICATION has no epoch
// fence and no sequence check, so only the transaction-state check is
// left. The batches after the first go to addNext.
func (a *StoreAppender) Add(b *Batch) (*Outcome, error) {
	// Until an append leaves the fast path (general), it has no pending
	// entry and met no barrier. Only its first batch may take the fast
	// path (below).
	if a.general || a.fastSet {
		return a.addNext(b)
	}
	// The fast check, written out for the first batch (every CLIENT
	// append), as Update does: Go does not inline a function of these
	// steps, and its call and the second shardOf after it cost the staged
	// protocol a few per cent at 1k producers. The steps are Update's, in
	// its order, through the same helpers; FuzzStoreMatchesModel holds Add
	// to the Model.
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
	// just stored costs a store-forwarding stall.
	f := &a.fast
	f.pid, f.h, f.shard, f.slot, f.version = pid, h, uint8(h>>shardShift), int32(i), sh.version
	f.epoch = epoch
	f.m = BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
		OffsetDelta: b.LastOffsetDelta}
	f.m.CRC, f.m.HasCRC = a.s.opts.windowCRC(b)
	a.fastSet = true
	return &a.none, nil
}

// AddChunk is Add for an append begun with BeginChunk (appendpath's
// chunks): the same answers, without Add's test for the one-batch fast
// path, which such an append never takes.
func (a *StoreAppender) AddChunk(b *Batch) (*Outcome, error) { return a.addNext(b) }

// addNext is Add of a batch after the first, and every batch of a chunk
// (BeginChunk): the general path, or for a REPLICATION data batch the
// general path's steps that apply to it and no others. Its producer's
// pending entry is found, or made from the committed entry, which is read
// once per producer and append; the batch is then checked only for data
// outside the producer's open transaction (apply: no epoch fence, no
// sequence or verification check, no duplicate under REPLICATION) and
// cached in the entry, which restarts its window at an epoch change
// (ProducerAppendInfo#appendDataBatch, ProducerStateEntry#addBatch). A
// transactional batch opens the producer's transaction if none is open and
// marks the producer's verification entry for removal at Commit
// (UnifiedLog#updateProducers). A producer's first batch, a plain data
// batch of a known producer before any barrier, is kept as a single record
// instead, which its second batch turns into the pending entry. O(1)
// expected; no allocation once the pending entries, the single records and
// their index have grown to the append's producers.
//
//go:noinline
func (a *StoreAppender) addNext(b *Batch) (*Outcome, error) {
	if a.origin != Replication || b.Control {
		return a.addGeneral(b)
	}
	if a.fastSet {
		a.promote()
	}
	a.general = true
	pid := b.ProducerID
	if uint64(pid) >= a.s.trackBelow {
		return &a.none, nil
	}
	h := hashPID(pid, a.seed)
	// findPending, written out with the index's probe kept (single records
	// too): where it ends on an empty slot, a new record goes there
	// (indexPut's slot), without a second probe. A single record found is
	// the producer's second batch: its pending entry is made from it.
	var w *pendingEntry
	n, free := len(a.pend)+len(a.single), -1
	if n > linearPending {
		mask := uint64(len(a.index) - 1)
		for i := h >> a.shift; ; i = (i + 1) & mask {
			e := a.index[i]
			if uint32(e>>32) != a.stamp {
				free = int(i)
				break
			}
			if v := uint32(e); v&singleBit != 0 {
				if a.single[v&^singleBit-1].pid == pid {
					w = a.pendSingle(int(v&^singleBit - 1))
					a.index[i] = uint64(a.stamp)<<32 | uint64(len(a.pend))
					break
				}
			} else if a.pend[v-1].pid == pid {
				w = &a.pend[v-1]
				break
			}
		}
	} else {
		for j := range a.pend {
			if a.pend[j].pid == pid {
				w = &a.pend[j]
				break
			}
		}
		if w == nil && len(a.single) > 0 {
			w = a.linearSingle(pid)
		}
	}
	if w != nil {
		if w.upd.txnFirst >= 0 && !b.Transactional {
			return nil, kafkaerr.InvalidTxnState
		}
	} else {
		var cv *slot
		var sh *shard
		slotIdx, version := int32(-1), uint32(0)
		if !a.committedEmpty {
			sp := a.part
			sh = sp.shardOf(h)
			sh.prefetchWindow(h)
			if i, ok := sh.find(pid, sp.gen, h); ok {
				cv, slotIdx, version = &sh.slots[i], int32(i), sh.version
				if cv.txnFirst >= 0 && !b.Transactional {
					return nil, kafkaerr.InvalidTxnState
				}
			}
		}
		if cv != nil && !b.Transactional && a.barriers == 0 {
			// The producer's first batch of the append, a plain data batch
			// of a producer with a committed entry: kept as a single record
			// for Commit to write straight into its slot, as the one-batch
			// fast path does, until a second batch of the producer makes
			// its pending entry (pendSingle).
			if k := len(a.single); k < cap(a.single) {
				a.single = a.single[:k+1]
			} else {
				a.single = append(a.single, fastAppend{})
			}
			k := len(a.single) - 1
			f := &a.single[k]
			f.pid, f.h, f.shard, f.slot, f.version = pid, h, uint8(h>>shardShift), slotIdx, version
			f.epoch = b.ProducerEpoch
			f.m = BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
				OffsetDelta: b.LastOffsetDelta}
			f.m.CRC, f.m.HasCRC = a.s.opts.windowCRC(b)
			if free >= 0 && len(a.index) >= 2*(n+1) {
				a.index[free] = uint64(a.stamp)<<32 | uint64(k+1) | singleBit
			} else if n+1 > linearPending {
				a.indexAll()
			}
			return &a.none, nil
		}
		// newPending, written out for REPLICATION: the fields of the CLIENT
		// checks (checkSequence's curEpoch, curLastSeq and verification
		// fields) are never read in a REPLICATION append, and the call and
		// those stores cost a chunk of one batch per producer measurably.
		w = a.pendFrom(pid, h, cv, slotIdx, version)
		if free >= 0 && len(a.index) >= 2*(n+1) {
			a.index[free] = uint64(a.stamp)<<32 | uint64(len(a.pend))
		} else if n+1 > linearPending {
			a.indexAll()
		}
	}
	u := &w.upd
	u.maybeUpdateEpoch(b.ProducerEpoch)
	m := u.next() // filled in place: see slotVal.next
	m.LastOffset, m.Timestamp, m.LastSeq, m.OffsetDelta = b.LastOffset(), b.MaxTimestamp, b.LastSequence(), b.LastOffsetDelta
	m.CRC, m.HasCRC = a.s.opts.windowCRC(b)
	u.lastTS = b.MaxTimestamp
	if b.Transactional {
		if u.txnFirst < 0 {
			u.txnFirst = b.BaseOffset
			a.started = append(a.started, TxnInfo{ProducerID: pid, FirstOffset: b.BaseOffset, LastOffset: -1})
		}
		w.clearVerif = true // keepsVerification holds only for markers
	}
	return &a.none, nil
}

// linearSingle is the linear search's step for a producer with no pending
// entry: its single record, if it has one, made its pending entry
// (pendSingle) and indexed once the linear range is passed; else nil. Out
// of addNext, whose every batch would otherwise carry its registers.
//
//go:noinline
func (a *StoreAppender) linearSingle(pid int64) *pendingEntry {
	for j := range a.single {
		if a.single[j].pid == pid && a.single[j].slot >= 0 {
			w := a.pendSingle(j)
			if len(a.pend)+len(a.single) > linearPending {
				a.indexAll()
			}
			return w
		}
	}
	return nil
}

// fastAppend is the pending update of the one batch of an append on the
// fast path: a CLIENT or REPLICATION data batch outside a transaction from
// a producer with a committed entry and no verification entry, after no
// barrier (the usual produce request). The batch was validated straight
// against the committed slot, and Commit writes it there with the
// remembered slot index unless a rehash moved it.
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
	// The fast check and the slot's write, written out: Go inlines neither
	// as a function, and a call of the check here cost BenchmarkUpdateOne
	// 59 % at 100k producers and 78 % at 1M (cpu-sec/op, 10 interleaved
	// rounds, p < 0.01). This path is short enough for the processor to
	// overlap one update's cache misses with the next's; the call's extra
	// instructions stop that. The steps are Add's, in its order, through
	// the same helpers (fastEligible, maybeDuplicate, checkClient);
	// FuzzStoreMatchesModel holds Update to the Model.
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

// committedOf is the committed slot f was validated against (nil, -1 for a
// producer the table does not hold), found again should a rehash have moved
// it, with its index and the shard's version.
func (a *StoreAppender) committedOf(f *fastAppend) (*slot, int32, uint32) {
	sp := a.part
	sh := &sp.shards[f.shard]
	i, ok := int(f.slot), true
	if sh.version != f.version {
		i, ok = sh.find(f.pid, sp.gen, f.h)
	}
	if !ok {
		return nil, -1, 0
	}
	return &sh.slots[i], int32(i), sh.version
}

// promote turns the fast pending update into the pending entry the general
// path would have built, before anything but Commit happens to the append.
// The committed entry it starts from is the slot Add's fast path validated
// against, unchanged since: only this append writes the partition's table
// until Commit. Should a rehash have moved it, it is found again.
func (a *StoreAppender) promote() {
	a.fastSet = false
	a.general = true
	f := &a.fast
	cv, slotIdx, version := a.committedOf(f)
	u := &a.newPending(f.pid, f.h, cv, slotIdx, version).upd
	u.maybeUpdateEpoch(f.epoch)
	u.push(f.m)
	u.lastTS = f.m.Timestamp
	a.indexPending(len(a.pend) - 1)
}

// Commit applies the append: producer entries, started transactions, then
// each completed transaction in batch order with its LSO
// (ProducerStateManager#update, #completeTxn).
func (a *StoreAppender) Commit() *Committed {
	if a.fastSet {
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

// commitMore is Commit past its one-batch case: the general path (after a
// rehash moved the one batch's slot, its pending entry).
//
//go:noinline
func (a *StoreAppender) commitMore() *Committed {
	if a.fastSet {
		a.promote()
	}
	return a.commitGeneral()
}
