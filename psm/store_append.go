package psm

import (
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
)

// The Store's general appender: one pending entry per producer of the
// append (ProducerAppendInfo), or in a REPLICATION append a single record
// for a producer's first plain data batch, found by a linear scan up to
// linearPending of them and by a small open-addressing index past that; barriers,
// markers, transactions and verification; and the Commit that merges the
// pending entries into the table (ProducerStateManager#update,
// #completeTxn). The fast path (store_fast.go) hands an append over here,
// through promote, as soon as one of its batches leaves the fast case.

// pendingEntry is one producer's ProducerAppendInfo inside an append.
// curEpoch, curLastSeq and the verification fields serve checkSequence
// alone: an entry of a REPLICATION append made by addNext leaves them as a
// former append left them.
type pendingEntry struct {
	pid        int64
	h          uint64
	slot       int32  // committed slot found at prepare, -1 if none
	version    uint32 // shard version when slot was found
	curEpoch   int16
	curLastSeq int32
	hasVerif   bool
	clearVerif bool
	verifLow   int32
	verifSeq0  bool    // Kafka4, TV2 verification entry, no committed batch: seq 0 only (#checkSequence)
	upd        slotVal // committed scalars, only this append's batches
}

// linearPending is how many pending entries and single records are
// searched linearly before the index is used.
const linearPending = 8

// singleBit marks an index entry that points into single, not pend.
const singleBit = 1 << 31

// StoreAppender is the Appender of a Store: the reusable append of one
// partition, which Begin and BeginAppend reset. Its methods are Appender's;
// a caller that holds a *Store calls them directly, without the interface's
// dynamic dispatch (appendpath's hot path).
type StoreAppender struct {
	s      *Store
	part   *storePart
	seed   uint64 // part.seed, one load closer (seedOf)
	origin Origin
	guard  Guard

	committedEmpty bool // a barrier was met: committed entries read as absent
	verifGone      bool // an Exact barrier was met: verification entries read as absent
	resetAtCommit  bool // an Exact barrier was met: reset the partition at commit
	tableCleared   bool // a Prototype barrier cleared the table: slot indices are stale
	barriers, kept int

	pend      []pendingEntry
	single    []fastAppend // REPLICATION producers' only batch so far (slot -1: moved to pend)
	index     []uint64     // open addressing: stamp<<32 | pend index+1, or single index+1 | singleBit
	shift     uint8        // the index's home slot of hash h is h>>shift
	stamp     uint32       // entries of other stamps are empty
	started   []TxnInfo
	completed []CompletedTxn
	aborted   []storage.AbortedTxn
	done      CompletedTxn // apply's completed transaction, kept out of its results
	fast      fastAppend
	fastSet   bool // fast holds the append's first and only batch; pend is empty
	// general: this append went past the fast path (pending entries,
	// barriers, transactions), so the next Begin must reset that state.
	// An append that stayed on the fast path changes none of it.
	general bool

	none    Outcome   // never written: Add's answer for a plain acceptance
	out     Outcome   // Add's answer when there is something to say
	com     Committed // Commit's answer after the general path
	comNone Committed // never written: Commit's answer after the fast path
}

// Begin returns p's Appender, reset for a new append. O(1), no allocation.
func (s *Store) Begin(p PartitionID, origin Origin) Appender { return s.BeginAppend(p, origin) }

// BeginAppend is Begin with the concrete *StoreAppender.
func (s *Store) BeginAppend(p PartitionID, origin Origin) *StoreAppender {
	a := &s.part(p).app
	a.Begin(origin)
	return a
}

// Appender returns partition p's one Appender, making the partition if it
// does not exist yet. It stays p's for the Store's life, so a caller that
// appends to p keeps it and starts each append with its Begin, which Go
// inlines (appendpath does): BeginAppend's partition lookup (the directory,
// then the partition) is a chain of dependent loads that every access of
// the Appender waits for, and it costs the staged protocol about 10 % at 1k
// producers (BenchmarkAppendProtocol, protocol=staged against held).
func (s *Store) Appender(p PartitionID) *StoreAppender { return &s.part(p).app }

// Begin starts a new append on a, discarding an unfinished one:
// BeginAppend of a's partition. O(1), no allocation.
func (a *StoreAppender) Begin(origin Origin) {
	a.origin, a.guard, a.fastSet = origin, 0, false
	if a.general {
		a.resetGeneral()
	}
}

// BeginChunk is Begin for a chunk: an append of the several batches one
// fetch delivers (a mirror's, a follower's), which Kafka validates as one
// append with one ProducerAppendInfo per producer
// (UnifiedLog#analyzeAndValidateProducerState). Add then answers as after
// Begin, but takes no batch on the one-batch fast path: each accepted
// batch joins its producer's pending entry, made from the committed entry
// at the producer's first batch in the chunk, and Commit merges each entry
// once (ProducerStateManager#update); under REPLICATION a producer's first
// plain data batch waits as a single record for a second batch to make the
// entry, and Commit writes a producer's only batch straight into its slot. A REPLICATION data batch takes the
// entry's short step (addNext), so a REPLICATION chunk reads the table once
// per producer; a CLIENT one still reads it for each batch's duplicate
// check. O(1), no allocation.
func (a *StoreAppender) BeginChunk(origin Origin) {
	a.Begin(origin)
	a.general = true
}

// resetGeneral clears what the general path left in a, for Begin; out of
// line, so that Begin stays small enough to inline.
//
//go:noinline
func (a *StoreAppender) resetGeneral() {
	a.general = false
	a.committedEmpty, a.verifGone, a.resetAtCommit, a.tableCleared = false, false, false, false
	a.barriers, a.kept = 0, 0
	a.clearPending()
	a.started = a.started[:0]
	a.completed = a.completed[:0]
	a.aborted = a.aborted[:0]
}

func (a *StoreAppender) clearPending() {
	a.pend = a.pend[:0]
	a.single = a.single[:0]
	a.stamp++
	if a.stamp == 0 {
		clear(a.index)
		a.stamp = 1
	}
}

func (a *StoreAppender) SetGuard(g Guard) { a.guard = g }

// Pending is ProducerAppendInfo#toEntry. A general-path append keeps it in
// its pending entry; a fast-path one as its one batch against the
// committed slot (a plain data batch: epoch, window and timestamp change,
// nothing else).
func (a *StoreAppender) Pending(pid int64) (ProducerInfo, bool) {
	for i := range a.pend {
		if w := &a.pend[i]; w.pid == pid {
			return w.upd.info(pid), true
		}
	}
	f := &a.fast
	for i := range a.single {
		if a.single[i].pid == pid && a.single[i].slot >= 0 {
			f = &a.single[i]
			break
		}
	}
	if f == &a.fast && (!a.fastSet || a.general || f.pid != pid) {
		return ProducerInfo{}, false
	}
	s := &a.part.shards[f.shard].slots[f.slot]
	v := slotVal{lastTS: s.lastTS, txnFirst: s.txnFirst, coordEpoch: s.coordEpoch, epoch: s.epoch}
	v.maybeUpdateEpoch(f.epoch)
	v.push(f.m)
	v.lastTS = f.m.Timestamp
	return v.info(pid), true
}

// addGeneral is Add past the fast path: pending entries, the duplicate
// walk, barriers, markers and transactions.
//
//go:noinline
func (a *StoreAppender) addGeneral(b *Batch) (*Outcome, error) {
	if a.fastSet {
		a.promote()
	}
	if len(a.single) > 0 {
		a.pendSingles()
	}
	a.general = true
	if b.isBarrier() {
		a.barrier()
		a.out = Outcome{Barrier: true}
		return &a.out, nil
	}
	pid := b.ProducerID
	if uint64(pid) >= a.s.trackBelow {
		return &a.none, nil
	}
	sp := a.part
	h := sp.hash(pid)
	pi := -1
	if len(a.pend) > 0 {
		pi = a.findPending(pid, h)
	}

	// The committed entry: needed to prepare a new pending entry, for the
	// duplicate lookup and for the verification check.
	var cv *slot
	var sh *shard
	slotIdx, version := int32(-1), uint32(0)
	if !a.committedEmpty && (pi < 0 || a.origin != Replication) {
		sh = sp.shardOf(h)
		sh.prefetchWindow(h)
		if i, ok := sh.find(pid, sp.gen, h); ok {
			cv, slotIdx, version = &sh.slots[i], int32(i), sh.version
		}
	}
	if last := b.LastSequence(); a.origin == Client && cv != nil && cv.epoch == b.ProducerEpoch &&
		cv.seqs.has(last) {
		// The hot slot holds each cached batch's last sequence; the ring is
		// walked and the cold window read only when one of them matches.
		for i := range int(cv.n) {
			j := ringIndex(cv.head, i)
			if cv.seqs[j] != last {
				continue
			}
			if m := &sh.wins[slotIdx][j]; m.FirstSeq() == b.BaseSequence {
				if m.crcMismatch(b) {
					return nil, ErrDuplicateCRCMismatch
				}
				a.out = Outcome{Duplicate: Duplicate{Found: true, FirstOffset: m.FirstOffset(),
					LastOffset: m.LastOffset, Timestamp: m.Timestamp}}
				return &a.out, nil
			}
		}
	}
	if a.origin != Replication && b.Transactional {
		if err := a.checkTransactional(cv, pid, b); err != nil {
			return nil, err
		}
	}

	var w *pendingEntry
	if pi >= 0 {
		w = &a.pend[pi]
	} else {
		w = a.newPending(pid, h, cv, slotIdx, version)
	}
	done, started, err := a.apply(w, b)
	if err != nil {
		if pi < 0 {
			a.pend = a.pend[:len(a.pend)-1]
		}
		return nil, err
	}
	if pi < 0 {
		a.indexPending(len(a.pend) - 1)
	}
	if started {
		a.started = append(a.started, TxnInfo{ProducerID: pid, FirstOffset: b.BaseOffset, LastOffset: -1})
	}
	if b.Transactional && !a.keepsVerification(pid, b) {
		w.clearVerif = true
	}
	if done {
		a.completed = append(a.completed, a.done)
		a.out = Outcome{Completed: a.done, TxnCompleted: true}
		return &a.out, nil
	}
	return &a.none, nil
}

// checkTransactional is Model's (modelAppend.checkTransactional) against
// committed slot cv (nil: none).
func (a *StoreAppender) checkTransactional(cv *slot, pid int64, b *Batch) error {
	o := &a.s.opts
	if cv != nil && o.ongoing(cv.txnFirst, cv.epoch, b.ProducerEpoch) {
		return nil
	}
	if cv != nil && b.ProducerEpoch < cv.epoch && o.Release.staleEpochFirst() {
		return kafkaerr.InvalidProducerEpoch // KAFKA-19690
	}
	if b.Control || !o.VerifyTransactions {
		return nil
	}
	var stored Guard
	if e := a.part.verifEntry(pid); e != nil && !a.verifGone {
		stored = e.guard
	}
	if stored == 0 || stored != a.guard {
		return kafkaerr.InvalidTxnState
	}
	return nil
}

// keepsVerification is Model's (modelAppend.keepsVerification): a marker
// at the epoch of a verification entry that supports the epoch bump keeps
// the entry (UnifiedLog#updateProducers, KAFKA-18654).
func (a *StoreAppender) keepsVerification(pid int64, b *Batch) bool {
	if !b.Control || !a.s.opts.Release.keepsTV2Verification() {
		return false
	}
	e := a.part.verifEntry(pid)
	return e != nil && e.bump && b.ProducerEpoch == e.epoch
}

// updateGeneral is Update through the Appender.
//
//go:noinline
func (s *Store) updateGeneral(p PartitionID, origin Origin, b *Batch) (*Outcome, *Committed, error) {
	return update(s.Begin(p, origin), b)
}

// update is Manager.Update through app, just begun.
func update(app Appender, b *Batch) (*Outcome, *Committed, error) {
	out, err := app.Add(b)
	if err != nil || out.Duplicate.Found {
		app.Abort()
		return out, nil, err
	}
	return out, app.Commit(), nil
}

func (a *StoreAppender) barrier() {
	a.barriers++
	a.kept = len(a.part.ongoing) + len(a.started) - len(a.completed)
	// Both modes clear the committed table where the barrier stands: a
	// later batch of the append that starts an entry starts from nothing.
	a.committedEmpty = true
	if a.s.opts.BarrierApply == Exact {
		// Exact clears at Commit, verification entries too, and drops the
		// updates already pending.
		a.resetAtCommit, a.verifGone = true, true
		a.clearPending()
		return
	}
	// Prototype clears the producers at once, whatever becomes of the append
	// (expireMirroredProducers in the validation loop), and keeps the
	// verification entries and the updates already pending (one map of
	// updates per append, applied after the loop), so entries built
	// before the barrier come back at Commit.
	a.part.clearProducers()
	a.tableCleared = true
}

// apply validates b against w and, when every check passes, updates w; a
// completed transaction is left in a.done. All checks run before the first
// write, so a rejected batch leaves w unchanged.
func (a *StoreAppender) apply(w *pendingEntry, b *Batch) (done, started bool, err error) {
	u := &w.upd
	if b.Control {
		switch {
		case b.RecordsCount == 0:
			return false, false, nil // a marker cleaned away
		case b.RecordsCount < 0:
			return false, false, kafkaerr.InvalidRecord
		case b.ControlType != codec.ControlCommit && b.ControlType != codec.ControlAbort:
			return false, false, kafkaerr.UnknownServerError
		}
		if err := a.s.opts.markerEpoch(a.origin, b.TxnVersion, b.ProducerEpoch, u.epoch, u.txnFirst); err != nil {
			return false, false, err
		}
		if u.coordEpoch > b.CoordinatorEpoch && a.origin != Replication {
			return false, false, kafkaerr.TransactionCoordinatorFenced
		}
		if u.txnFirst >= 0 {
			done = true
			a.done = CompletedTxn{ProducerID: w.pid, FirstOffset: u.txnFirst, LastOffset: b.BaseOffset,
				Aborted: b.ControlType == codec.ControlAbort}
		}
		u.maybeUpdateEpoch(b.ProducerEpoch)
		u.coordEpoch = b.CoordinatorEpoch
		u.lastTS = b.ControlTimestamp
		u.txnFirst = -1
		return done, false, nil
	}
	if b.ProducerEpoch < u.epoch && a.origin != Replication {
		return false, false, kafkaerr.InvalidProducerEpoch
	}
	if a.origin == Client {
		if err := checkSequence(w, b.ProducerEpoch, b.BaseSequence); err != nil {
			return false, false, err
		}
	}
	if u.txnFirst >= 0 && !b.Transactional {
		return false, false, kafkaerr.InvalidTxnState
	}
	u.maybeUpdateEpoch(b.ProducerEpoch)
	m := BatchMetadata{LastOffset: b.LastOffset(), Timestamp: b.MaxTimestamp, LastSeq: b.LastSequence(),
		OffsetDelta: b.LastOffsetDelta}
	m.CRC, m.HasCRC = a.s.opts.windowCRC(b)
	u.push(m)
	u.lastTS = b.MaxTimestamp
	if u.txnFirst < 0 && b.Transactional {
		u.txnFirst = b.BaseOffset
		return false, true, nil
	}
	return false, false, nil
}

// checkSequence is ProducerAppendInfo.checkSequence (CLIENT only).
func checkSequence(w *pendingEntry, epoch int16, firstSeq int32) error {
	if w.verifSeq0 && firstSeq != 0 {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	if w.hasVerif && firstSeq > w.verifLow {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	u := &w.upd
	if epoch != u.epoch {
		if firstSeq != 0 && u.epoch != -1 {
			return kafkaerr.OutOfOrderSequenceNumber
		}
		return nil
	}
	last := int32(-1)
	if u.n > 0 {
		last = u.lastSeq()
	} else if epoch == w.curEpoch {
		last = w.curLastSeq
	}
	if w.curEpoch != -1 && int64(firstSeq) != int64(last)+1 && (firstSeq != 0 || last != 1<<31-1) {
		return kafkaerr.OutOfOrderSequenceNumber
	}
	return nil
}

// commitGeneral is Commit after the general path, kept out of Commit so
// that the fast path runs in a small frame.
//
//go:noinline
func (a *StoreAppender) commitGeneral() *Committed {
	sp := a.part
	if a.resetAtCommit {
		sp.resetProducers()
	}
	// The single records first, each written straight into its committed
	// slot as the one-batch fast path's Commit writes it: the merge of a
	// pending entry of one batch gives the same entry. One whose shard was
	// rehashed becomes a pending entry, merged below.
	for k := range a.single {
		f := &a.single[k]
		if f.slot < 0 {
			continue
		}
		sh := &sp.shards[f.shard]
		if sh.version != f.version {
			a.pendSingle(k)
			continue
		}
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
	}
	for i := range a.pend {
		w := &a.pend[i]
		sh := sp.shardOf(w.h)
		var si int
		var ok bool
		if w.slot >= 0 && w.version == sh.version && !a.resetAtCommit && !a.tableCleared {
			si, ok = int(w.slot), true
		} else {
			si, ok = sh.find(w.pid, sp.gen, w.h)
		}
		if ok {
			sh.merge(si, &w.upd)
		} else {
			si = sh.insert(w.pid, sp.gen, w.h, sp.seed)
			sh.put(si, &w.upd)
			sp.count++
		}
		if w.clearVerif && len(sp.verif) > 0 {
			sp.removeVerif(w.pid)
		}
		checkSlot(sp, sh, si)
	}
	for _, t := range a.started {
		sp.ongoing = putTxn(sp.ongoing, t)
	}
	for _, ct := range a.completed {
		lso := ct.LastOffset + 1
		for _, t := range sp.ongoing {
			if t.ProducerID != ct.ProducerID {
				lso = t.FirstOffset
				break
			}
		}
		if ct.Aborted {
			a.aborted = append(a.aborted, storage.AbortedTxn{ProducerID: ct.ProducerID, FirstOffset: ct.FirstOffset, LastOffset: ct.LastOffset, LastStableOffset: lso})
		}
		if j, found := txnIndex(sp.ongoing, ct.FirstOffset); found {
			t := sp.ongoing[j]
			sp.ongoing = slices.Delete(sp.ongoing, j, j+1)
			t.LastOffset = ct.LastOffset
			sp.unrepl = putTxn(sp.unrepl, t)
		}
	}
	kept := 0
	if a.barriers > 0 {
		kept = a.kept
	}
	a.clearPending()
	c := &a.com
	c.Completed, c.Aborted, c.Barriers, c.KeptOpenTxns = a.completed, a.aborted, a.barriers, kept
	return c
}

func (a *StoreAppender) Abort() {
	a.fastSet = false
	a.clearPending()
}
