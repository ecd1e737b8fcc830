package psm

import (
	"iter"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Store is the fast producer-state manager. Each partition owns its producer
// table (see table.go), its transaction lists and one reusable Appender, so
// an append takes no lock at all: the partition's single appender owns it.
// The only shared structure is the partition directory, a copy-on-write slice
// read with one atomic load.
//
// Concurrency: safe for concurrent use across partitions; calls naming the
// same partition must be serialized by the caller (one appender per
// partition at a time), which is how Kafka holds the log lock.
//
// Cost: Begin/Add/Commit O(1) expected per batch and allocation-free once the
// tables have grown; Reset O(1) whatever the number of producers; Producers,
// ExpireProducers and AppendSnapshot O(table slots of the partition), a
// sequential walk (the table holds under 4 slots per live entry after a
// rehash, more after a barrier until the stale slots are reused or purged).
type Store struct {
	opts Options
	// trackBelow is opts.tracks as one unsigned compare: the PIDs tracked
	// are those with uint64(pid) < trackBelow (pid > -1: below 1<<63;
	// pid != -1: below MaxUint64).
	trackBelow uint64
	mu         sync.Mutex                   // serializes directory growth
	parts      atomic.Pointer[[]*storePart] // indexed by PartitionID
	guards     atomic.Uint64
}

// NewStore returns an empty fast manager.
func NewStore(opts Options) *Store {
	s := &Store{opts: opts.withDefaults(), trackBelow: 1 << 63}
	if s.opts.HasProducerID == NonNegativeOne {
		s.trackBelow = math.MaxUint64
	}
	return s
}

type storeVerif struct {
	pid       int64
	timestamp int64
	guard     Guard
	lowestSeq int32
	epoch     int16
	bump      bool // VerificationStateEntry#supportsEpochBump, set at creation
}

type storePart struct {
	seed    uint64
	gen     uint32 // current generation, never genEmpty or genTomb
	count   int    // live producers
	shards  [numShards]shard
	ongoing []TxnInfo // open transactions by first offset
	unrepl  []TxnInfo // completed, marker not yet below the HW, by first offset
	verif   []storeVerif
	app     StoreAppender
	refs    []snapRef // AppendSnapshot scratch
	refTmp  []snapRef // AppendSnapshot scratch: the radix sort's other buffer
	enc     []byte    // AppendSnapshot scratch: entries in table order
}

func (s *Store) part(p PartitionID) *storePart {
	if ps := s.parts.Load(); ps != nil && int(p) < len(*ps) {
		if sp := (*ps)[p]; sp != nil {
			return sp
		}
	}
	return s.newPart(p)
}

func (s *Store) newPart(p PartitionID) *storePart {
	if p >= MaxPartitions {
		panic("psm: PartitionID beyond MaxPartitions")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur []*storePart
	if ps := s.parts.Load(); ps != nil {
		cur = *ps
	}
	if int(p) < len(cur) && cur[p] != nil {
		return cur[p]
	}
	size := len(cur)
	if int(p) >= size {
		size = max(int(p)+1, 2*size)
	}
	next := make([]*storePart, size) // copy on write: readers keep the old slice

	copy(next, cur)
	sp := &storePart{seed: seedOf(p), gen: 1}
	sp.app.s, sp.app.part, sp.app.seed = s, sp, sp.seed
	next[p] = sp
	s.parts.Store(&next)
	return sp
}

func (sp *storePart) hash(pid int64) uint64 { return hashPID(pid, sp.seed) }

// seedOf is partition p's hash seed. It is a function of p alone, so that
// Update computes it beside the partition lookup rather than loading it
// from the partition after that lookup (and Add reads its copy in the
// Appender): an update's slot address is a chain of dependent steps (the
// partition, the seed, the hash, the shard's table, the slot), and one load
// less on it made the one-call update 9 % faster at 1k producers. The
// multiplier is an odd 64-bit constant (SplitMix64's); partitions own
// separate tables, so the seed only keeps their layouts apart.
func seedOf(p PartitionID) uint64 { return (uint64(p) + 1) * 0xbf58476d1ce4e5b9 }

func (sp *storePart) shardOf(h uint64) *shard { return &sp.shards[h>>shardShift] }

// lookup returns pid's live slot, or nil.
func (sp *storePart) lookup(pid int64) (*shard, int) {
	h := sp.hash(pid)
	sh := sp.shardOf(h)
	if i, ok := sh.find(pid, sp.gen, h); ok {
		return sh, i
	}
	return nil, -1
}

// prefetchSlot prefetches pid's first probe slot and its cold window.
func (sp *storePart) prefetchSlot(pid int64) {
	h := sp.hash(pid)
	if sh := sp.shardOf(h); len(sh.slots) > 0 {
		i := sh.home(h)
		prefetch(uintptr(unsafe.Pointer(&sh.slots[i])))
		prefetch(uintptr(unsafe.Pointer(&sh.wins[i])))
	}
}

// resetProducers drops every producer and verification entry in O(1).
func (sp *storePart) resetProducers() {
	sp.clearProducers()
	sp.verif = sp.verif[:0]
}

// clearProducers drops every producer entry in O(1).
func (sp *storePart) clearProducers() {
	sp.gen++
	if sp.gen == genTomb { // wrapped: old generations would come back to life
		for i := range sp.shards {
			sp.shards[i].clear()
		}
		sp.gen = 1
	}
	sp.count = 0
}

// upsert writes v as pid's entry, inserting it when absent.
func (sp *storePart) upsert(pid int64, v *slotVal) {
	h := sp.hash(pid)
	sh := sp.shardOf(h)
	i, ok := sh.find(pid, sp.gen, h)
	if !ok {
		i = sh.insert(pid, sp.gen, h, sp.seed)
		sp.count++
	}
	sh.put(i, v)
}

func (sp *storePart) verifEntry(pid int64) *storeVerif {
	for i := range sp.verif {
		if sp.verif[i].pid == pid {
			return &sp.verif[i]
		}
	}
	return nil
}

func (sp *storePart) removeVerif(pid int64) {
	for i := range sp.verif {
		if sp.verif[i].pid == pid {
			sp.verif = slices.Delete(sp.verif, i, i+1)
			return
		}
	}
}

// txnIndex returns where first is or would be in txns.
func txnIndex(txns []TxnInfo, first int64) (int, bool) {
	return slices.BinarySearchFunc(txns, first, func(t TxnInfo, f int64) int {
		switch {
		case t.FirstOffset < f:
			return -1
		case t.FirstOffset > f:
			return 1
		}
		return 0
	})
}

// putTxn inserts t by first offset, replacing an equal key (TreeMap.put).
func putTxn(txns []TxnInfo, t TxnInfo) []TxnInfo {
	i, found := txnIndex(txns, t.FirstOffset)
	if found {
		txns[i] = t
		return txns
	}
	return slices.Insert(txns, i, t)
}

func (s *Store) isExpired(txnFirst, lastTS, now int64) bool {
	return txnFirst < 0 && now-lastTS >= s.opts.ExpirationMs
}

// Reset applies a barrier outside an append in O(1).
func (s *Store) Reset(p PartitionID) int {
	sp := s.part(p)
	if s.opts.BarrierApply == Exact {
		sp.resetProducers()
	} else {
		sp.clearProducers()
	}
	checkPart(sp)
	return len(sp.ongoing)
}

// Clear empties p's tables outright, O(table slots), so that the rebuild or
// snapshot load that follows inserts into clean tables. The verification
// entries stay, as ProducerStateManager#truncateAndReload keeps them.
func (s *Store) Clear(p PartitionID) {
	sp := s.part(p)
	verif := sp.verif
	sp.resetProducers()
	sp.verif = verif
	for i := range sp.shards {
		sp.shards[i].clear()
	}
	sp.ongoing = sp.ongoing[:0]
	sp.unrepl = sp.unrepl[:0]
}

func (s *Store) StartVerification(p PartitionID, pid int64, seq int32, epoch int16, tv TxnVersion, nowMs int64) (Guard, error) {
	sp := s.part(p)
	if sh, i := sp.lookup(pid); sh != nil {
		cv := &sh.slots[i]
		if epoch < cv.epoch && s.opts.Release.refusesStaleVerification() {
			return 0, kafkaerr.InvalidProducerEpoch // KAFKA-18042
		}
		if s.opts.ongoing(cv.txnFirst, cv.epoch, epoch) {
			return 0, nil
		}
	}
	e := sp.verifEntry(pid)
	if e == nil {
		sp.verif = append(sp.verif, storeVerif{pid: pid, timestamp: nowMs, guard: Guard(s.guards.Add(1)),
			lowestSeq: seq, epoch: epoch, bump: tv >= TV2})
		e = &sp.verif[len(sp.verif)-1]
	}
	if epoch > e.epoch {
		e.lowestSeq, e.epoch = seq, epoch
	} else if epoch == e.epoch && seq < e.lowestSeq {
		e.lowestSeq = seq
	}
	return e.guard, nil
}

// HasLateTransaction reads the oldest open transaction's producer entry as
// ProducerStateManager#updateOldestTxnTimestamp does (no entry: -1).
func (s *Store) HasLateTransaction(p PartitionID, nowMs int64) bool {
	sp := s.part(p)
	if len(sp.ongoing) == 0 {
		return false
	}
	lastTS := int64(-1)
	if sh, i := sp.lookup(sp.ongoing[0].ProducerID); sh != nil {
		lastTS = sh.slots[i].lastTS
	}
	return s.opts.late(lastTS, nowMs)
}

func (s *Store) Producer(p PartitionID, pid int64) (ProducerInfo, bool) {
	if sh, i := s.part(p).lookup(pid); sh != nil {
		return sh.info(i), true
	}
	return ProducerInfo{}, false
}

// Producers yields p's entries in table order. The partition must not change
// during the iteration.
func (s *Store) Producers(p PartitionID) iter.Seq[ProducerInfo] {
	return func(yield func(ProducerInfo) bool) {
		sp := s.part(p)
		for si := range sp.shards {
			sh := &sp.shards[si]
			for i := range sh.slots {
				if sh.slots[i].gen == sp.gen && !yield(sh.info(i)) {
					return
				}
			}
		}
	}
}

func (s *Store) ProducerCount(p PartitionID) int { return s.part(p).count }

func (s *Store) OpenTxns(dst []TxnInfo, p PartitionID) []TxnInfo {
	return append(dst, s.part(p).ongoing...)
}

func (s *Store) UnreplicatedTxns(dst []TxnInfo, p PartitionID) []TxnInfo {
	return append(dst, s.part(p).unrepl...)
}

func (s *Store) FirstUnstableOffset(p PartitionID) (int64, bool) {
	sp := s.part(p)
	switch {
	case len(sp.ongoing) > 0 && len(sp.unrepl) > 0:
		return min(sp.ongoing[0].FirstOffset, sp.unrepl[0].FirstOffset), true
	case len(sp.ongoing) > 0:
		return sp.ongoing[0].FirstOffset, true
	case len(sp.unrepl) > 0:
		return sp.unrepl[0].FirstOffset, true
	}
	return 0, false
}

func (s *Store) LastStableOffset(p PartitionID, hw int64) int64 {
	if fuo, ok := s.FirstUnstableOffset(p); ok && fuo < hw {
		return fuo
	}
	return hw
}

func (s *Store) OnHighWatermark(p PartitionID, hw int64) {
	sp := s.part(p)
	sp.unrepl = slices.DeleteFunc(sp.unrepl, func(t TxnInfo) bool { return t.LastOffset < hw })
}

// ExpireProducers is O(shards) when the shards' timestamp bounds show that
// nothing can have expired (the periodic check's usual case), else a
// sequential walk of the hot slots of the other shards, which makes their
// bounds exact again; removed slots become tombstones.
func (s *Store) ExpireProducers(p PartitionID, nowMs int64) int {
	sp := s.part(p)
	n := 0
	for si := range sp.shards {
		sh := &sp.shards[si]
		if sh.unexpired(nowMs, s.opts.ExpirationMs) {
			continue
		}
		first := true // the scan makes the bounds exact
		for i := range sh.slots {
			sl := &sh.slots[i]
			if sl.gen != sp.gen {
				continue
			}
			if s.isExpired(sl.txnFirst, sl.lastTS, nowMs) {
				sl.gen = genTomb
				n++
				continue
			}
			if sl.txnFirst >= 0 {
				continue // cannot expire while open, so not bounded
			}
			if first {
				sh.tsMin, sh.tsMax, first = sl.lastTS, sl.lastTS, false
			}
			sh.noteTS(sl.lastTS)
		}
		if first { // nothing bounded is left: skip until now+expiration
			sh.tsMin, sh.tsMax = nowMs, nowMs
		}
	}
	sp.count -= n
	sp.verif = slices.DeleteFunc(sp.verif, func(v storeVerif) bool { return nowMs-v.timestamp >= s.opts.ExpirationMs })
	checkPartFull(sp)
	return n
}
