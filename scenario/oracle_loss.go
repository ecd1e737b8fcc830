// RPO: acknowledged writes that a truncation removes.

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
		o.report(CodeRPO, p, fmt.Sprintf("%s removes %d acknowledged records in %d batches, %d COMMIT and %d ABORT markers at offsets >= %d",
			why, records, batches, commits, aborts, first))
	}
}
