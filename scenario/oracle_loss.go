// RPO: acknowledged writes lost. A truncation is no loss by itself: a
// mirror fetches back what its source still holds, at the same offsets.
// What a truncation removed is settled once the fetches that could repair it
// have converged: a write is lost when the log that should hold it does not
// hold it at its place, by truth.

package scenario

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
)

// tailOf copies every batch of r's log from offset on, so that what a
// truncation removes can be told after it (ackedLost).
func tailOf(r replica, from int64) []codec.Batch {
	bs := batchesFrom(r, max(from, 0))
	for i, b := range bs {
		bs[i] = append(codec.Batch(nil), b...)
	}
	return bs
}

// acked says what losing b loses of what clients were told: the records of
// a data batch outside transactions (acknowledged to its producer), or a
// COMMIT marker the coordinator wrote (the client was told "committed"; its
// transaction's data goes with the marker, which lies after it). The data
// of a transaction is no loss by itself: its fate is its marker's, and an
// open or aborted transaction was never delivered. STOPPING's own ABORT
// markers and barriers are no client's writes.
func (o *oracle) acked(b codec.Batch) (records int, marker string) {
	if b.IsControl() {
		t := readTruth(b)
		if t.control != codec.ControlCommit && t.control != codec.ControlAbort {
			return 0, ""
		}
		mk, known := o.w.markers[t.ts]
		switch {
		case !known || !o.w.ackDelivered(b):
			return 0, ""
		case mk.abort:
			return 0, "ABORT"
		}
		return 0, "COMMIT"
	}
	if b.IsTransactional() || !o.w.ackDelivered(b) {
		return 0, ""
	}
	return int(b.RecordsCount()), ""
}

// removal is one acknowledged write a truncation removed, not settled yet.
type removal struct {
	p    *partition
	step int
	why  string
	b    codec.Batch // a copy
	id   writeID
}

// ackedLost notes what a truncation removed of acknowledged writes: before
// is the tail of p's log taken before a step that may truncate (tailOf);
// every batch of it that r no longer holds at its offset is removed, and
// settled (settleLosses) once the fetches that could bring it back have
// converged. An acknowledged end marker it removed is also noted by the
// transaction it ends (truncatedEnds), whether a fetch brings a marker back
// or not: one that does closes the transaction, which then pins no LSO.
func (o *oracle) ackedLost(p *partition, r replica, before []codec.Batch, why string) {
	for _, b := range before {
		if now, ok := batchAt(r, b.BaseOffset()); ok && string(now) == string(b) {
			continue
		}
		n, marker := o.acked(b)
		if n == 0 && marker == "" {
			continue
		}
		if marker != "" {
			mk := o.w.markers[readTruth(b).ts]
			ref := txnRef{mk.producer, mk.serial}
			if _, seen := o.truncatedEnds[ref]; !seen {
				o.truncatedEnds[ref] = o.w.step
			}
		}
		o.removed = append(o.removed, removal{p: p, step: o.w.step, why: why, b: b, id: o.identify(b)})
	}
}

// settleLosses is RPO (scenarios' rule: an acknowledged write a truncation
// removed that no fetch brought back): every removal ready to be settled is
// lost when p's leader does not hold the same write (by truth: a mirror may
// rewrite its PID) at its offset. A removal on a MIRRORING partition is
// ready once a sync of its cluster has converged (synced: the cluster whose
// mirror fetchers ran, nil for all) or at the end of the run (final); on
// any other partition nothing fetches it back, and it is ready at once.
// Each loss is reported at the step of its truncation.
func (o *oracle) settleLosses(synced *cluster, all, final bool) {
	type group struct {
		p       *partition
		step    int
		why     string
		records int
		batches int
		commits int
		aborts  int
		first   int64
	}
	var groups []*group
	find := func(r removal) *group {
		for _, g := range groups {
			if g.p == r.p && g.step == r.step && g.why == r.why {
				return g
			}
		}
		g := &group{p: r.p, step: r.step, why: r.why, first: -1}
		groups = append(groups, g)
		return g
	}
	kept := o.removed[:0]
	for _, r := range o.removed {
		ready := final || r.p.state != stateMirroring || all || synced == r.p.c
		if !ready {
			kept = append(kept, r)
			continue
		}
		if o.holds(r.p.lead(), r.b.BaseOffset(), r.id) {
			continue
		}
		g := find(r)
		if g.first < 0 {
			g.first = r.b.BaseOffset()
		}
		switch n, marker := o.acked(r.b); marker {
		case "COMMIT":
			g.commits++
		case "ABORT":
			g.aborts++
		default:
			g.records += n
			g.batches++
		}
	}
	o.removed = kept
	for _, g := range groups {
		o.reportAt(CodeRPO, g.p, g.step, fmt.Sprintf("%s removes %d acknowledged records in %d batches, %d COMMIT and %d ABORT markers at offsets >= %d",
			g.why, g.records, g.batches, g.commits, g.aborts, g.first))
	}
}

// committedAfterLoss is RPO for a COMMIT marker the coordinator wrote on p
// for the client instance's transaction serial (the client is told
// "committed") when a truncation removed data of that transaction from p's
// log before the marker: no replica has those records, wherever the marker
// lands. What retention deleted below the log start is no loss.
func (o *oracle) committedAfterLoss(p *partition, instance string, serial int) {
	lead := p.lead()
	for _, w := range o.txnData[txnKey{p, instance, serial}] {
		if w.offset < lead.LogStartOffset() || o.holds(lead, w.offset, w.id) {
			continue
		}
		o.report(CodeRPO, p, fmt.Sprintf("COMMIT of %s's transaction %d: its data at offset %d (seq %d) was truncated before the marker",
			instance, serial, w.offset, w.id.send.seq))
		return
	}
}
