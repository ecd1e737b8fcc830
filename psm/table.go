package psm

import "math"

// The producer table of one partition: numShards pointer-free open-addressing
// tables with linear probing. A 64-bit hash of (partition, PID) picks the
// shard from its top bits and the first probe slot from its low bits, so the
// two choices are independent. Shards grow one at a time, which bounds the
// pause of a rehash to 1/numShards of the partition.
//
// Slot keys are 16 bytes (PID, generation, value index) so that probing stays
// within few cache lines; the 144-byte values live in a dense array beside a
// 16-byte meta array (PID, generation, key slot), one entry per non-empty
// key slot. Scans (expiration, snapshots, iteration) walk the dense arrays,
// whose length is the number of used slots, not the table capacity.
//
// Every key carries the partition generation it was written under. Reset
// bumps the generation: in O(1) every slot of an older generation becomes
// stale, which lookups skip like a tombstone and inserts reuse. A rehash drops
// stale slots and tombstones.

const (
	shardBits  = 4
	numShards  = 1 << shardBits
	shardShift = 64 - shardBits
	minSlots   = 8

	genEmpty uint32 = 0              // never written
	genTomb  uint32 = math.MaxUint32 // removed by expiration
)

type slotKey struct {
	pid int64
	gen uint32
	val uint32 // index into meta and vals, owned by this slot while it is not empty
}

// valMeta mirrors the key of a value so that scans need not visit the keys.
type valMeta struct {
	pid  int64
	gen  uint32
	slot uint32 // the key slot that owns this value
}

// slotVal is one producer entry: ProducerStateEntry without the producer ID.
// The batch window is a ring of NumBatchesToRetain entries, oldest at head.
type slotVal struct {
	lastTs     int64
	txnFirst   int64 // -1 when no transaction is open
	coordEpoch int32
	epoch      int16
	n, head    uint8
	win        [NumBatchesToRetain]BatchMetadata
}

func (v *slotVal) at(i int) *BatchMetadata {
	j := int(v.head) + i
	if j >= NumBatchesToRetain {
		j -= NumBatchesToRetain
	}
	return &v.win[j]
}

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

func (v *slotVal) push(m BatchMetadata) {
	if v.n < NumBatchesToRetain {
		*v.at(int(v.n)) = m
		v.n++
		return
	}
	v.win[v.head] = m
	v.head++
	if v.head == NumBatchesToRetain {
		v.head = 0
	}
}

// merge is ProducerStateEntry.update(next): next holds only this append's batches.
func (v *slotVal) merge(next *slotVal) {
	v.maybeUpdateEpoch(next.epoch)
	v.coordEpoch = next.coordEpoch
	v.lastTs = next.lastTs
	for i := range int(next.n) {
		v.push(*next.at(i))
	}
	v.txnFirst = next.txnFirst
}

func (v *slotVal) info(pid int64) ProducerInfo {
	in := ProducerInfo{ProducerID: pid, Epoch: v.epoch, CoordinatorEpoch: v.coordEpoch,
		LastTimestamp: v.lastTs, TxnFirstOffset: v.txnFirst, NumBatches: int(v.n)}
	for i := range int(v.n) {
		in.Batches[i] = *v.at(i)
	}
	return in
}

func valOf(in *ProducerInfo) slotVal {
	v := slotVal{lastTs: in.LastTimestamp, txnFirst: in.TxnFirstOffset, coordEpoch: in.CoordinatorEpoch, epoch: in.Epoch}
	for _, m := range in.Window() {
		v.push(m)
	}
	return v
}

type shard struct {
	keys    []slotKey
	meta    []valMeta // dense, parallel to vals
	vals    []slotVal
	used    int    // slots that are not empty (live, stale or tombstone) == len(vals)
	version uint32 // bumped by every rehash, which moves slots and values
}

// mix64 is the MurmurHash3 finalizer.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// find returns the value index of a live key. O(1) expected.
func (sh *shard) find(pid int64, gen uint32, h uint64) (int, bool) {
	if len(sh.keys) == 0 {
		return -1, false
	}
	mask := uint64(len(sh.keys) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		k := &sh.keys[i]
		if k.gen == gen && k.pid == pid {
			return int(k.val), true
		}
		if k.gen == genEmpty {
			return -1, false
		}
	}
}

// maxReuseProbe bounds the probe run an insert accepts while stale slots or
// tombstones lie on it: past it the shard is purged first, so that a barrier
// or an expiration leaves no long chains behind for long.
const maxReuseProbe = 16

// insert claims a slot for a key known to be absent and returns its value
// index; the caller fills vals[i]. It may rehash first, which bumps version.
func (sh *shard) insert(pid int64, gen uint32, h uint64, seed uint64) int {
	if (sh.used+1)*4 > len(sh.keys)*3 {
		sh.rehash(gen, seed)
	}
	for {
		mask := uint64(len(sh.keys) - 1)
		i, reuse, probes := h&mask, -1, 0
		for ; ; i = (i + 1) & mask {
			g := sh.keys[i].gen
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
			sh.keys[i].val = uint32(len(sh.vals))
			sh.meta = append(sh.meta, valMeta{}) // within capacity: rehash reserved 3/4 of the slots
			sh.vals = append(sh.vals, slotVal{})
			sh.used++
		}
		k := &sh.keys[i]
		k.pid, k.gen = pid, gen
		sh.meta[k.val] = valMeta{pid: pid, gen: gen, slot: uint32(i)}
		return int(k.val)
	}
}

// clear empties the shard, keeping its capacity. O(slots).
func (sh *shard) clear() {
	clear(sh.keys)
	sh.meta, sh.vals, sh.used = sh.meta[:0], sh.vals[:0], 0
	sh.version++
}

// rehash moves the live entries into a table whose load is at most 1/2 after
// one more insert, dropping stale slots and tombstones and compacting the
// value arrays. O(used slots).
func (sh *shard) rehash(gen uint32, seed uint64) {
	live := 0
	for i := range sh.meta {
		if sh.meta[i].gen == gen {
			live++
		}
	}
	size := minSlots
	for size < 2*(live+1) {
		size *= 2
	}
	keys := make([]slotKey, size)
	meta := make([]valMeta, 0, size*3/4+1)
	vals := make([]slotVal, 0, size*3/4+1)
	mask := uint64(size - 1)
	for i := range sh.meta {
		m := sh.meta[i]
		if m.gen != gen {
			continue
		}
		j := mix64(uint64(m.pid)^seed) & mask
		for keys[j].gen != genEmpty {
			j = (j + 1) & mask
		}
		keys[j] = slotKey{pid: m.pid, gen: gen, val: uint32(len(vals))}
		meta = append(meta, valMeta{pid: m.pid, gen: gen, slot: uint32(j)})
		vals = append(vals, sh.vals[i])
	}
	sh.keys, sh.meta, sh.vals, sh.used = keys, meta, vals, live
	sh.version++
}

// tomb removes the live entry at value index vi (expiration).
func (sh *shard) tomb(vi int) {
	m := &sh.meta[vi]
	m.gen = genTomb
	sh.keys[m.slot].gen = genTomb
}
