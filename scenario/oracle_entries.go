// Conflation (M1, M2, LAT), marker ownership (M3), the barrier (I4),
// tracking (M5) and epoch regressions (I7): what each replica's log and
// producer entries hold.

package scenario

import (
	"fmt"
	"math"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
)

// scan reads r's new batches and checks conflation (M1, M2, LAT), marker
// ownership (M3), barrier effect (I4) and tracking (M5).
func (o *oracle) scan(p *partition, r replica) {
	s := o.shadowOf(r)
	// What retention deleted is not read again after a rescan: the scan
	// starts where the log does.
	s.scanned = max(s.scanned, r.LogStartOffset())
	for s.scanned < r.LogEndOffset() {
		chunk, err := r.Read(s.scanned, 1<<20)
		if err != nil || len(chunk) == 0 {
			break
		}
		next := s.scanned
		eachBatch(chunk, func(b codec.Batch) {
			if b.LastOffset() < s.scanned {
				return
			}
			o.scanBatch(p, r, s, b)
			next = b.NextOffset()
		})
		if next <= s.scanned {
			break
		}
		s.scanned = next
	}
	entries := r.Producers()
	slices.SortFunc(entries, func(a, b producerEntry) int {
		switch {
		case a.PID < b.PID:
			return -1
		case a.PID > b.PID:
			return 1
		}
		return 0
	})
	has := map[int64]producerEntry{}
	for _, e := range entries {
		has[e.PID] = e
	}
	for pid := range s.owners {
		if _, ok := has[pid]; !ok {
			delete(s.owners, pid)
		}
	}
	for _, e := range entries {
		o.checkEntry(p, r, s, e)
	}
	if o.w.strategy == "barrier" && s.lastBarrier >= 0 {
		for _, e := range entries {
			for _, off := range e.BatchOffsets {
				if off < s.lastBarrier {
					o.report(CodeI4, p, fmt.Sprintf("entry PID %d keeps a batch at offset %d below the barrier at %d",
						e.PID, off, s.lastBarrier))
				}
			}
		}
	}
	pids := make([]int64, 0, len(s.unseen))
	for pid := range s.unseen {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		if _, ok := has[pid]; !ok {
			o.report(CodeM5, p, fmt.Sprintf("PID %d (batch at offset %d) has no producer-state entry: idempotence and transactions are not tracked",
				pid, s.unseen[pid]))
		}
	}
	clear(s.unseen)
}

// conflation reports what one entry accepting batch b of producer t after
// the batches of owner ow means (docs/scenarios.md): an epoch regression is
// M2, a sequence regression (not continuing the entry's last sequence, at
// the same or a lower epoch) is M1; one batch can be both. Neither is LAT.
func (o *oracle) conflation(p *partition, pid int64, ow owner, t truth, b codec.Batch) {
	epoch := b.ProducerEpoch()
	detail := fmt.Sprintf("PID %d: %s epoch %d seq %d..%d (offset %d) after %s epoch %d last seq %d",
		pid, t.producer, epoch, b.BaseSequence(), b.LastSequence(), b.BaseOffset(), ow.producer, ow.epoch,
		ow.lastSeq)
	m2 := epoch < ow.epoch
	m1 := epoch <= ow.epoch && !inSeq(ow.lastSeq, b.BaseSequence())
	if m2 {
		o.report(CodeM2, p, detail)
	}
	if m1 {
		o.report(CodeM1, p, detail)
	}
	if !m1 && !m2 {
		o.report(CodeLAT, p, detail)
	}
}

// checkEntry derives conflation from what entry e of r actually holds, not
// from a model of how the broker applies a barrier: the batches of its
// duplicate window are read back from r's log, and two neighbours written by
// different true producers are M1, M2 or LAT by the rule of conflation. The
// newest of them becomes the shadow's owner of the PID, so the next batch
// is compared with what the entry really holds. This is what shows the
// barrier-apply=prototype hazard as conflation: a barrier inside one append
// that leaves pre-barrier batches in an entry the post-barrier batches of
// another producer continue. An epoch change inside one append resets the
// window (ProducerStateEntry#maybeUpdateProducerEpoch clears
// the cached batches): the entry then holds one producer's batches and no
// evidence of the other; that is not reported, since what was wiped is what
// the barrier was to remove, and the entry equals what the exact order
// leaves.
func (o *oracle) checkEntry(p *partition, r replica, s *shadow, e producerEntry) {
	var prev owner
	for _, off := range e.BatchOffsets {
		b, ok := batchAt(r, off)
		if !ok || b.IsControl() || b.ProducerID() != e.PID {
			prev = owner{}
			continue
		}
		t := readTruth(b)
		if prev.producer != "" && t.producer != "" && prev.producer != t.producer {
			o.conflation(p, e.PID, prev, t, b)
		}
		prev = owner{producer: t.producer, epoch: b.ProducerEpoch(), lastSeq: b.LastSequence()}
	}
	if prev.producer != "" {
		s.owners[e.PID] = owner{producer: prev.producer, epoch: e.Epoch, lastSeq: e.LastSeq}
	}
}

// inSeq is Kafka's sequence continuity (ProducerAppendInfo#inSequence).
func inSeq(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

func (o *oracle) scanBatch(p *partition, r replica, s *shadow, b codec.Batch) {
	pid, epoch := b.ProducerID(), b.ProducerEpoch()
	t := readTruth(b)
	if b.IsControl() {
		switch t.control {
		case codec.ControlMirrorPidReset:
			// The exact order; checkEntry corrects the owners from what
			// the entries hold once the scan is done.
			clear(s.owners)
			clear(s.unseen)
			s.lastBarrier = b.BaseOffset()
		case codec.ControlCommit, codec.ControlAbort:
			mk, known := o.w.markers[t.ts]
			if known {
				for _, ref := range s.open[pid] {
					if ref.producer != mk.producer {
						o.report(CodeM3, p, fmt.Sprintf("%s marker of %s (PID %d, offset %d) closes the open transaction of %s",
							t.control, mk.producer, pid, b.BaseOffset(), ref.producer))
					}
				}
			}
			delete(s.open, pid)
			if ow, ok := s.owners[pid]; ok {
				if ow.epoch != epoch {
					ow.epoch, ow.lastSeq = epoch, -1
				}
				s.owners[pid] = ow
			} else if known {
				s.owners[pid] = owner{producer: mk.producer, epoch: epoch, lastSeq: -1}
			}
		}
		return
	}
	if pid == codec.NoProducerID {
		return
	}
	s.unseen[pid] = b.BaseOffset()
	if ow, ok := s.owners[pid]; ok && ow.producer != t.producer && ow.producer != "" && t.producer != "" {
		o.conflation(p, pid, ow, t, b)
	} else if ok && ow.producer == t.producer && t.producer != "" && epoch < ow.epoch && r == p.lead() {
		o.epochRegression(p, pid, ow, b)
	}
	if t.producer == "" {
		// A batch the cleaner emptied (or a foreign one) names no producer:
		// it keeps the entry's sequence, and the oracle has nothing to
		// attribute to anyone.
		return
	}
	s.owners[pid] = owner{producer: t.producer, epoch: epoch, lastSeq: b.LastSequence()}
	if b.IsTransactional() {
		ref := txnRef{t.producer, t.txnSerial}
		if !slices.Contains(s.open[pid], ref) {
			s.open[pid] = append(s.open[pid], ref)
		}
	}
}

// epochRegression is I7: one true producer's batch at a lower epoch than the
// batch before it on the same PID, with no barrier between them. A CLIENT
// append refuses it (INVALID_PRODUCER_EPOCH); REPLICATION rules (a mirror
// fetch, a follower, recovery) accept it with only a warning
// (ProducerAppendInfo#checkProducerEpoch), so a destination that should
// hold one history per PID holds a regressed one. Between two true producers
// it is conflation (M2). Counted per partition (on its leader's log, by
// offset) and reported once, with the count at the end of the run.
func (o *oracle) epochRegression(p *partition, pid int64, ow owner, b codec.Batch) {
	m := o.regressions[p]
	if m == nil {
		m = map[int64]bool{}
		o.regressions[p] = m
	}
	if m[b.BaseOffset()] {
		return
	}
	m[b.BaseOffset()] = true
	before := len(o.violations)
	o.report(CodeI7, p, fmt.Sprintf("PID %d: %s epoch %d (offset %d) after its own epoch %d, accepted with a warning",
		pid, ow.producer, b.ProducerEpoch(), b.BaseOffset(), ow.epoch))
	if len(o.violations) > before {
		o.regressionAt[p] = before
	}
}

// countRegressions completes each I7 finding with how many regressions its
// partition accepted in the run.
func (o *oracle) countRegressions() {
	for p, i := range o.regressionAt {
		o.violations[i].Detail += fmt.Sprintf("; %d in the run", len(o.regressions[p]))
	}
}
