package scenario

// Mirroring and replication: the mirror and replica fetchers and what a sync
// runs. Where a re-parented or following log parts from its source is in
// divergence.go; STOPPING, restarts and elections in failover.go.

import (
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
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

// maxSyncRounds bounds the fetch loop of one sync (each round moves at least
// one batch).
const maxSyncRounds = 1 << 20

// sync runs replica fetchers everywhere and the mirror fetchers of dest (all
// when nil) until nothing moves.
func (w *world) sync(dest *cluster) error {
	w.retryMarkers()
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
