// The PID mappings of rewriting strategies: I5 and I6.

package scenario

import (
	"fmt"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
)

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
			o.report(CodeI5, p, fmt.Sprintf("PID %d of %s maps to -1", sp, from))
		}
		if prev, ok := p.mirroredPIDs[dp]; ok && prev != origin {
			o.report(CodeI5, p, fmt.Sprintf("PID %d of %s and PID %d of %s both map to %d%s", prev.pid, prev.cluster,
				origin.pid, origin.cluster, dp, describePID(o.w.strategy, dp)))
		}
		p.mirroredPIDs[dp] = origin
		p.mirroredBy.add(dp, readTruth(b).producer)
	})
}

// checkMapping is I6: under a rewriting strategy, no PID of p is both a
// local producer's and a mirrored PID's mapping. A mirrored PID whose true
// origin is this cluster's same PID, with one true producer on both sides,
// is that local producer itself coming home (a failback that fetches back
// what this cluster lost, through a peer that stored it under negate's
// involution): no two producers meet.
func (o *oracle) checkMapping(p *partition) {
	if p.c.failed || !rewriting(o.w.strategy) {
		return
	}
	var meet []int64
	for pid, local := range p.localPIDs {
		m, ok := p.mirroredPIDs[pid]
		if !ok || m == (pidOrigin{p.c.name, pid}) && local.single() != "" && local.single() == p.mirroredBy[pid].single() {
			continue
		}
		meet = append(meet, pid)
	}
	if len(meet) > 0 {
		slices.Sort(meet)
		m := p.mirroredPIDs[meet[0]]
		o.report(CodeI6, p, fmt.Sprintf("PID %d is both a local producer's and the mapping of PID %d of %s",
			meet[0], m.pid, m.cluster))
	}
}

// pruneMappings drops the PID mappings and origins of p that nothing of p
// holds any more: no batch of any replica's log (from its log start) and no
// producer-state entry has the PID. A truncation that removed a PID's
// batches removes the PID from the partition; a later batch mapped to the
// same PID meets no one (I5, I6).
func (o *oracle) pruneMappings(p *partition) {
	if len(p.mirroredPIDs) == 0 && len(p.origins) == 0 {
		return
	}
	held := map[int64]bool{}
	for _, r := range p.reps {
		for _, b := range batchesFrom(r, 0) {
			held[b.ProducerID()] = true
		}
		for _, e := range r.Producers() {
			held[e.PID] = true
		}
	}
	for pid := range p.mirroredPIDs {
		if !held[pid] {
			delete(p.mirroredPIDs, pid)
			delete(p.mirroredBy, pid)
		}
	}
	for pid := range p.origins {
		if !held[pid] {
			delete(p.origins, pid)
		}
	}
}

// producers is a set of true producers (their identities).
type producers map[string]bool

// single is the set's one producer, or "" when it has none or several.
func (s producers) single() string {
	if len(s) == 1 {
		for who := range s {
			return who
		}
	}
	return ""
}

// pidProducers maps a PID to the true producers of the batches stored
// under it.
type pidProducers map[int64]producers

func (m pidProducers) add(pid int64, who string) {
	if m[pid] == nil {
		m[pid] = producers{}
	}
	m[pid][who] = true
}
