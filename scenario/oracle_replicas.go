// I2: replicas agree on whole producer entries.

package scenario

import (
	"fmt"
	"slices"
)

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
					o.report(CodeI2, p, fmt.Sprintf("replica %d producer state %s (windows %s) differs from the leader's %s (windows %s)",
						i, got, windows(es), want, windows(lead)))
				}
				if got := fmt.Sprint(r.OpenTxns()); got != wantTxns {
					o.report(CodeI2, p, fmt.Sprintf("replica %d open transactions %s differ from the leader's %s", i, got, wantTxns))
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
