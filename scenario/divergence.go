package scenario

// Where two histories part: a re-parented member against its new source (by
// leader epochs, as OffsetsForLeaderEpoch answers), and a follower against its
// leader.

import (
	"fmt"
)

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
