package psm

import (
	"cmp"
	"slices"
)

// The Store's side of the snapshot file (snapshot.go holds the format):
// AppendSnapshot writes the entries sorted by PID from one scan of the
// table, LoadSnapshot inserts them with the slots a few entries ahead
// prefetched.

type snapRef struct {
	pid int64
	pos int64 // offset of the encoded entry in enc
}

// AppendSnapshot sorts the entries by PID so that equal states give equal
// files. The table is scanned once in slot order, each entry encoded into a
// scratch buffer as it is met; then 16-byte (pid, position) pairs are sorted
// and the encoded entries copied out in PID order, so the sort never touches
// the table. O(table slots + n × the PID bytes that differ) (sortRefs);
// allocation-free once its scratch has grown.
func (s *Store) AppendSnapshot(dst []byte, p PartitionID) []byte {
	sp := s.part(p)
	refs, enc := sp.refs[:0], sp.enc[:0]
	for si := range sp.shards {
		sh := &sp.shards[si]
		for i := range sh.slots {
			sl := &sh.slots[i]
			if sl.gen != sp.gen {
				continue
			}
			refs = append(refs, snapRef{pid: sl.pid, pos: int64(len(enc))})
			enc = appendSlotEntry(enc, sl, &sh.wins[i])
		}
	}
	refs, sp.refTmp = sortRefs(refs, sp.refTmp)
	sp.refs, sp.enc = refs, enc
	start := len(dst)
	dst = slices.Grow(dst, snapOffEntries+len(enc))
	dst = appendSnapshotHeader(dst, len(refs))
	for _, r := range refs {
		dst = append(dst, enc[r.pos:r.pos+snapshotEntrySize]...)
	}
	return finishSnapshot(dst, start)
}

// sortRefs sorts refs by PID (signed order), PIDs being distinct. Past a
// few hundred entries it is an LSD radix sort on the PID's bytes, skipping
// the bytes all PIDs share (usually the high ones), with tmp as the other
// buffer: O(n) per differing byte, where a comparison sort of slot-ordered
// (that is, hash-ordered) entries costs O(n log n) with a call per compare.
// It returns the sorted slice and the scratch buffer, which may be swapped;
// tmp grows to len(refs) once.
func sortRefs(refs, tmp []snapRef) (sorted, scratch []snapRef) {
	n := len(refs)
	if n < 256 {
		slices.SortFunc(refs, func(a, b snapRef) int { return cmp.Compare(a.pid, b.pid) })
		return refs, tmp
	}
	key := func(pid int64) uint64 { return uint64(pid) ^ 1<<63 } // signed order as unsigned
	tmp = slices.Grow(tmp[:0], n)[:n]
	var counts [8][256]int
	for _, r := range refs {
		k := key(r.pid)
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	src, dst := refs, tmp
	for d := range 8 {
		c := &counts[d]
		shift := 8 * d
		if c[byte(key(src[0].pid)>>shift)] == n {
			continue // every PID has this byte
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for _, r := range src {
			b := byte(key(r.pid) >> shift)
			dst[c[b]] = r
			c[b]++
		}
		src, dst = dst, src
	}
	return src, dst
}

// appendSlotEntry encodes one entry in the 46-byte snapshot layout.
func appendSlotEntry(dst []byte, v *slot, w *window) []byte {
	var newest BatchMetadata
	lastOffset := int64(-1)
	if v.n > 0 {
		newest = w[ringIndex(v.head, int(v.n)-1)]
		lastOffset = newest.LastOffset
	}
	dst = be.AppendUint64(dst, uint64(v.pid))
	dst = be.AppendUint16(dst, uint16(v.epoch))
	dst = be.AppendUint32(dst, uint32(v.lastSeq()))
	dst = be.AppendUint64(dst, uint64(lastOffset))
	dst = be.AppendUint32(dst, uint32(newest.OffsetDelta))
	dst = be.AppendUint64(dst, uint64(v.lastTS))
	dst = be.AppendUint32(dst, uint32(v.coordEpoch))
	return be.AppendUint64(dst, uint64(v.txnFirst))
}

func (s *Store) LoadSnapshot(p PartitionID, src []byte, nowMs int64) error {
	n, err := checkSnapshot(src)
	if err != nil {
		return err
	}
	s.Clear(p)
	sp := s.part(p)
	// The entries are independent: prefetching the slot an entry a few
	// places ahead will probe lets its cache miss run while this one is
	// inserted.
	const ahead = 16
	for i := range n {
		if j := i + ahead; j < n {
			sp.prefetchSlot(int64(be.Uint64(src[snapOffEntries+j*snapshotEntrySize:])))
		}
		in := snapshotEntry(src, i)
		v := valOf(&in)
		if s.isExpired(v.txnFirst, v.lastTS, nowMs) {
			continue
		}
		sp.upsert(in.ProducerID, &v)
		if v.txnFirst >= 0 {
			sp.ongoing = putTxn(sp.ongoing, TxnInfo{ProducerID: in.ProducerID, FirstOffset: v.txnFirst, LastOffset: -1})
		}
	}
	checkPartFull(sp)
	return nil
}
