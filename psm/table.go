package psm

import (
	"math"
	"math/bits"
	"unsafe"
)

// The producer table of one partition: numShards pointer-free open-addressing
// tables with linear probing. A 64-bit multiplicative hash of (partition,
// PID) picks the shard from its top bits and the first probe slot from the
// bits below them (Fibonacci hashing: the high bits of the product depend on
// every bit of the PID), so the two choices are independent. Shards grow
// one at a time, which bounds the pause of a rehash to 1/numShards of the
// partition.
//
// A slot is one 64-byte cache line holding the key (PID, generation) and the
// entry's hot fields: epoch, coordinator epoch, last timestamp, open
// transaction and the last sequence of each cached batch. An in-order CLIENT
// append reads nothing else. The rest of the five-batch window (offsets,
// timestamps, offset deltas) lives in a cold array parallel to the slots,
// written by Commit and read only to confirm a duplicate, to copy an entry
// out or to encode a snapshot. Because the cold window of slot i is wins[i],
// its address is known from the hash before the slot is read: Add
// prefetches it while it probes the slot (prefetchWindow), so an update
// costs one memory latency, not two in a row, and Commit's write finds the
// line in cache.
//
// Every key carries the partition generation it was written under. Reset
// bumps the generation: in O(1) every slot of an older generation becomes
// stale, which lookups skip like a tombstone and inserts reuse. A rehash
// drops stale slots and tombstones.

const (
	shardBits  = 4
	numShards  = 1 << shardBits
	shardShift = 64 - shardBits
	minSlots   = 8

	prefetchMinSlots = 1024 // see prefetchWindow

	genEmpty uint32 = 0              // never written
	genTomb  uint32 = math.MaxUint32 // removed by expiration
)

// slot is a key and its entry's hot fields: ProducerStateEntry without the
// producer ID's cold window. The window is a ring of NumBatchesToRetain
// entries, oldest at head; seqs[j] is the LastSeq of the cold window's entry j.
type slot struct {
	pid        int64
	gen        uint32
	_          [4]byte
	lastTS     int64
	txnFirst   int64 // -1 when no transaction is open
	coordEpoch int32
	epoch      int16
	n, head    uint8
	seqs       lastSeqs
	last       int32 // the newest batch's LastSeq when n > 0: lastSeq without the ring walk
}

// lastSeqs is the LastSeq of each entry of a window, in ring order.
type lastSeqs [NumBatchesToRetain]int32

// has reports whether any of the five values is seq, entries past the
// window's length included (a false positive costs only the exact walk).
// Five compares, no loop over the ring.
func (q *lastSeqs) has(seq int32) bool {
	return q[0] == seq || q[1] == seq || q[2] == seq || q[3] == seq || q[4] == seq
}

// A slot is exactly one cache line (tables of 8 or more slots are 64-byte
// aligned: size classes and pages are multiples of 64).
var (
	_ [unsafe.Sizeof(slot{}) - 64]struct{}
	_ [64 - unsafe.Sizeof(slot{})]struct{}
)

// window is the cold part of an entry: the cached batches in ring order.
type window [NumBatchesToRetain]BatchMetadata

func ringIndex(head uint8, i int) int {
	j := int(head) + i
	if j >= NumBatchesToRetain {
		j -= NumBatchesToRetain
	}
	return j
}

func (s *slot) lastSeq() int32 {
	if s.n == 0 {
		return -1
	}
	return s.last
}

// push appends m to the window, dropping the oldest batch when it is full.
func (s *slot) push(w *window, m BatchMetadata) {
	var j int
	if s.n < NumBatchesToRetain {
		j = ringIndex(s.head, int(s.n))
		s.n++
	} else {
		j = int(s.head)
		s.head++
		if s.head == NumBatchesToRetain {
			s.head = 0
		}
	}
	w[j] = m
	s.seqs[j] = m.LastSeq
	s.last = m.LastSeq
}

// slotVal is a whole entry outside the table: an append's pending update
// (ProducerAppendInfo's updatedEntry) or an entry read from a snapshot.
type slotVal struct {
	lastTS     int64
	txnFirst   int64 // -1 when no transaction is open
	coordEpoch int32
	epoch      int16
	n, head    uint8
	win        [NumBatchesToRetain]BatchMetadata
}

func (v *slotVal) at(i int) *BatchMetadata { return &v.win[ringIndex(v.head, i)] }

func (v *slotVal) lastSeq() int32 {
	if v.n == 0 {
		return -1
	}
	return v.at(int(v.n) - 1).LastSeq
}

func (v *slotVal) maybeUpdateEpoch(e int16) {
	if v.epoch != e {
		v.n, v.head = 0, 0
		v.epoch = e
	}
}

func (v *slotVal) push(m BatchMetadata) { *v.next() = m }

// next makes room for one more batch at the window's end, dropping the
// oldest when it is full, and returns the entry to fill. A caller that
// fills it field by field, rather than copying a BatchMetadata just built
// into it (push), saves the copy's wide loads, which wait for the narrow
// stores that built it (a failed store-to-load forwarding).
func (v *slotVal) next() *BatchMetadata {
	if v.n < NumBatchesToRetain {
		v.n++
		return v.at(int(v.n) - 1)
	}
	m := &v.win[v.head]
	v.head++
	if v.head == NumBatchesToRetain {
		v.head = 0
	}
	return m
}

// info is v as pid's ProducerInfo, window oldest first.
func (v *slotVal) info(pid int64) ProducerInfo {
	in := ProducerInfo{ProducerID: pid, Epoch: v.epoch, CoordinatorEpoch: v.coordEpoch,
		LastTimestamp: v.lastTS, TxnFirstOffset: v.txnFirst, NumBatches: int(v.n)}
	for k := range int(v.n) {
		in.Batches[k] = *v.at(k)
	}
	return in
}

func valOf(in *ProducerInfo) slotVal {
	v := slotVal{lastTS: in.LastTimestamp, txnFirst: in.TxnFirstOffset, coordEpoch: in.CoordinatorEpoch, epoch: in.Epoch}
	for _, m := range in.Window() {
		v.push(m)
	}
	return v
}

type shard struct {
	slots   []slot
	wins    []window // parallel to slots: wins[i] is the cold window of slots[i]
	used    int      // slots that are not empty (live, stale or tombstone)
	version uint32   // bumped by every rehash, which moves slots and windows
	shift   uint8    // home: 64 - log2(len(slots))
	// tsMin and tsMax bound the lastTS of every live slot with no open
	// transaction (loosely: every write of a lastTS widens them, only a scan
	// narrows them). ExpireProducers skips a shard whose bounds prove that
	// nothing in it can have expired; a slot with an open transaction cannot
	// expire, and the write that closes it (merge) widens the bounds.
	tsMin, tsMax int64
}

// noteTS widens the lastTS bounds to ts. O(1).
func (sh *shard) noteTS(ts int64) {
	// Branches, not min and max: the bounds rarely move (timestamps grow,
	// and tsMax moves only for a new newest batch of the shard), so the
	// usual write stores nothing.
	if ts > sh.tsMax {
		sh.tsMax = ts
	}
	if ts < sh.tsMin {
		sh.tsMin = ts
	}
}

// unexpired reports that no live slot can satisfy now-lastTS >= expMs:
// now-ts does not wrap for any ts in [tsMin, tsMax] (both ends checked, the
// difference is monotone between them) and is below expMs at tsMin.
func (sh *shard) unexpired(now, expMs int64) bool {
	lo, hi := now-sh.tsMin, now-sh.tsMax
	wraps := func(d, ts int64) bool { return (now^ts) < 0 && (now^d) < 0 }
	return !wraps(lo, sh.tsMin) && !wraps(hi, sh.tsMax) && lo < expMs
}

// prefetchWindow prefetches the cold window at the first probe slot of h,
// so that its cache miss runs beside the slot's instead of after it and
// Commit's write finds the line. A prefetch retires at once: unlike a load
// it does not hold up the instructions behind it. Below prefetchMinSlots
// slots per shard (a partition of under ~12k producers, whose windows stay
// in L2) there is no miss to hide, and the prefetch, an assembly call that
// Go cannot inline, costs ~3 ns per update at 1k producers: it is skipped.
func (sh *shard) prefetchWindow(h uint64) {
	if len(sh.wins) >= prefetchMinSlots {
		prefetch(uintptr(unsafe.Pointer(&sh.wins[sh.home(h)])))
	}
}

// hashPID is the table hash of pid under a partition's seed: one multiply
// by 2^64 divided by the golden ratio. Its top bits depend on every bit of
// pid, its low bits only on pid's low bits, so both the shard (shardOf) and
// the first probe slot (shard.home) are taken from the top. One multiply is
// half the latency of MurmurHash3's finalizer, and the hash is the
// first link of an update's dependency chain (hash, slot address, slot
// load). TestHashSpreadsPIDFamilies holds the spread for sequential,
// negated, bit-field and high-bits-only PIDs (a fold of the product's
// halves into its low bits, tried first, left PIDs that differ only above
// bit 40 on 1/256 of the slots).
func hashPID(pid int64, seed uint64) uint64 {
	return (uint64(pid) ^ seed) * 0x9e3779b97f4a7c15
}

// home is the first probe slot of hash h: the log2(len(slots)) bits below
// the shard bits.
func (sh *shard) home(h uint64) uint64 { return h << shardBits >> sh.shift }

// homeShift is shard.shift for a table of size slots (a power of two).
func homeShift(size int) uint8 { return uint8(bits.LeadingZeros64(uint64(size - 1))) }

// find returns the slot index of a live key. O(1) expected.
func (sh *shard) find(pid int64, gen uint32, h uint64) (int, bool) {
	if len(sh.slots) == 0 {
		return -1, false
	}
	mask := uint64(len(sh.slots) - 1)
	for i := sh.home(h); ; i = (i + 1) & mask {
		s := &sh.slots[i]
		if s.gen == gen && s.pid == pid {
			return int(i), true
		}
		if s.gen == genEmpty {
			return -1, false
		}
	}
}

// maxReuseProbe bounds the probe run an insert accepts while stale slots or
// tombstones lie on it: past it the shard is purged first, so that a barrier
// or an expiration leaves no long chains behind for long.
const maxReuseProbe = 16

// insert claims a slot for a key known to be absent and returns its index;
// the caller fills it with put. It may rehash first, which bumps version.
func (sh *shard) insert(pid int64, gen uint32, h uint64, seed uint64) int {
	if (sh.used+1)*4 > len(sh.slots)*3 {
		sh.rehash(gen, seed)
	}
	for {
		mask := uint64(len(sh.slots) - 1)
		i, reuse, probes := sh.home(h), -1, 0
		for ; ; i = (i + 1) & mask {
			g := sh.slots[i].gen
			if g == genEmpty {
				break
			}
			if g != gen && reuse < 0 { // stale or tombstone: reusable
				reuse = int(i)
			}
			probes++
		}
		// The key is absent, so the whole run was probed: lookups of absent
		// keys pay for it too. Purge a long run that holds dead slots.
		if reuse >= 0 && probes > maxReuseProbe {
			sh.rehash(gen, seed)
			continue
		}
		if reuse >= 0 {
			i = uint64(reuse)
		} else {
			sh.used++
		}
		s := &sh.slots[i]
		s.pid, s.gen = pid, gen
		return int(i)
	}
}

// put writes v as the entry of slot i, window normalized to start at 0.
func (sh *shard) put(i int, v *slotVal) {
	s := &sh.slots[i]
	s.lastTS, s.txnFirst, s.coordEpoch, s.epoch = v.lastTS, v.txnFirst, v.coordEpoch, v.epoch
	sh.noteTS(v.lastTS)
	s.n, s.head = v.n, 0
	w := &sh.wins[i]
	for k := range int(v.n) {
		m := *v.at(k)
		w[k] = m
		s.seqs[k] = m.LastSeq
		s.last = m.LastSeq
	}
}

// merge is ProducerStateEntry.update(next) on slot i: next holds only this
// append's batches. The cold window is written only when next has batches.
func (sh *shard) merge(i int, next *slotVal) {
	s := &sh.slots[i]
	if s.epoch != next.epoch {
		s.n, s.head = 0, 0
		s.epoch = next.epoch
	}
	s.coordEpoch = next.coordEpoch
	s.lastTS = next.lastTS
	sh.noteTS(next.lastTS)
	if next.n > 0 {
		w := &sh.wins[i]
		for k := range int(next.n) {
			s.push(w, *next.at(k))
		}
	}
	s.txnFirst = next.txnFirst
}

// info copies the entry of slot i out.
func (sh *shard) info(i int) ProducerInfo {
	s := &sh.slots[i]
	in := ProducerInfo{ProducerID: s.pid, Epoch: s.epoch, CoordinatorEpoch: s.coordEpoch,
		LastTimestamp: s.lastTS, TxnFirstOffset: s.txnFirst, NumBatches: int(s.n)}
	w := &sh.wins[i]
	for k := range int(s.n) {
		in.Batches[k] = w[ringIndex(s.head, k)]
	}
	return in
}

// clear empties the shard, keeping its capacity. O(slots).
func (sh *shard) clear() {
	clear(sh.slots) // a window is read only up to its slot's n
	sh.used = 0
	sh.tsMin, sh.tsMax = 0, 0
	sh.version++
}

// rehash moves the live entries into a table whose load is at most 1/2 after
// one more insert, dropping stale slots and tombstones. O(slots).
func (sh *shard) rehash(gen uint32, seed uint64) {
	live := 0
	for i := range sh.slots {
		if sh.slots[i].gen == gen {
			live++
		}
	}
	size := minSlots
	for size < 2*(live+1) {
		size *= 2
	}
	slots := make([]slot, size)
	wins := make([]window, size)
	mask := uint64(size - 1)
	shift := homeShift(size)
	first := true // the bounds become exact: the first bounded slot sets them
	for i := range sh.slots {
		s := &sh.slots[i]
		if s.gen != gen {
			continue
		}
		if s.txnFirst < 0 {
			if first {
				sh.tsMin, sh.tsMax, first = s.lastTS, s.lastTS, false
			}
			sh.noteTS(s.lastTS)
		}
		j := hashPID(s.pid, seed) << shardBits >> shift
		for slots[j].gen != genEmpty {
			j = (j + 1) & mask
		}
		slots[j] = *s
		wins[j] = sh.wins[i]
	}
	sh.slots, sh.wins, sh.used, sh.shift = slots, wins, live, shift
	sh.version++
}
