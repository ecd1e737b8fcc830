package psm

import "fmt"

// Self-checks of the Store, compiled in only with -tags invariants (the
// constant folds the calls away otherwise). A violation panics.

func invariantf(format string, args ...any) {
	panic(fmt.Sprintf("psm invariant: "+format, args...))
}

// checkSlot checks one entry just written and its shard's load factor. O(1).
func checkSlot(sp *storePart, sh *shard, slot int) {
	if !invariants {
		return
	}
	if sh.used*4 > len(sh.keys)*3 {
		invariantf("shard load %d/%d above 3/4", sh.used, len(sh.keys))
	}
	if g := sh.meta[slot].gen; g != sp.gen || sh.keys[sh.meta[slot].slot].val != uint32(slot) {
		invariantf("slot written under generation %d, partition is at %d", g, sp.gen)
	}
	checkWindow(&sh.vals[slot])
}

// checkWindow: at most five batches, ring head in range, lastOffsets strictly
// increasing (the log assigns increasing offsets).
func checkWindow(v *slotVal) {
	if v.n > NumBatchesToRetain || v.head >= NumBatchesToRetain {
		invariantf("window n=%d head=%d", v.n, v.head)
	}
	for i := 1; i < int(v.n); i++ {
		if v.at(i).LastOffset <= v.at(i-1).LastOffset {
			invariantf("window lastOffsets not increasing: %d then %d", v.at(i-1).LastOffset, v.at(i).LastOffset)
		}
	}
}

// checkPart checks the O(1) and O(transactions) facts of a partition.
func checkPart(sp *storePart) {
	if !invariants {
		return
	}
	if sp.gen == genEmpty || sp.gen == genTomb {
		invariantf("partition generation %d is reserved", sp.gen)
	}
	if sp.count < 0 {
		invariantf("producer count %d", sp.count)
	}
	for _, txns := range [][]TxnInfo{sp.ongoing, sp.unrepl} {
		for i := 1; i < len(txns); i++ {
			if txns[i].FirstOffset <= txns[i-1].FirstOffset {
				invariantf("transactions not sorted by first offset")
			}
		}
	}
}

// checkPartFull walks every slot: generation consistency (no slot from a
// future generation), used and live counts, every live key reachable by its
// probe sequence, load factor and windows. O(table slots).
func checkPartFull(sp *storePart) {
	if !invariants {
		return
	}
	checkPart(sp)
	live := 0
	for si := range sp.shards {
		sh := &sp.shards[si]
		used := 0
		for i, k := range sh.keys {
			if k.gen == genEmpty {
				continue
			}
			used++
			if int(k.val) >= len(sh.meta) {
				invariantf("shard %d slot %d owns value %d of %d", si, i, k.val, len(sh.meta))
			}
			if m := sh.meta[k.val]; m.pid != k.pid || m.gen != k.gen || m.slot != uint32(i) {
				invariantf("shard %d slot %d key %+v, meta %+v", si, i, k, m)
			}
			switch {
			case k.gen != genTomb && k.gen > sp.gen:
				invariantf("slot generation %d ahead of partition %d", k.gen, sp.gen)
			case k.gen == sp.gen:
				live++
				h := sp.hash(k.pid)
				if uint64(si) != h>>shardShift {
					invariantf("pid %d in shard %d, hash says %d", k.pid, si, h>>shardShift)
				}
				if j, ok := sh.find(k.pid, sp.gen, h); !ok || j != int(k.val) {
					invariantf("pid %d at slot %d not found by probing (%d, %v)", k.pid, i, j, ok)
				}
				checkWindow(&sh.vals[k.val])
			}
		}
		if len(sh.meta) != used || len(sh.vals) != used {
			invariantf("shard %d: %d used slots, %d meta, %d values", si, used, len(sh.meta), len(sh.vals))
		}
		if used != sh.used {
			invariantf("shard %d counts %d used slots, holds %d", si, sh.used, used)
		}
		if sh.used*4 > len(sh.keys)*3 {
			invariantf("shard %d load %d/%d above 3/4", si, sh.used, len(sh.keys))
		}
	}
	if live != sp.count {
		invariantf("partition counts %d producers, holds %d", sp.count, live)
	}
}
