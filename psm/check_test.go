//go:build invariants || race

package psm

import (
	"fmt"
	"testing"
)

// The Store's self-checks (check.go) on states that break one invariant
// each, and on states that stand exactly on a bound and are valid: each
// check panics with what it found, and only then.

// invariantPanic runs f and returns the message of the invariant it
// reports, "" when it reports none; any other panic fails the test.
func invariantPanic(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(string)
			if !ok {
				t.Fatalf("panic %v, not an invariant's report", r)
			}
			msg = s
		}
	}()
	f()
	return ""
}

func wantInvariant(t *testing.T, want string, f func()) {
	t.Helper()
	if got := invariantPanic(t, f); got != "psm invariant: "+want {
		t.Fatalf("reported %q, want %q", got, "psm invariant: "+want)
	}
}

func wantNoInvariant(t *testing.T, f func()) {
	t.Helper()
	if got := invariantPanic(t, f); got != "" {
		t.Fatalf("a valid state reported %q", got)
	}
}

// checkedPart is a Store's partition holding producer pid (an open
// transaction when txn), with the shard and slot of its entry.
func checkedPart(t *testing.T, pid int64, txn bool) (*storePart, *shard, int) {
	t.Helper()
	s := NewStore(Options{})
	h := &harness{t: t, m: s, p: 0}
	b := data(pid, 0, 0, 1)
	b.Transactional = txn
	h.ok(Client, b)
	sp := s.part(0)
	hs := sp.hash(pid)
	sh := &sp.shards[hs>>shardShift]
	i, ok := sh.find(pid, sp.gen, hs)
	if !ok {
		t.Fatalf("producer %d not in its shard", pid)
	}
	wantNoInvariant(t, func() { checkPartFull(sp) })
	return sp, sh, i
}

// freeSlot is the index of an empty slot of sh.
func freeSlot(t *testing.T, sh *shard) int {
	t.Helper()
	for i := range sh.slots {
		if sh.slots[i].gen == genEmpty {
			return i
		}
	}
	t.Fatal("no empty slot")
	return -1
}

// A window of five batches, head at 4: offsets 10..50, last sequences
// 1..5 in ring order from the head.
func fullWindow() (slot, window) {
	var s slot
	var w window
	s.n, s.head = NumBatchesToRetain, 4
	for k := range NumBatchesToRetain {
		j := ringIndex(s.head, k)
		w[j] = BatchMetadata{LastSeq: int32(k + 1), LastOffset: int64(10 * (k + 1))}
		s.seqs[j] = w[j].LastSeq
	}
	s.last = NumBatchesToRetain
	return s, w
}

func TestCheckWindow(t *testing.T) {
	t.Run("five batches, head 4", func(t *testing.T) {
		s, w := fullWindow()
		wantNoInvariant(t, func() { checkWindow(&s, &w) })
	})
	t.Run("six batches", func(t *testing.T) {
		s, w := fullWindow()
		s.n = NumBatchesToRetain + 1
		wantInvariant(t, "window n=6 head=4", func() { checkWindow(&s, &w) })
	})
	t.Run("head 5", func(t *testing.T) {
		var s slot
		var w window
		s.head = NumBatchesToRetain
		wantInvariant(t, "window n=0 head=5", func() { checkWindow(&s, &w) })
	})
	t.Run("empty window, any cached last sequence", func(t *testing.T) {
		var s slot
		var w window
		s.last, s.seqs[NumBatchesToRetain-1] = 7, 9
		wantNoInvariant(t, func() { checkWindow(&s, &w) })
	})
	t.Run("cached last sequence not the window's", func(t *testing.T) {
		s, w := fullWindow()
		s.n = 2 // the ring holds 1 at slot 4 and 2 at slot 0
		s.last = 9
		wantInvariant(t, "cached last sequence 9, window's 2", func() { checkWindow(&s, &w) })
	})
	t.Run("hot last sequence not the cold one", func(t *testing.T) {
		s, w := fullWindow()
		w[1].LastSeq = 30
		wantInvariant(t, "window 1: hot last sequence 3, cold 30", func() { checkWindow(&s, &w) })
	})
	t.Run("equal last offsets", func(t *testing.T) {
		s, w := fullWindow()
		w[1].LastOffset = w[0].LastOffset // the batches at ring positions 1 and 2
		wantInvariant(t, "window lastOffsets not increasing: 20 then 20", func() { checkWindow(&s, &w) })
	})
	t.Run("decreasing last offsets", func(t *testing.T) {
		s, w := fullWindow()
		w[1].LastOffset = 5
		wantInvariant(t, "window lastOffsets not increasing: 20 then 5", func() { checkWindow(&s, &w) })
	})
}

func TestCheckSlot(t *testing.T) {
	t.Run("load at 3/4", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		sh.used = len(sh.slots) * 3 / 4
		wantNoInvariant(t, func() { checkSlot(sp, sh, i) })
	})
	t.Run("load above 3/4", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		sh.used = len(sh.slots)*3/4 + 1
		want := fmt.Sprintf("shard load %d/%d above 3/4", sh.used, len(sh.slots))
		wantInvariant(t, want, func() { checkSlot(sp, sh, i) })
	})
	t.Run("slot of another generation", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		sh.slots[i].gen = sp.gen + 1
		want := fmt.Sprintf("slot written under generation %d, partition is at %d", sp.gen+1, sp.gen)
		wantInvariant(t, want, func() { checkSlot(sp, sh, i) })
	})
	t.Run("window", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		sh.slots[i].head = NumBatchesToRetain
		wantInvariant(t, "window n=1 head=5", func() { checkSlot(sp, sh, i) })
	})
}

func TestCheckPart(t *testing.T) {
	valid := func() *storePart { return &storePart{gen: 1} }
	t.Run("reserved generations", func(t *testing.T) {
		for _, g := range []uint32{genEmpty, genTomb} {
			sp := valid()
			sp.gen = g
			wantInvariant(t, fmt.Sprintf("partition generation %d is reserved", g), func() { checkPart(sp) })
		}
	})
	t.Run("no producer", func(t *testing.T) {
		wantNoInvariant(t, func() { checkPart(valid()) })
	})
	t.Run("negative producer count", func(t *testing.T) {
		sp := valid()
		sp.count = -1
		wantInvariant(t, "producer count -1", func() { checkPart(sp) })
	})
	txns := func(firsts ...int64) []TxnInfo {
		out := make([]TxnInfo, len(firsts))
		for i, f := range firsts {
			out[i] = TxnInfo{ProducerID: int64(i), FirstOffset: f}
		}
		return out
	}
	t.Run("transactions by first offset", func(t *testing.T) {
		sp := valid()
		sp.ongoing, sp.unrepl = txns(3, 7, 9), txns(1, 2, 4)
		wantNoInvariant(t, func() { checkPart(sp) })
	})
	for _, list := range []string{"ongoing", "unreplicated"} {
		for _, firsts := range [][]int64{{3, 7, 7}, {3, 9, 7}} {
			t.Run(fmt.Sprintf("%s %v", list, firsts), func(t *testing.T) {
				sp := valid()
				if list == "ongoing" {
					sp.ongoing = txns(firsts...)
				} else {
					sp.unrepl = txns(firsts...)
				}
				wantInvariant(t, "transactions not sorted by first offset", func() { checkPart(sp) })
			})
		}
	}
}

func TestCheckPartFull(t *testing.T) {
	t.Run("part", func(t *testing.T) {
		sp, _, _ := checkedPart(t, 5, false)
		sp.count = -1
		wantInvariant(t, "producer count -1", func() { checkPartFull(sp) })
	})
	t.Run("slot of a later generation", func(t *testing.T) {
		sp, sh, _ := checkedPart(t, 5, false)
		sh.slots[freeSlot(t, sh)].gen = sp.gen + 1
		sh.used++
		want := fmt.Sprintf("slot generation %d ahead of partition %d", sp.gen+1, sp.gen)
		wantInvariant(t, want, func() { checkPartFull(sp) })
	})
	t.Run("tombstones and stale slots", func(t *testing.T) {
		sp, sh, _ := checkedPart(t, 5, false)
		sp.gen++ // the producer's slot becomes stale
		sp.count = 0
		sh.slots[freeSlot(t, sh)].gen = genTomb
		sh.used++
		wantNoInvariant(t, func() { checkPartFull(sp) })
	})
	t.Run("slot in another shard", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		si := int(sp.hash(5) >> shardShift)
		other := &sp.shards[(si+1)%numShards]
		*other = shard{slots: make([]slot, minSlots), wins: make([]window, minSlots), used: 1, shift: homeShift(minSlots)}
		other.slots[0], other.wins[0] = sh.slots[i], sh.wins[i]
		sh.slots[i], sh.wins[i] = slot{}, window{}
		sh.used--
		want := fmt.Sprintf("pid 5 in shard %d, hash says %d", (si+1)%numShards, si)
		wantInvariant(t, want, func() { checkPartFull(sp) })
	})
	t.Run("slot off its probe sequence", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		// two slots on, past the empty slot it leaves: probing from the
		// home slot (the producer is alone in its shard) stops there
		j := (i + 2) % len(sh.slots)
		sh.slots[j], sh.wins[j] = sh.slots[i], sh.wins[i]
		sh.slots[i], sh.wins[i] = slot{}, window{}
		want := fmt.Sprintf("pid 5 at slot %d not found by probing (-1, false)", j)
		wantInvariant(t, want, func() { checkPartFull(sp) })
	})
	t.Run("window", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		sh.slots[i].head = NumBatchesToRetain
		wantInvariant(t, "window n=1 head=5", func() { checkPartFull(sp) })
	})
	t.Run("last timestamp on the bounds", func(t *testing.T) {
		sp, sh, i := checkedPart(t, 5, false)
		ts := sh.slots[i].lastTS
		sh.tsMin, sh.tsMax = ts, ts+1
		wantNoInvariant(t, func() { checkPartFull(sp) })
		sh.tsMin, sh.tsMax = ts-1, ts
		wantNoInvariant(t, func() { checkPartFull(sp) })
	})
	for _, d := range []int64{-1, 1} {
		t.Run(fmt.Sprintf("last timestamp %+d past the bounds", d), func(t *testing.T) {
			sp, sh, i := checkedPart(t, 5, false)
			si := sp.hash(5) >> shardShift
			ts := sh.slots[i].lastTS
			sh.tsMin, sh.tsMax = ts-d, ts-d
			want := fmt.Sprintf("shard %d slot %d lastTS %d outside bounds [%d, %d]", si, i, ts, ts-d, ts-d)
			wantInvariant(t, want, func() { checkPartFull(sp) })
		})
		t.Run(fmt.Sprintf("open transaction at offset 0, last timestamp %+d past the bounds", d), func(t *testing.T) {
			sp, sh, i := checkedPart(t, 5, true)
			if sh.slots[i].txnFirst != 0 {
				t.Fatalf("transaction opened at %d, want 0", sh.slots[i].txnFirst)
			}
			ts := sh.slots[i].lastTS
			sh.tsMin, sh.tsMax = ts-d, ts-d
			wantNoInvariant(t, func() { checkPartFull(sp) })
		})
	}
	t.Run("windows not parallel to slots", func(t *testing.T) {
		sp, sh, _ := checkedPart(t, 5, false)
		si := sp.hash(5) >> shardShift
		sh.wins = append(sh.wins, window{})
		want := fmt.Sprintf("shard %d: %d slots, %d windows", si, len(sh.slots), len(sh.wins))
		wantInvariant(t, want, func() { checkPartFull(sp) })
	})
	t.Run("used count", func(t *testing.T) {
		sp, sh, _ := checkedPart(t, 5, false)
		si := sp.hash(5) >> shardShift
		sh.used = 2
		wantInvariant(t, fmt.Sprintf("shard %d counts 2 used slots, holds 1", si), func() { checkPartFull(sp) })
	})
	// tombs fills the producer's shard with tombstones up to used slots
	// (a function of the shard's size).
	tombs := func(t *testing.T, used func(size int) int) (*storePart, *shard, uint64) {
		sp, sh, _ := checkedPart(t, 5, false)
		n := used(len(sh.slots))
		for range n - 1 {
			sh.slots[freeSlot(t, sh)].gen = genTomb
		}
		sh.used = n
		return sp, sh, sp.hash(5) >> shardShift
	}
	t.Run("load at 3/4", func(t *testing.T) {
		sp, _, _ := tombs(t, func(size int) int { return size * 3 / 4 })
		wantNoInvariant(t, func() { checkPartFull(sp) })
	})
	t.Run("load above 3/4", func(t *testing.T) {
		sp, sh, si := tombs(t, func(size int) int { return size*3/4 + 1 })
		want := fmt.Sprintf("shard %d load %d/%d above 3/4", si, sh.used, len(sh.slots))
		wantInvariant(t, want, func() { checkPartFull(sp) })
	})
	t.Run("producer count", func(t *testing.T) {
		sp, _, _ := checkedPart(t, 5, false)
		sp.count = 2
		wantInvariant(t, "partition counts 2 producers, holds 1", func() { checkPartFull(sp) })
	})
}
