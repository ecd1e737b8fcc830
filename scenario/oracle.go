package scenario

import (
	"fmt"
	"math"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
)

// Violation is one oracle finding: each (code, cluster, partition) is
// reported once, at the first step it appeared; ERR once per error kind.
type Violation struct {
	Code      string `json:"code"`
	Step      int    `json:"step"`
	Cluster   string `json:"cluster"`
	Partition string `json:"partition"`
	Detail    string `json:"detail"`
}

// ClientError is an error a client saw (every one, in step order).
type ClientError struct {
	Step     int    `json:"step"`
	Producer string `json:"producer"`
	Error    string `json:"error"`
}

// oracle checks the invariants of docs/scenarios.md after every step. It reads
// the truth from record headers and marker timestamps (doc.go) and the
// broker's state through the replica interface; it never decides what the
// broker should have accepted except through those invariants.
type oracle struct {
	w            *world
	seen         map[string]bool
	violations   []Violation
	clientErrors []ClientError
	shadows      map[replica]*shadow
}

// shadow is the oracle's view of one replica's log: which true producer
// each producer-state entry has taken batches from, and the transactions a
// read_committed consumer sees open, per stored PID.
type shadow struct {
	scanned     int64 // next offset to read
	owners      map[int64]owner
	lastBarrier int64 // offset of the last barrier, -1 none
	open        map[int64][]txnRef
	unseen      map[int64]int64 // PID → offset of a data batch whose entry must exist after the scan
}

type owner struct {
	producer string
	epoch    int16
	lastSeq  int32
}

type txnRef struct {
	producer string
	serial   int
}

func newOracle(w *world) *oracle {
	return &oracle{w: w, seen: map[string]bool{}, shadows: map[replica]*shadow{}}
}

func newShadow() *shadow {
	return &shadow{owners: map[int64]owner{}, lastBarrier: -1,
		open: map[int64][]txnRef{}, unseen: map[int64]int64{}}
}

func (o *oracle) shadowOf(r replica) *shadow {
	s := o.shadows[r]
	if s == nil {
		s = newShadow()
		o.shadows[r] = s
	}
	return s
}

// report records code for (cluster, partition) unless already reported.
func (o *oracle) report(code string, p *partition, detail string) {
	o.reportKey(code, code+"|"+p.c.name+"|"+p.key, p.c.name, p.key, detail)
}

func (o *oracle) reportKey(code, key, cluster, part, detail string) {
	if o.seen[key] {
		return
	}
	o.seen[key] = true
	o.violations = append(o.violations, Violation{Code: code, Step: o.w.step, Cluster: cluster, Partition: part,
		Detail: detail})
}

// clientError records a visible client error; the first of each kind is an
// ERR violation.
func (o *oracle) clientError(producer string, cl *cluster, p *partition, name string) {
	o.clientErrors = append(o.clientErrors, ClientError{Step: o.w.step, Producer: producer, Error: name})
	part := ""
	if p != nil {
		part = p.key
	}
	o.reportKey("ERR", "ERR|"+name, cl.name, part, producer+": "+name)
}

// batchAt returns the batch of r's log that holds offset.
func batchAt(r replica, offset int64) (codec.Batch, bool) {
	data, err := r.Read(offset, 1)
	if err != nil {
		return nil, false
	}
	var found codec.Batch
	eachBatch(data, func(b codec.Batch) {
		if found == nil && b.BaseOffset() <= offset && offset <= b.LastOffset() {
			found = b
		}
	})
	return found, found != nil
}

// checkAck is I1: an ack below the log end offset seen before the send must
// be a genuine retry of the same true producer's batch (else M4).
func (o *oracle) checkAck(pr *client, p *partition, d dataBatch, res appendResult, leo int64) {
	if res.FirstOffset >= leo {
		return
	}
	b, ok := batchAt(p.lead(), res.FirstOffset)
	if ok {
		t := readTruth(b)
		if t.producer == pr.identity && b.BaseSequence() == d.seq && b.ProducerEpoch() == d.epoch {
			return
		}
		o.report("M4", p, fmt.Sprintf("%s PID %d epoch %d seq %d acked at offsets %d..%d, below LEO %d, which hold %q's batch (PID %d epoch %d seq %d): nothing appended",
			pr.name, d.pid, d.epoch, d.seq, res.FirstOffset, res.LastOffset, leo, t.producer, b.ProducerID(),
			b.ProducerEpoch(), b.BaseSequence()))
		return
	}
	if id, ok := p.seenIDs[res.FirstOffset]; ok && res.FirstOffset < p.lead().LogStartOffset() {
		// Retention deleted the batch: what the oracle read there decides.
		if id == (batchID{pr.identity, d.seq, d.epoch}) {
			return
		}
		o.report("M4", p, fmt.Sprintf("%s PID %d epoch %d seq %d acked at offsets %d..%d, below the log start, where retention deleted %q's batch (epoch %d seq %d): nothing appended",
			pr.name, d.pid, d.epoch, d.seq, res.FirstOffset, res.LastOffset, id.producer, id.epoch, id.seq))
		return
	}
	o.report("M4", p, fmt.Sprintf("%s acked at offset %d below LEO %d with no batch there", pr.name, res.FirstOffset, leo))
}

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
		case !known:
			return 0, ""
		case mk.abort:
			return 0, "ABORT"
		}
		return 0, "COMMIT"
	}
	if b.IsTransactional() {
		return 0, ""
	}
	return int(b.RecordsCount()), ""
}

// ackedLost is RPO (scenarios' rule: any acknowledged write a truncation
// removes, whichever step truncates): before is the tail of p's log taken
// before a step that may truncate (tailOf); every batch of it that r no
// longer holds byte for byte at its offset is removed.
func (o *oracle) ackedLost(p *partition, r replica, before []codec.Batch, why string) {
	records, batches, commits, aborts := 0, 0, 0, 0
	first := int64(-1)
	for _, b := range before {
		if now, ok := batchAt(r, b.BaseOffset()); ok && string(now) == string(b) {
			continue
		}
		n, marker := o.acked(b)
		if n == 0 && marker == "" {
			continue
		}
		if first < 0 {
			first = b.BaseOffset()
		}
		switch marker {
		case "COMMIT":
			commits++
		case "ABORT":
			aborts++
		default:
			records += n
			batches++
		}
	}
	if first >= 0 {
		o.report("RPO", p, fmt.Sprintf("%s removes %d acknowledged records in %d batches, %d COMMIT and %d ABORT markers at offsets >= %d",
			why, records, batches, commits, aborts, first))
	}
}

// rescan makes the oracle read every replica of p from offset 0 again
// (after a truncation, an election or a restart). Findings already reported
// stay reported once.
func (o *oracle) rescan(p *partition) {
	for _, r := range p.reps {
		o.shadows[r] = newShadow()
	}
}

// describePID decodes a bit-field PID (pid.Unbitfield) for a finding's detail.
func describePID(strategy string, p int64) string {
	if strategy != "bitfield" {
		return ""
	}
	if region, low, ok := pid.Unbitfield(p); ok {
		return fmt.Sprintf(" (region %#08x, source PID low bits %d)", region, low)
	}
	return ""
}

func rewriting(strategy string) bool {
	return strategy == "negate" || strategy == "negate-skip" || strategy == "bitfield"
}

// mirrored records the PID mapping of one mirrored chunk (I5) and checks
// that mirrored and local PIDs never meet (I6), under rewriting strategies.
// I5 keys on the true origin of each PID, not on the cluster it was fetched
// from: A's PID arriving through B (A⇒B⇒C) and straight from A is one
// producer.
func (o *oracle) mirrored(p *partition, src []byte, first int64) {
	from, srcPart := p.source.name, p.source.part(p.key)
	var dst []codec.Batch
	for off := first; off < p.lead().LogEndOffset(); {
		b, ok := batchAt(p.lead(), off)
		if !ok {
			break
		}
		dst = append(dst, b)
		off = b.NextOffset()
	}
	i := 0
	eachBatch(src, func(b codec.Batch) {
		if i >= len(dst) {
			return
		}
		db := dst[i]
		i++
		if !b.IsControl() {
			p.pairs[db.BaseOffset()] = b.BaseOffset()
		}
		if b.IsControl() || b.ProducerID() == codec.NoProducerID {
			return
		}
		// The true origin of the batch: the cluster and PID it was first
		// written with, followed back through the source's own origins
		// (a PID the source itself mirrored keeps its producer's origin).
		sp, dp := b.ProducerID(), db.ProducerID()
		origin, ok := srcPart.origins[sp]
		if !ok {
			origin = pidOrigin{from, sp}
		}
		p.origins[dp] = origin
		if !rewriting(o.w.strategy) {
			return
		}
		if dp == codec.NoProducerID {
			o.report("I5", p, fmt.Sprintf("PID %d of %s maps to -1", sp, from))
		}
		if prev, ok := p.mirroredPIDs[dp]; ok && prev != origin {
			o.report("I5", p, fmt.Sprintf("PID %d of %s and PID %d of %s both map to %d%s", prev.pid, prev.cluster,
				origin.pid, origin.cluster, dp, describePID(o.w.strategy, dp)))
		}
		p.mirroredPIDs[dp] = origin
	})
}

// afterStep runs the checks that hold after every step.
func (o *oracle) afterStep() {
	for _, cl := range o.w.clusters {
		for _, p := range cl.parts {
			for _, r := range p.reps {
				o.scan(p, r)
			}
			o.checkPartition(p)
			o.checkReadCommitted(p)
		}
	}
}

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
		code := "M3"
		if o.w.opts.Get("has-producer-id") == "stock" && db.ProducerID() < codec.NoProducerID {
			code = "M5" // Kafka's pid > -1: the destination never tracked this transaction
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
			o.scanBatch(p, s, b)
			if p.c.retainSegments > 0 && !b.IsControl() {
				if p.seenIDs == nil {
					p.seenIDs = map[int64]batchID{}
				}
				p.seenIDs[b.BaseOffset()] = batchID{readTruth(b).producer, b.BaseSequence(), b.ProducerEpoch()}
			}
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
					o.report("I4", p, fmt.Sprintf("entry PID %d keeps a batch at offset %d below the barrier at %d",
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
			o.report("M5", p, fmt.Sprintf("PID %d (batch at offset %d) has no producer-state entry: idempotence and transactions are not tracked",
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
		o.report("M2", p, detail)
	}
	if m1 {
		o.report("M1", p, detail)
	}
	if !m1 && !m2 {
		o.report("LAT", p, detail)
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

func (o *oracle) scanBatch(p *partition, s *shadow, b codec.Batch) {
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
						o.report("M3", p, fmt.Sprintf("%s marker of %s (PID %d, offset %d) closes the open transaction of %s",
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

// checkPartition runs the per-partition checks: FAIL, M6 (I3) and I6.
func (o *oracle) checkPartition(p *partition) {
	if p.c.failed {
		return
	}
	lead := p.lead()
	if lead.State() == stateFailed {
		p.state = stateFailed
		o.report("FAIL", p, "mirror partition moved to FAILED")
	}
	// M6 is checked once the partition is fully replicated (HW = LEO): before
	// that a completed transaction whose marker is not yet below the high
	// watermark legitimately holds the LSO back
	// (ProducerStateManager#onHighWatermarkUpdated).
	if (p.state == stateNone || p.state == stateStopped) && lead.HighWatermark() == lead.LogEndOffset() {
		if lso, hw := lead.LastStableOffset(), lead.HighWatermark(); lso < hw && !o.w.localTxnOpen(p) {
			o.report("M6", p, fmt.Sprintf("LSO %d pinned below the high watermark %d with no transaction open", lso, hw))
		}
	}
	if rewriting(o.w.strategy) {
		var meet []int64
		for pid := range p.localPIDs {
			if _, ok := p.mirroredPIDs[pid]; ok {
				meet = append(meet, pid)
			}
		}
		if len(meet) > 0 {
			slices.Sort(meet)
			m := p.mirroredPIDs[meet[0]]
			o.report("I6", p, fmt.Sprintf("PID %d is both a local producer's and the mapping of PID %d of %s",
				meet[0], m.pid, m.cluster))
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
				o.report("M6", p, fmt.Sprintf("LSO %d pinned below the high watermark %d of a caught-up mirror with no transaction open on %s or upstream",
					lso, hw, p.source.name))
			}
		}
	}
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
// is open on p.
func (w *world) localTxnOpen(p *partition) bool {
	for _, t := range p.c.txn.order {
		if t.open && t.has(p) {
			return true
		}
	}
	return false
}

// checkReplicasAgree is I2: after sync every replica that has caught up
// with its leader's log end holds the same producer state as the leader: every entry whole (epoch, coordinator epoch,
// last timestamp, open transaction, the duplicate window batch by batch) and
// the same set of open transactions.
func (o *oracle) checkReplicasAgree() {
	for _, cl := range o.w.clusters {
		if cl.failed {
			continue
		}
		for _, p := range cl.parts {
			lead := p.lead().Producers()
			want := summarize(lead)
			wantTxns := fmt.Sprint(p.lead().OpenTxns())
			for i, r := range p.reps {
				if i == p.leader || r.LogEndOffset() != p.lead().LogEndOffset() {
					continue // a replica held back (pause) has not caught up
				}
				es := r.Producers()
				if got := summarize(es); got != want || !windowsAgree(lead, es) {
					o.report("I2", p, fmt.Sprintf("replica %d producer state %s (windows %s) differs from the leader's %s (windows %s)",
						i, got, windows(es), want, windows(lead)))
				}
				if got := fmt.Sprint(r.OpenTxns()); got != wantTxns {
					o.report("I2", p, fmt.Sprintf("replica %d open transactions %s differ from the leader's %s", i, got, wantTxns))
				}
			}
		}
	}
}

// windowsAgree compares the duplicate windows of two replicas' entries (both
// sorted by summarize, with the same PIDs): the shorter must be the newest
// batches of the longer. A producer snapshot keeps only each entry's newest
// batch, and one timestamp per entry, the entry's last (ProducerStateManager's
// snapshot format: readSnapshot builds that batch's BatchMetadata with the
// entry's timestamp), so a replica that loaded one holds a suffix of the
// window of a replica that kept applying batches whose oldest batch is the
// snapshot's: its timestamp is the entry's last timestamp when the snapshot
// was taken (an end marker's, after a transaction ended, on the
// coordinator's or the broker's clock, not ordered with the batches') rather
// than the batch's own. Nothing the entries hold tells what that timestamp
// was, so it is not compared: once newer batches follow it, and even while it
// is the window's only batch, since an end marker after the snapshot moves
// the entry's last timestamp without adding a batch. Any other difference is
// divergence.
func windowsAgree(a, b []producerEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !suffixOf(a[i].Window, b[i]) && !suffixOf(b[i].Window, a[i]) {
			return false
		}
	}
	return true
}

// suffixOf reports whether e's window is the newest batches of long, its
// oldest batch possibly a snapshot's, whose timestamp then differs.
func suffixOf(long []cachedBatch, e producerEntry) bool {
	short := e.Window
	if len(short) > len(long) {
		return false
	}
	tail := long[len(long)-len(short):]
	if slices.Equal(tail, short) {
		return true
	}
	if !slices.Equal(tail[1:], short[1:]) {
		return false
	}
	got := short[0]
	got.Timestamp = tail[0].Timestamp
	return got == tail[0]
}

func windows(es []producerEntry) string {
	s := "["
	for i, e := range es {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%v", e.PID, e.Window)
	}
	return s + "]"
}

func summarize(es []producerEntry) string {
	slices.SortFunc(es, func(a, b producerEntry) int {
		switch {
		case a.PID < b.PID:
			return -1
		case a.PID > b.PID:
			return 1
		}
		return 0
	})
	s := "["
	for i, e := range es {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d/e%d/s%d/t%d/c%d/ts%d", e.PID, e.Epoch, e.LastSeq, e.TxnFirstOffset,
			e.CoordinatorEpoch, e.LastTimestamp)
	}
	return s + "]"
}
