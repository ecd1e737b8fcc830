package psm

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/internal/invariants"
)

// Self-checks of the Store, compiled in only with -tags invariants or -race
// (invariants.Enabled folds the calls away otherwise). A violation panics.

func invariantf(format string, args ...any) {
	panic(fmt.Sprintf("psm invariant: "+format, args...))
}

// checkSlot checks one entry just written and its shard's load factor. O(1).
func checkSlot(sp *storePart, sh *shard, i int) {
	if !invariants.Enabled {
		return
	}
	if sh.used*4 > len(sh.slots)*3 {
		invariantf("shard load %d/%d above 3/4", sh.used, len(sh.slots))
	}
	s := &sh.slots[i]
	if s.gen != sp.gen {
		invariantf("slot written under generation %d, partition is at %d", s.gen, sp.gen)
	}
	checkWindow(s, &sh.wins[i])
}

// checkWindow: at most five batches, ring head in range, the hot last
// sequences equal to the cold window's, lastOffsets strictly increasing (the
// log assigns increasing offsets).
func checkWindow(s *slot, w *window) {
	if s.n > NumBatchesToRetain || s.head >= NumBatchesToRetain {
		invariantf("window n=%d head=%d", s.n, s.head)
	}
	if s.n > 0 && s.last != s.seqs[ringIndex(s.head, int(s.n)-1)] {
		invariantf("cached last sequence %d, window's %d", s.last, s.seqs[ringIndex(s.head, int(s.n)-1)])
	}
	for i := range int(s.n) {
		j := ringIndex(s.head, i)
		if s.seqs[j] != w[j].LastSeq {
			invariantf("window %d: hot last sequence %d, cold %d", j, s.seqs[j], w[j].LastSeq)
		}
		if i > 0 {
			if prev := w[ringIndex(s.head, i-1)].LastOffset; w[j].LastOffset <= prev {
				invariantf("window lastOffsets not increasing: %d then %d", prev, w[j].LastOffset)
			}
		}
	}
}

// checkPart checks the O(1) and O(transactions) facts of a partition.
func checkPart(sp *storePart) {
	if !invariants.Enabled {
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
	if !invariants.Enabled {
		return
	}
	checkPart(sp)
	live := 0
	for si := range sp.shards {
		sh := &sp.shards[si]
		used := 0
		for i := range sh.slots {
			s := &sh.slots[i]
			if s.gen == genEmpty {
				continue
			}
			used++
			switch {
			case s.gen != genTomb && s.gen > sp.gen:
				invariantf("slot generation %d ahead of partition %d", s.gen, sp.gen)
			case s.gen == sp.gen:
				live++
				h := sp.hash(s.pid)
				if uint64(si) != h>>shardShift {
					invariantf("pid %d in shard %d, hash says %d", s.pid, si, h>>shardShift)
				}
				if j, ok := sh.find(s.pid, sp.gen, h); !ok || j != i {
					invariantf("pid %d at slot %d not found by probing (%d, %v)", s.pid, i, j, ok)
				}
				checkWindow(s, &sh.wins[i])
				if s.txnFirst < 0 && (s.lastTS < sh.tsMin || s.lastTS > sh.tsMax) {
					invariantf("shard %d slot %d lastTS %d outside bounds [%d, %d]", si, i, s.lastTS, sh.tsMin, sh.tsMax)
				}
			}
		}
		if len(sh.wins) != len(sh.slots) {
			invariantf("shard %d: %d slots, %d windows", si, len(sh.slots), len(sh.wins))
		}
		if used != sh.used {
			invariantf("shard %d counts %d used slots, holds %d", si, sh.used, used)
		}
		if sh.used*4 > len(sh.slots)*3 {
			invariantf("shard %d load %d/%d above 3/4", si, sh.used, len(sh.slots))
		}
	}
	if live != sp.count {
		invariantf("partition counts %d producers, holds %d", sp.count, live)
	}
}
