package scenario

// Failover: STOPPING, restarts (clean and unclean), leader elections and the
// log floors that tell what a cut removed.

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

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
// log still holds. Either way the cluster's transaction coordinator
// reloads its transactions at a new coordinator epoch (reloadCoordinator).
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
	w.reloadCoordinator(cl)
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
