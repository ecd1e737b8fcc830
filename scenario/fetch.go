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
// Mirrors preserve offsets: dest's fetcher reads src from dest's log end.
// Failback (src stopped mirroring from dest): dest first truncates to the
// divergence point, the offset where src's mirroring left off. Otherwise
// dest keeps its log. align changes that: "divergence" truncates dest to
// where its history and src's part (divergenceFrom); "scratch" truncates
// dest to offset 0 (failback from scratch); "fan-in" keeps dest's log and
// fetches src from its start, at dest's own next offsets (a fan-in of
// several sources into one partition, not a KIP-1279 topology).
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
		p.srcPos, p.fanIn = 0, align == "fan-in"
		sp := src.part(p.key)
		div, why := int64(-1), ""
		switch {
		case p.fanIn:
			// Fan-in (not a KIP-1279 topology): dest keeps its log and
			// fetches src from its start, at its own next offsets.
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
			// A log end that came back up hides a cut: an election or a
			// crash can leave src with other batches below its stop
			// position (a new leader that lost its unsynced tail and wrote
			// STOPPING's output again). The shared history ends where the
			// leader epochs say, too (divergenceFrom).
			div = min(div, divergenceFrom(p, sp))
		case align == "" && sp.stoppedFrom != nil && w.opts.Get("failback-position") == "any":
			// The prototype before its fix: a last mirrored position taken
			// from a source that mirrored a third cluster, whose offsets are
			// not this log's.
			div, p.srcPos, why = sp.stopSrcPos, sp.mirroredEnd, "failback truncation to a third cluster's position"
		case align == "divergence":
			div = divergenceFrom(p, sp)
			p.srcPos, why = div, "truncation to the divergence point"
		}
		if b, ok := batchAt(p.lead(), div); ok && div > b.BaseOffset() {
			// A divergence point inside one of dest's batches: that batch
			// is not shared (its source holds no such batch there), and an
			// offset-preserving fetch cannot append below the log end.
			div = b.BaseOffset()
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
// for a re-parent to src. It compares the two histories as a follower
// compares its log with its leader's (AbstractFetcherThread's truncation
// by OffsetsForLeaderEpoch, KIP-101/KIP-279): mirrors preserve offsets and
// partition leader epochs, so a run of one leader epoch at the same offsets
// in both logs is the same history, whichever cluster wrote it.
func divergenceFrom(p, src *partition) int64 {
	return epochDivergence(epochRuns(p.lead()), p.lead().LogEndOffset(), epochRuns(src.lead()), src.lead().LogEndOffset())
}

// epochRun is one entry of a log's leader-epoch cache
// (LeaderEpochFileCache): the first offset of a run of batches of one
// partition leader epoch.
type epochRun struct {
	epoch int32
	start int64
}

// epochRuns is r's leader-epoch cache, rebuilt from its batches: a new run
// wherever the partition leader epoch changes (test-sized logs).
func epochRuns(r replica) []epochRun {
	var out []epochRun
	for _, b := range batchesFrom(r, 0) {
		if n := len(out); n == 0 || out[n-1].epoch != b.PartitionLeaderEpoch() {
			out = append(out, epochRun{b.PartitionLeaderEpoch(), b.BaseOffset()})
		}
	}
	return out
}

// endOffsetFor is LeaderEpochFileCache#endOffsetFor: the largest epoch of
// runs at or below epoch, and its end offset (the start of the next run, or
// the log end end); (-1, -1) when every epoch of runs is above epoch.
func endOffsetFor(runs []epochRun, end int64, epoch int32) (int32, int64) {
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].epoch <= epoch {
			if i+1 < len(runs) {
				return runs[i].epoch, runs[i+1].start
			}
			return runs[i].epoch, end
		}
	}
	return -1, -1
}

// epochDivergence is the truncation offset of a log (runs, end) that
// follows another (srcRuns, srcEnd), as Kafka's follower finds it: it asks
// for the end offset of its latest epoch (OffsetsForLeaderEpoch); when the
// source knows that epoch, the logs agree up to the lower of the two end
// offsets of it; when the source answers with an older epoch, the follower
// asks again from its own largest epoch at or below that one. 0 when they
// share no epoch.
func epochDivergence(runs []epochRun, end int64, srcRuns []epochRun, srcEnd int64) int64 {
	if len(runs) == 0 {
		return 0
	}
	ask := runs[len(runs)-1].epoch
	for {
		le, lend := endOffsetFor(srcRuns, srcEnd, ask)
		if le < 0 {
			return 0
		}
		fe, fend := endOffsetFor(runs, end, le)
		switch {
		case fe < 0:
			return 0
		case fe == le:
			return min(lend, fend)
		}
		ask = fe
	}
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
// truncation offset, as LocalLog#truncateTo does), and a restart puts it
// back after the last batch, so a follower can hold every batch of a leader
// that restarted and still end beyond it; Kafka's follower truncates to the
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
	from, hw := p.fetchPos(), src.HighWatermark()
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
	res, err := p.lead().AppendMirrored(data, p.source.id, p.fanIn)
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
			p.mirroredEnd, p.stopSrcPos, p.stoppedFrom = p.lead().LogEndOffset(), p.fetchPos(), p.source
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
		if lost := leo - p.lead().LogEndOffset(); lost > 0 && p.state == stateMirroring && p.fanIn {
			// Under fan-in mirrored batches take the next offsets of this
			// log, one for one with the source's: the fetcher goes back as
			// far. An offset-preserving fetcher resumes at its log end.
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

// restop makes p's leader MIRRORING again (BecomeLeader) and runs STOPPING
// on it again: a STOPPED partition whose leader lacks part of the STOPPING
// output.
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
// at a new leader epoch; the new leader keeps the producer state it built as
// a follower (Partition#makeLeader reloads nothing) and takes the
// partition's mirror state, and followers truncate to their divergence point
// from it. In a clean election a STOPPED partition whose new leader lacks
// part of the STOPPING output (closing markers, barrier: not yet replicated)
// runs STOPPING again, since it must never be writable without its barrier;
// its log cannot hold local writes yet, as they come after. An unclean
// election takes the controller's state as it is: the new leader becomes
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
	if lost := old.LogEndOffset() - lead.LogEndOffset(); lost > 0 && p.state == stateMirroring && p.fanIn {
		// A new leader that lagged (a follower held back in the ISR)
		// lacks the old leader's tail: under fan-in mirrored batches take
		// this log's next offsets one for one with the source's, so the
		// fetcher goes back as far, as after an unclean restart. An
		// offset-preserving fetcher resumes at the new leader's log end.
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
