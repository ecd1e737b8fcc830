package scenario

// Mirroring and replication: mirror and replica fetchers, STOPPING, restarts
// and leader elections.

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

// mirror makes dest's partitions (of topic, or all) start MIRRORING from src
// (a partition already MIRRORING from another cluster re-parents to src).
// Failback (src stopped mirroring from dest): dest truncates to the
// divergence point, the dest offset where src's mirroring left off, and
// fetches src from the offset src had reached then. Otherwise dest fetches
// src from its start and appends after what it holds (fan-in). align
// changes that: "divergence" truncates dest to the divergence point and
// fetches src from there, offset-aligned (divergence); "scratch" truncates
// dest to offset 0 and fetches src from its start (failback from scratch).
func (w *world) mirror(dest, src *cluster, topic, align string) error {
	for _, p := range dest.parts {
		if topic != "" && p.topic != topic {
			continue
		}
		switch {
		case p.state == stateMirroring && p.source == src:
			continue // already mirroring src
		case p.state == stateStopping || p.state == stateFailed:
			return fmt.Errorf("%w: %s %s is %s: stop it before it mirrors again", ErrScenario, dest.name, p.key, p.state)
		}
		if closesLoop(dest, src, p.key, len(w.clusters)) {
			w.mirrorLoop(p, src)
			continue
		}
		p.srcPos = 0
		sp := src.part(p.key)
		div, why := int64(-1), ""
		switch {
		case align == "scratch":
			div, why = 0, "failback from scratch"
		case sp.stoppedFrom == dest:
			div, p.srcPos, why = sp.stopSrcPos, sp.mirroredEnd, "failback truncation to the divergence point"
			// Either side may have lost part of their shared history since
			// src began to stop (an unclean restart cut its tail, whatever
			// it wrote after): dest below src's stop position, src below
			// its own log end then. The history they still share is
			// offset-aligned, so both ends move back by the larger loss:
			// dest truncates there and fetches src's copy of what it lost
			// back, offset for offset. The stop positions alone would be
			// inside later batches of either log, or past its end.
			lost := max(int64(0), div-p.peerFloor.at(div), sp.mirroredEnd-sp.ownFloor.at(sp.mirroredEnd))
			div, p.srcPos = max(0, div-lost), max(0, p.srcPos-lost)
		case align == "" && sp.stoppedFrom != nil && w.opts.Get("failback-position") == "any":
			// The prototype before its fix: a last mirrored position taken
			// from a source that mirrored a third cluster, whose offsets are
			// not this log's.
			div, p.srcPos, why = sp.stopSrcPos, sp.mirroredEnd, "failback truncation to a third cluster's position"
		case align == "divergence":
			div = divergenceFrom(p, sp)
			p.srcPos, why = div, "truncation to the divergence point"
		}
		if div >= 0 && div < p.lead().LogEndOffset() {
			before := tailOf(p.lead(), div)
			for _, r := range p.reps {
				if err := r.Truncate(div); err != nil {
					return fmt.Errorf("truncate %s %s: %w", dest.name, p.key, err)
				}
			}
			w.or.ackedLost(p, p.lead(), before, why)
			w.or.rescan(p)
		}
		for _, r := range p.reps {
			if err := r.StartMirroring(); err != nil {
				return fmt.Errorf("start mirroring %s %s: %w", dest.name, p.key, err)
			}
		}
		p.state, p.source, p.stoppedFrom, p.stopTried = stateMirroring, src, nil, false
		p.pairs = map[int64]int64{}
		p.advanceHW()
	}
	return nil
}

// closesLoop reports whether dest mirroring src would close a mirror loop
// on partition key: src mirrors (or is stopping from) dest, directly or
// through a chain.
func closesLoop(dest, src *cluster, key string, clusters int) bool {
	for x, hops := src.part(key), 0; x.source != nil && hops <= clusters; x, hops = x.source.part(key), hops+1 {
		if x.state != stateMirroring && x.state != stateStopping {
			return false
		}
		if x.source == dest {
			return true
		}
	}
	return false
}

// mirrorLoop is a mirror of p from src that would close a loop: under
// mirror-loop=fail (the prototype) p moves to FAILED for good, read-only
// (FAIL); under refuse the link is not made and p keeps its state.
func (w *world) mirrorLoop(p *partition, src *cluster) {
	if w.opts.Get("mirror-loop") == "refuse" {
		return
	}
	for _, r := range p.reps {
		r.Fail()
	}
	p.state, p.source = stateFailed, nil
	w.or.report(CodeFAIL, p, fmt.Sprintf("mirror from %s closes a mirror loop: partition FAILED", src.name))
}

// divergenceFrom is where p's log and src's stop holding the same history,
// for a re-parent to src: when both mirrored (or mirror) one cluster X from
// its start, their offsets are X's offsets (mirrored batches take the next
// offsets one for one), so they agree up to the shorter of p's log and the
// part of src's log mirrored from X (all of it while src still mirrors X;
// up to where its mirroring left off once it stopped). Two partitions with
// no such common source have nothing in common: 0.
func divergenceFrom(p, src *partition) int64 {
	if p.source == nil {
		return 0
	}
	switch {
	case src.state == stateMirroring && src.source == p.source:
		return min(p.lead().LogEndOffset(), src.lead().LogEndOffset())
	case src.stoppedFrom == p.source:
		return min(p.lead().LogEndOffset(), src.mirroredEnd)
	}
	return 0
}

// maxSyncRounds bounds the fetch loop of one sync (each round moves at least
// one batch).
const maxSyncRounds = 1 << 20

// sync runs replica fetchers everywhere and the mirror fetchers of dest (all
// when nil) until nothing moves.
func (w *world) sync(dest *cluster) error {
	for round := 0; round < maxSyncRounds; round++ {
		moved := false
		for _, cl := range w.clusters {
			if cl.failed {
				continue
			}
			for _, p := range cl.parts {
				m, err := w.replicaFetch(p)
				if err != nil {
					return err
				}
				moved = moved || m
				if (dest == nil || dest == cl) && p.state == stateMirroring && !p.source.failed {
					m, err := w.mirrorFetch(p)
					if err != nil {
						return err
					}
					moved = moved || m
				}
			}
		}
		if !moved {
			w.or.checkReplicasAgree()
			w.or.checkMirrorsCaughtUp()
			w.or.settleLosses(dest, dest == nil, false)
			return nil
		}
	}
	return fmt.Errorf("sync did not converge in %d rounds", maxSyncRounds)
}

// batchesFrom returns every batch of r's log from offset on (test-sized logs).
func batchesFrom(r replica, offset int64) []codec.Batch {
	var out []codec.Batch
	offset = max(offset, r.LogStartOffset())
	for off := offset; off < r.LogEndOffset(); {
		chunk, err := r.Read(off, 1<<20)
		if err != nil || len(chunk) == 0 {
			break
		}
		next := off
		eachBatch(chunk, func(b codec.Batch) {
			if b.LastOffset() >= off {
				out = append(out, b)
				next = b.NextOffset()
			}
		})
		if next <= off {
			break
		}
		off = next
	}
	return out
}

// divergence is the first offset at which follower's log differs from
// leader's (Kafka finds it through leader epochs; the simulator compares the
// bytes), or, when follower's batches are a prefix of leader's, the lower of
// the two log end offsets. A log end can lie beyond the last batch (a
// truncation inside a batch removes the batch and sets the end to the
// truncation offset, as LocalLog#truncateTo does), and a reopen puts it back
// after the last batch, so a follower can hold every batch of a leader that
// reopened and still end beyond it; Kafka's follower truncates to the
// leader's end offset for its epoch (OffsetsForLeaderEpoch) in that case,
// so that it never ends beyond its leader.
func divergence(leader, follower replica) int64 {
	// From where both logs begin: retention advances each replica's log
	// start at its own rolls.
	from := max(leader.LogStartOffset(), follower.LogStartOffset())
	lb, fb := batchesFrom(leader, from), batchesFrom(follower, from)
	for i, b := range fb {
		if i >= len(lb) || string(lb[i]) != string(b) {
			return b.BaseOffset()
		}
	}
	return min(follower.LogEndOffset(), leader.LogEndOffset())
}

// reconcileFollowers truncates every follower to its divergence point from
// the leader, after the leader's log was cut or rewritten (STOPPING's
// truncate variant, a leader change).
func (w *world) reconcileFollowers(p *partition) error {
	for i, r := range p.reps {
		if i == p.leader {
			continue
		}
		if d := divergence(p.lead(), r); d < r.LogEndOffset() {
			if err := r.Truncate(d); err != nil {
				return fmt.Errorf("truncate follower %d of %s %s: %w", i, p.c.name, p.key, err)
			}
		}
	}
	return nil
}

// replicaFetch moves one fetch chunk to each follower that is behind.
func (w *world) replicaFetch(p *partition) (bool, error) {
	moved := false
	lead := p.lead()
	for i, r := range p.reps {
		if i == p.leader || p.paused[i] || r.LogEndOffset() >= lead.LogEndOffset() {
			continue
		}
		if r.LogEndOffset() < lead.LogStartOffset() {
			return moved, fmt.Errorf("%w: replica %d of %s %s ends at %d, below its leader's log start %d (retention)",
				ErrScenario, i, p.c.name, p.key, r.LogEndOffset(), lead.LogStartOffset())
		}
		data, err := lead.Read(r.LogEndOffset(), p.c.fetchBytes)
		if err != nil || len(data) == 0 {
			return moved, fmt.Errorf("replica fetch %s %s: %v", p.c.name, p.key, err)
		}
		if _, err := r.AppendReplica(data); err != nil {
			return moved, fmt.Errorf("replica append %s %s: %w", p.c.name, p.key, err)
		}
		moved = true
	}
	before := lead.HighWatermark()
	p.advanceHW()
	return moved || lead.HighWatermark() != before, nil
}

// mirrorFetch moves one chunk (at most the destination's fetch-bytes, whole
// batches below the source's high watermark) from the source leader.
func (w *world) mirrorFetch(p *partition) (bool, error) {
	sp := p.source.part(p.key)
	src := sp.lead()
	from, hw := p.srcPos, src.HighWatermark()
	if from >= hw {
		return false, nil
	}
	if from < src.LogStartOffset() {
		// Kafka's fetcher would reset to the log start; the simulator keeps
		// the mirror offset-aligned with its source and does not.
		return false, fmt.Errorf("%w: mirror fetch %s %s from %s at %d: below the source's log start %d (retention)",
			ErrScenario, p.c.name, p.key, p.source.name, from, src.LogStartOffset())
	}
	data, err := src.Read(from, p.c.fetchBytes)
	if err != nil {
		return false, fmt.Errorf("mirror fetch %s %s from %s: %w", p.c.name, p.key, p.source.name, err)
	}
	n, done := 0, false
	eachBatch(data, func(b codec.Batch) {
		if done || b.LastOffset() >= hw {
			done = true
			return
		}
		n += b.Size()
	})
	data = data[:n]
	if len(data) == 0 {
		return false, nil
	}
	res, err := p.lead().AppendMirrored(data, p.source.id)
	if err != nil && p.lead().FailedForGood() {
		// FAILED for good (an inconsistent source cluster id): on every
		// replica, so that no election revives it.
		for _, r := range p.reps {
			r.Fail()
		}
	}
	if err != nil {
		// No error of a mirrored append ends the run: the broker refused
		// the chunk. A refusal that left the partition MIRRORING is not
		// retriable either (the same bytes would be refused again), so the
		// mirror fetcher gives the partition up: FAILED, as the broker does
		// itself for a batch it cannot map.
		p.state = stateFailed
		w.or.report(CodeFAIL, p, fmt.Sprintf("mirror partition FAILED at source offset %d: %s", from, errorName(err)))
		return false, nil
	}
	eachBatch(data, func(b codec.Batch) { p.srcPos = b.NextOffset() })
	w.or.mirrored(p, data, res.FirstOffset)
	p.advanceHW()
	return true, nil
}

// stop runs one STOPPING attempt on every mirrored partition of dest (of
// topic, or all).
func (w *world) stop(dest *cluster, topic, variant string) error {
	if dest.failed {
		return nil
	}
	if err := w.retryMissing(dest); err != nil {
		return err
	}
	stopped := 0 // partitions this stop made STOPPED
	for _, p := range dest.parts {
		if topic != "" && p.topic != topic {
			continue
		}
		if p.state != stateMirroring && p.state != stateStopping && p.state != stateFailed {
			continue
		}
		if !p.stopTried { // the first attempt: remember where mirroring left off
			p.mirroredEnd, p.stopSrcPos, p.stoppedFrom = p.lead().LogEndOffset(), p.srcPos, p.source
			p.stopTried = true
			p.ownFloor.reset(p.lead().LogEndOffset())
			if p.stoppedFrom != nil {
				q := p.stoppedFrom.part(p.key)
				q.peerFloor.reset(q.lead().LogEndOffset())
			}
		}
		req := w.stopRequest(variant)
		if w.strategy == "allocator" {
			req.Promote = w.allocatorPromote(dest)
		}
		crash := false
		for i := range dest.faults {
			if dest.faults[i].times > 0 {
				req.FailAt, crash = dest.faults[i].at, dest.faults[i].crash
				dest.faults[i].times--
				break
			}
		}
		lso := p.lead().LastStableOffset()
		before := tailOf(p.lead(), lso)
		err := p.lead().Stop(req)
		if err != nil && crash {
			// The broker crashes where the step failed: the leader's
			// replica restarts uncleanly, still STOPPING (read-only); the
			// next stop retries.
			before = tailOf(p.lead(), 0)
			if cerr := p.lead().Crash(); cerr != nil {
				return fmt.Errorf("crash %s %s: %w", dest.name, p.key, cerr)
			}
		}
		w.or.ackedLost(p, p.lead(), before, "STOPPING ("+variant+" variant)")
		p.state = p.lead().State()
		if err != nil && p.state == stateFailed {
			// A terminal STOPPING refusal (the allocator cannot advance), or
			// a failed step under stop-errors=failed (retried by the next
			// stop).
			w.or.report(CodeFAIL, p, "mirror partition FAILED at STOPPING: "+err.Error())
		}
		if variant == "truncate" && lso < p.mirroredEnd {
			// The truncate variant cut the mirrored prefix back to the LSO:
			// that is where the two sides now diverge.
			p.stopSrcPos = max(0, p.stopSrcPos-(p.mirroredEnd-lso))
			p.mirroredEnd = lso
		}
		if err == nil && p.state != stateStopped {
			return fmt.Errorf("stop %s %s: state %s after success", dest.name, p.key, p.state)
		}
		if p.state == stateStopped {
			p.source, p.stopTried = nil, false
			p.stopEnd = p.lead().LogEndOffset()
			if stopped++; stopped > 1 && w.strategy == "barrier" && w.opts.Get("stop-completion") == "first" {
				// The stop's one completion is the first partition's: this
				// one is reported missing and retried.
				p.missingStop = true
			}
		}
		if err := w.reconcileFollowers(p); err != nil {
			return err
		}
		p.advanceHW()
		w.or.rescan(p)
	}
	return nil
}

// restart restarts every replica of cl. A clean restart closes each replica
// (sync, snapshot at the log end) and reopens it: recovery replays nothing.
// An unclean one crashes them (replica.Crash): each keeps what its log had
// synced, and a torn part of the rest, and recovers from an older snapshot
// or the log start; then the
// followers truncate to their divergence from the leader, what was lost of
// acknowledged writes is RPO, and a mirror fetcher resumes after what its
// log still holds.
func (w *world) restart(cl *cluster, unclean bool) error {
	for _, p := range cl.parts {
		if !unclean {
			for _, r := range p.reps {
				if err := r.Restart(); err != nil {
					return fmt.Errorf("restart %s %s: %w", cl.name, p.key, err)
				}
			}
			w.or.rescan(p)
			continue
		}
		before := tailOf(p.lead(), 0)
		leo := p.lead().LogEndOffset()
		for _, r := range p.reps {
			if err := r.Crash(); err != nil {
				return fmt.Errorf("crash %s %s: %w", cl.name, p.key, err)
			}
		}
		if err := w.reconcileFollowers(p); err != nil {
			return err
		}
		w.or.ackedLost(p, p.lead(), before, "unclean restart")
		if lost := leo - p.lead().LogEndOffset(); lost > 0 && p.state == stateMirroring {
			// Mirrored batches take the next offsets of this log, one for
			// one with the source's: the fetcher goes back as far.
			p.srcPos = max(0, p.srcPos-lost)
		}
		if p.state == stateStopped && p.lead().LogEndOffset() < p.stopEnd {
			// The crash took part of the STOPPING output (closing markers,
			// barrier): as after an election, the partition must not be
			// writable without it, so STOPPING runs again.
			if err := w.restop(p); err != nil {
				return err
			}
		}
		p.advanceHW()
		w.or.rescan(p)
	}
	return nil
}

// retryMissing is the retry of a multi-partition stop under
// stop-completion=first: every partition of cl that the last stop reported
// missing, although STOPPED (writable) since, gets its barrier once more,
// a COORDINATOR append after whatever local producers wrote meanwhile.
func (w *world) retryMissing(cl *cluster) error {
	for _, p := range cl.parts {
		if !p.missingStop {
			continue
		}
		p.missingStop = false
		if p.state != stateStopped {
			continue
		}
		lead := p.lead()
		var b []byte
		if w.opts.Get("barrier-source") == "off" {
			b = codec.AppendBarrierNoSource(nil, p.leaderEpoch, epochMillis)
		} else {
			src := ""
			if p.stoppedFrom != nil {
				src = pid.FormatClusterID(p.stoppedFrom.id)
			}
			b = codec.AppendBarrier(nil, p.leaderEpoch, src, epochMillis)
		}
		if _, err := lead.AppendCoordinator(b, psm.TV0); err != nil { // a barrier states no transaction version
			return fmt.Errorf("second barrier %s %s: %w", cl.name, p.key, err)
		}
		p.stopEnd = lead.LogEndOffset()
		p.advanceHW()
		w.or.rescan(p)
	}
	return nil
}

// stopRequest is a STOPPING attempt with the run's hazard switches.
func (w *world) stopRequest(variant string) stopRequest {
	req := stopRequest{Variant: variant, IgnoreMarkerFailure: w.opts.Get("hazard-r2") == "on",
		UnknownSource: w.opts.Get("unknown-source"), StepErrors: w.opts.Get("stop-errors"),
		BarrierNoSource: w.opts.Get("barrier-source") == "off", HangWhenEmpty: w.opts.Get("empty-stop") == "hang",
		AbortMarker: w.opts.Get("stop-abort-marker"), TxnVersion: txnVersion(w.opts)}
	if w.strategy == "allocator" {
		// Redpanda's promotion: a failed step leaves the partition
		// read-only and the next stop retries, and an empty partition
		// stops (stop-errors and empty-stop are the prototype's).
		req.StepErrors, req.HangWhenEmpty = "retry", false
	}
	return req
}

// restop reopens p's leader as MIRRORING and runs STOPPING on it again: a
// STOPPED partition whose leader lacks part of the STOPPING output.
func (w *world) restop(p *partition) error {
	lead := p.lead()
	if err := lead.BecomeLeader(p.leaderEpoch, stateMirroring); err != nil {
		return err
	}
	req := w.stopRequest(w.opts.Get("stop-variant"))
	if w.strategy == "allocator" {
		req.Promote = w.allocatorPromote(p.c)
	}
	if err := lead.Stop(req); err != nil {
		p.state = lead.State()
	} else {
		p.stopEnd = lead.LogEndOffset()
	}
	return nil
}

// elect moves leadership to replica target (the next one when target < 0)
// at a new leader epoch; the new leader reopens from its log in the
// partition's mirror state, and followers truncate to their divergence point
// from it. In a clean election a STOPPED partition whose new leader lacks
// part of the STOPPING output (closing markers, barrier: not yet replicated)
// runs STOPPING again, since it must never be writable without its barrier;
// its log cannot hold local writes yet, as they come after. An unclean
// election takes the controller's state as it is: the new leader opens
// STOPPED, writable, on whatever its log holds, barrier or not.
func (w *world) elect(p *partition, target int, unclean bool) error {
	old := p.lead()
	if target < 0 || target >= len(p.reps) {
		target = (p.leader + 1) % len(p.reps)
	}
	p.leader = target
	// What the old leader held beyond the new leader's log is lost when
	// it truncates to the divergence point (RPO when acknowledged).
	before := tailOf(old, divergence(p.lead(), old))
	p.leaderEpoch++
	lead := p.lead()
	if lost := old.LogEndOffset() - lead.LogEndOffset(); lost > 0 && p.state == stateMirroring {
		// A new leader that lagged (a follower held back in the ISR)
		// lacks the old leader's tail: mirrored batches take this log's
		// next offsets one for one with the source's, so the fetcher goes
		// back as far, as after an unclean restart.
		p.srcPos = max(0, p.srcPos-lost)
	}
	if unclean {
		// The controller takes the new leader's log as the partition's:
		// what it lacks of the STOPPING output is gone for good.
		p.stopEnd = min(p.stopEnd, lead.LogEndOffset())
	}
	if !unclean && p.state == stateStopped && lead.LogEndOffset() < p.stopEnd {
		if err := w.restop(p); err != nil {
			return err
		}
	} else if err := lead.BecomeLeader(p.leaderEpoch, p.state); err != nil {
		return err
	}
	if err := w.reconcileFollowers(p); err != nil {
		return err
	}
	w.or.ackedLost(p, p.lead(), before, "leader election")
	p.advanceHW()
	w.or.rescan(p)
	return nil
}

// noteLogFloors lowers each partition's log floors to its leader's log end,
// after every command: a log end goes down only where the log is cut.
func (w *world) noteLogFloors() {
	for _, cl := range w.clusters {
		for _, p := range cl.parts {
			end := p.lead().LogEndOffset()
			p.ownFloor.lower(end)
			p.peerFloor.lower(end)
		}
	}
}

// logFloor is the lowest log end a partition's leader had since a moment
// (reset), once set.
type logFloor struct {
	end int64
	set bool
}

func (f *logFloor) reset(end int64) { f.end, f.set = end, true }

func (f *logFloor) lower(end int64) {
	if f.set {
		f.end = min(f.end, end)
	}
}

// at is the floor, or pos when it is unset or not below pos.
func (f *logFloor) at(pos int64) int64 {
	if f.set {
		return min(f.end, pos)
	}
	return pos
}
