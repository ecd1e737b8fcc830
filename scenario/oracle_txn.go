// Transactions: read_committed views (M3, M5), committed data delivered
// (M7) and pinned LSOs (M6, I3).

package scenario

import (
	"fmt"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
)

// readCommitted says whether a read_committed consumer of r delivers batch b:
// decided is false while b is not wholly below the LSO.
func readCommitted(r replica, b codec.Batch) (visible, decided bool) {
	if b.LastOffset() >= r.LastStableOffset() {
		return false, false
	}
	if !b.IsTransactional() {
		return true, true
	}
	for _, t := range r.AbortedTxns(b.BaseOffset(), b.NextOffset()) {
		if t.PID == b.ProducerID() && t.FirstOffset <= b.BaseOffset() && b.BaseOffset() <= t.LastOffset {
			return false, true
		}
	}
	return true, true
}

// checkReadCommitted is the second half of I3: while p is MIRRORING, the
// read_committed view of each mirrored batch equals that of its source batch
// (else M3, or M5 when the destination does not track the batch's PID).
// A pair is dropped once both sides are decided.
func (o *oracle) checkReadCommitted(p *partition) {
	if p.state != stateMirroring || len(p.pairs) == 0 || p.c.failed {
		return
	}
	src := p.source.part(p.key).lead()
	offs := make([]int64, 0, len(p.pairs))
	for d := range p.pairs {
		offs = append(offs, d)
	}
	slices.Sort(offs)
	for _, d := range offs {
		s := p.pairs[d]
		db, ok1 := batchAt(p.lead(), d)
		sb, ok2 := batchAt(src, s)
		if !ok1 || !ok2 || db.BaseOffset() != d || sb.BaseOffset() != s {
			delete(p.pairs, d) // truncated away on either side
			continue
		}
		dv, dd := readCommitted(p.lead(), db)
		sv, sd := readCommitted(src, sb)
		if !dd || !sd {
			continue
		}
		delete(p.pairs, d)
		if dv == sv {
			continue
		}
		code := CodeM3
		if o.w.opts.Get("has-producer-id") == "stock" && db.ProducerID() < codec.NoProducerID {
			code = CodeM5 // Kafka's pid > -1: the destination never tracked this transaction
		}
		o.report(code, p, fmt.Sprintf("read_committed: %s's batch at offset %d is %s on %s, %s at offset %d on %s",
			readTruth(db).producer, d, visibility(dv), p.c.name, visibility(sv), s, p.source.name))
	}
}

func visibility(v bool) string {
	if v {
		return "delivered"
	}
	return "skipped"
}

// checkLSO is M6 (I3) on a writable partition.
func (o *oracle) checkLSO(p *partition) {
	if p.c.failed {
		return
	}
	lead := p.lead()
	// M6 is checked once the partition is fully replicated (HW = LEO): before
	// that a completed transaction whose marker is not yet below the high
	// watermark legitimately holds the LSO back
	// (ProducerStateManager#onHighWatermarkUpdated).
	if (p.state == stateNone || p.state == stateStopped) && lead.HighWatermark() == lead.LogEndOffset() {
		if lso, hw := lead.LastStableOffset(), lead.HighWatermark(); lso < hw && !o.w.localTxnOpen(p) {
			o.reportPinned(p, fmt.Sprintf("LSO %d pinned below the high watermark %d with no transaction open", lso, hw))
		}
	}
}

// checkMirrorsCaughtUp is I3 on MIRRORING partitions, run when a sync
// converges: a partition whose mirror has caught up along its whole chain
// (chainCaughtUp) has an LSO below its high watermark only while some
// coordinator up its mirror chain (its own cluster's, its source's, the
// source's source's…) holds a transaction open on that partition. Else the
// mirrored end marker did not close what it should have (a rewritten PID, a
// barrier skipped): M6. It is not checked at every step, since a marker not
// fetched yet is no hang.
func (o *oracle) checkMirrorsCaughtUp() {
	for _, cl := range o.w.clusters {
		if cl.failed {
			continue
		}
		for _, p := range cl.parts {
			if p.state != stateMirroring || !o.w.chainCaughtUp(p) {
				continue
			}
			lead := p.lead()
			if lso, hw := lead.LastStableOffset(), lead.HighWatermark(); lso < hw && !o.w.txnOpenUpstream(p) {
				o.reportPinned(p, fmt.Sprintf("LSO %d pinned below the high watermark %d of a caught-up mirror with no transaction open on %s or upstream",
					lso, hw, p.source.name))
			}
		}
	}
}

// reportPinned reports M6 on p, whose leader's LSO detail says is pinned.
// The transaction that pins it is the open one with the lowest first offset
// (the LSO is its first offset); when a truncation removed that
// transaction's acknowledged end marker (truncatedEnds: an election, a
// crash or a failback cut a COMMIT or ABORT the coordinator had completed,
// scenarios/31-failback-truncates-commit.scn,
// 94-failback-truncates-fence-abort.scn), no coordinator will write it again
// and the log, or a mirror downstream that never got the marker, keeps it
// open: the finding says so and carries the fact (Violation.endLost).
func (o *oracle) reportPinned(p *partition, detail string) {
	ref, step, lost := o.pinnedEndLost(p.lead())
	if lost {
		detail += fmt.Sprintf("; the end marker of %s's transaction %d, acknowledged, was truncated away at step %d",
			ref.producer, ref.serial, step)
	}
	if v := o.reportAt(CodeM6, p, o.w.step, detail); v != nil {
		v.endLost = lost
	}
}

// pinnedEndLost names the transaction whose data holds r's LSO, by the
// truth of its first batch, and the step at which a truncation removed its
// acknowledged end marker, if one did.
func (o *oracle) pinnedEndLost(r replica) (txnRef, int, bool) {
	txns := r.OpenTxns()
	if len(txns) == 0 {
		return txnRef{}, 0, false
	}
	b, ok := batchAt(r, txns[0].FirstOffset)
	if !ok || b.IsControl() {
		return txnRef{}, 0, false
	}
	t := readTruth(b)
	ref := txnRef{t.producer, t.txnSerial}
	step, lost := o.truncatedEnds[ref]
	return ref, step, lost
}

// chainCaughtUp reports whether p's mirror has caught up all the way up its
// chain: p has fetched its source up to the source's high watermark, the
// source's high watermark has reached the source's log end, its replicas
// agree on its high watermark, and, when the source partition mirrors in
// turn, the source has caught up with its own source, and so on. A marker
// that a coordinator upstream wrote reaches p only through every hop, and
// only once it is below that hop's high watermark (a mirror fetches
// committed batches only), so a hop that has not fetched yet (a `sync` of
// one cluster), a source whose high watermark a paused follower holds below
// the marker, or a failed cluster on the way leaves p's transaction open
// without a hang.
func (w *world) chainCaughtUp(p *partition) bool {
	for x, hops := p, 0; hops <= len(w.clusters); hops++ {
		if x.source == nil || x.source.failed {
			return false
		}
		lead, src := x.lead(), x.source.part(p.key)
		if x.fetchPos() < src.lead().HighWatermark() || src.lead().HighWatermark() != src.lead().LogEndOffset() ||
			lead.HighWatermark() != lead.LogEndOffset() {
			return false
		}
		if src.state != stateMirroring {
			return true
		}
		x = src
	}
	return false // a mirror loop: never caught up
}

// txnOpenUpstream reports whether a coordinator of p's cluster or of any
// cluster up p's mirror chain holds a transaction open on p's key.
func (w *world) txnOpenUpstream(p *partition) bool {
	for x, hops := p, 0; x != nil && hops <= len(w.clusters); hops++ {
		if w.localTxnOpen(x) {
			return true
		}
		if x.source == nil || (x.state != stateMirroring && x.state != stateStopping) {
			break
		}
		x = x.source.part(p.key)
	}
	return false
}

// localTxnOpen reports whether a transaction of p's cluster's coordinator
// is open on p: open at the coordinator, or ended by a marker the
// coordinator still owes p (owedMarker). A transaction whose markers the
// coordinator cancelled (cancelMarkers) is not: no marker will close it
// before the coordinator reloads it, so the LSO it pins is a hang (M6).
func (w *world) localTxnOpen(p *partition) bool {
	if w.owedMarker(p) {
		return true
	}
	for _, t := range p.c.txn.order {
		if t.open && t.has(p) && (t.pending == nil || !t.pending.cancelled) {
			return true
		}
	}
	return false
}

// committed is told of every COMMIT marker the coordinator wrote for the
// client instance's transaction serial: the client was told "committed".
func (o *oracle) committed(p *partition, instance string, serial int) {
	o.committedAfterLoss(p, instance, serial)
	o.commits = append(o.commits, commitCheck{p: p, instance: instance, serial: serial, step: o.w.step})
}

// commitCheck is one COMMIT marker the coordinator wrote on p, for the
// instance's transaction serial, at step.
type commitCheck struct {
	p        *partition
	instance string
	serial   int
	step     int
}

// checkCommitsDelivered is M7: the data of a transaction whose COMMIT the
// coordinator wrote (the client was told "committed") must be delivered to
// a read_committed consumer of that partition. An ABORT already in the log
// (STOPPING's, mirrored back by a failback) covers the data, and the
// COMMIT that follows it closes nothing (an equal-epoch COMMIT with no open
// transaction is accepted under TV0 and TV1): every read_committed consumer
// skips what the client was told is committed. Checked once each batch of
// the transaction held in the partition's log is decided (below the LSO);
// data truncated away is RPO (committedAfterLoss).
func (o *oracle) checkCommitsDelivered() {
	kept := o.commits[:0]
	for _, c := range o.commits {
		if c.p.c.failed {
			kept = append(kept, c)
			continue
		}
		lead := c.p.lead()
		pending, skipped := false, int64(-1)
		for _, w := range o.txnData[txnKey{c.p, c.instance, c.serial}] {
			b, ok := batchAt(lead, w.offset)
			if !ok || b.BaseOffset() != w.offset || o.identify(b) != w.id {
				continue
			}
			visible, decided := readCommitted(lead, b)
			switch {
			case !decided:
				pending = true
			case !visible && skipped < 0:
				skipped = w.offset
			}
		}
		if skipped >= 0 {
			o.reportAt(CodeM7, c.p, c.step, fmt.Sprintf("COMMIT of %s's transaction %d: read_committed skips its data at offset %d, which an ABORT closed before it",
				c.instance, c.serial, skipped))
			continue
		}
		if pending {
			kept = append(kept, c)
		}
	}
	o.commits = kept
}
