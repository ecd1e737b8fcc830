package psm

import "math/bits"

// The pending entries of a general-path append and the single records of a
// REPLICATION chunk, found by a linear scan up to linearPending of them and
// by a small open-addressing index past that (store_append.go's appender).

// findPending is the index in pend of pid's pending entry (hash h), or -1.
func (a *StoreAppender) findPending(pid int64, h uint64) int {
	if len(a.pend) <= linearPending {
		for i := range a.pend {
			if a.pend[i].pid == pid {
				return i
			}
		}
		return -1
	}
	mask := uint64(len(a.index) - 1)
	for i := h >> a.shift; ; i = (i + 1) & mask {
		e := a.index[i]
		if uint32(e>>32) != a.stamp {
			return -1
		}
		if j := int(uint32(e)) - 1; a.pend[j].pid == pid {
			return j
		}
	}
}

// indexPending records pend[j] in the index once the linear range is passed.
func (a *StoreAppender) indexPending(j int) {
	n := len(a.pend) + len(a.single)
	if n <= linearPending {
		return
	}
	if len(a.index) < 2*n || n == linearPending+1 {
		a.indexAll()
		return
	}
	a.indexPut(a.pend[j].h, uint32(j+1))
}

// indexAll rebuilds the index from the pending entries and the single
// records still in use, growing it to at most half full.
func (a *StoreAppender) indexAll() {
	n := len(a.pend) + len(a.single)
	if len(a.index) < 2*n {
		size := 64
		for size < 2*n {
			size *= 2
		}
		a.index = make([]uint64, size)
		a.shift = uint8(bits.LeadingZeros64(uint64(size - 1)))
		a.stamp = 1
	} else {
		a.stamp++
		if a.stamp == 0 {
			clear(a.index)
			a.stamp = 1
		}
	}
	for k := range a.pend {
		a.indexPut(a.pend[k].h, uint32(k+1))
	}
	for k := range a.single {
		if a.single[k].slot >= 0 {
			a.indexPut(a.single[k].h, uint32(k+1)|singleBit)
		}
	}
}

// indexPut records v (pend index+1, or single index+1 | singleBit) under
// hash h: the first empty slot from h's home, the index's top bits like
// the table's (hashPID).
func (a *StoreAppender) indexPut(h uint64, v uint32) {
	mask := uint64(len(a.index) - 1)
	i := h >> a.shift
	for uint32(a.index[i]>>32) == a.stamp {
		i = (i + 1) & mask
	}
	a.index[i] = uint64(a.stamp)<<32 | uint64(v)
}

// pendFrom adds pid's pending entry for a REPLICATION append: newPending
// without the fields of the CLIENT checks (checkSequence's curEpoch,
// curLastSeq and the verification fields), which a REPLICATION append
// never reads. The caller indexes it.
func (a *StoreAppender) pendFrom(pid int64, h uint64, cv *slot, slotIdx int32, version uint32) *pendingEntry {
	n := len(a.pend)
	if n < cap(a.pend) {
		a.pend = a.pend[:n+1]
	} else {
		a.pend = append(a.pend, pendingEntry{})
	}
	w := &a.pend[n]
	w.pid, w.h, w.slot, w.version, w.clearVerif = pid, h, slotIdx, version, false
	u := &w.upd
	u.n, u.head = 0, 0
	if cv != nil {
		u.lastTS, u.txnFirst, u.coordEpoch, u.epoch = cv.lastTS, cv.txnFirst, cv.coordEpoch, cv.epoch
	} else {
		u.lastTS, u.txnFirst, u.coordEpoch, u.epoch = -1, -1, -1, -1
	}
	return w
}

// pendSingle turns single record k into the pending entry the producer's
// first batch would have made (ProducerStateManager#prepareUpdate from its
// committed entry, then that batch), marks the record moved and returns
// the entry; the caller indexes it. The committed slot is the one the
// record was checked against, unchanged since: no barrier came after it,
// and only Commit writes the table.
func (a *StoreAppender) pendSingle(k int) *pendingEntry {
	f := &a.single[k]
	cv, slotIdx, version := a.committedOf(f)
	w := a.pendFrom(f.pid, f.h, cv, slotIdx, version)
	u := &w.upd
	u.maybeUpdateEpoch(f.epoch)
	u.push(f.m)
	u.lastTS = f.m.Timestamp
	f.slot = -1
	return w
}

// pendSingles turns every single record into its pending entry, before
// the general path takes a batch: its barriers, markers and duplicate
// checks see pending entries only.
func (a *StoreAppender) pendSingles() {
	for k := range a.single {
		if a.single[k].slot >= 0 {
			a.pendSingle(k)
		}
	}
	a.single = a.single[:0]
	if len(a.pend) > linearPending {
		a.indexAll()
	}
}

// newPending adds pid's pending entry (ProducerStateManager#prepareUpdate)
// and returns it: a copy of the committed entry cv at slot slotIdx of
// version (cv nil: none) with an empty window, and the producer's
// verification entry unless a barrier of the append dropped them. The
// caller indexes it (indexPending) once its batch is accepted.
func (a *StoreAppender) newPending(pid int64, h uint64, cv *slot, slotIdx int32, version uint32) *pendingEntry {
	// Reuse the slot without zeroing it: the window of upd starts empty
	// (n = 0), so only the scalars are written, never the 160-byte ring.
	if n := len(a.pend); n < cap(a.pend) {
		a.pend = a.pend[:n+1]
	} else {
		a.pend = append(a.pend, pendingEntry{})
	}
	w := &a.pend[len(a.pend)-1]
	w.pid, w.h, w.slot, w.version = pid, h, slotIdx, version
	w.hasVerif, w.clearVerif, w.verifLow, w.verifSeq0 = false, false, 0, false
	u := &w.upd
	u.n, u.head = 0, 0
	if cv != nil {
		w.curEpoch, w.curLastSeq = cv.epoch, cv.lastSeq()
		u.lastTS, u.txnFirst, u.coordEpoch, u.epoch = cv.lastTS, cv.txnFirst, cv.coordEpoch, cv.epoch
	} else {
		w.curEpoch, w.curLastSeq = -1, -1
		u.lastTS, u.txnFirst, u.coordEpoch, u.epoch = -1, -1, -1, -1
	}
	if !a.verifGone && len(a.part.verif) > 0 {
		if e := a.part.verifEntry(pid); e != nil {
			w.hasVerif, w.verifLow = true, e.lowestSeq
			w.verifSeq0 = e.bump && a.s.opts.Release.tv2StartsAtZero() && (cv == nil || cv.n == 0)
		}
	}
	return w
}
