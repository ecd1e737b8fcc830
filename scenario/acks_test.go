package scenario

import (
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// TestAckWaitsForHighWatermark: under acks=all a send is acknowledged only
// once the high watermark passes its batch (DelayedProduce); a paused
// follower in the ISR holds it back, and the sync after resume delivers it.
func TestAckWaitsForHighWatermark(t *testing.T) {
	src := "cluster A replicas=2\ntopic t\npause A t/0 replica=1\nproducer p on A\nsend p t/0 records=5\n" +
		"resume A t/0 replica=1\nsync\n"
	var afterSend, afterSync bool
	runSourceUntil(t, "inline", []byte(src), "verbatim", nil, func(w *world, c *command) bool {
		if c.opcode != opSend && c.opcode != opSync {
			return false
		}
		b, ok := batchAt(w.byName["A"].part("t/0").lead(), 0)
		if c.opcode == opSend {
			afterSend = ok && w.ackDelivered(b)
		} else {
			afterSync = ok && w.ackDelivered(b)
		}
		return false
	})
	if afterSend || !afterSync {
		t.Fatalf("acknowledged after the send: %v, after the sync: %v; want false, true", afterSend, afterSync)
	}
}

// TestMarkerWrittenAgainAfterLoss: a transaction's data and its COMMIT
// marker, both lost to a clean election before the high watermark passed
// them, are sent again to the new leader (the client's retry, the
// coordinator's WriteTxnMarkers retry): the new leader ends with the data
// and the COMMIT, and no acknowledged write was lost.
func TestMarkerWrittenAgainAfterLoss(t *testing.T) {
	src := "cluster A replicas=2\ntopic t\npause A t/0 replica=1\nproducer tx on A transactional=x\nbegin tx\n" +
		"send tx t/0 records=3\ncommit tx\nelect A t/0 replica=1\nsync\n"
	r := runInline(t, src)
	if len(r.Violations) != 0 || len(r.ClientErrors) != 0 {
		t.Fatalf("violations %+v, client errors %+v; want none", r.Violations, r.ClientErrors)
	}
	w, _ := runSourceUntil(t, "inline", []byte(src), "verbatim", nil, nil)
	var kinds []string
	for _, b := range batchesFrom(w.byName["A"].part("t/0").lead(), 0) {
		switch {
		case !b.IsControl():
			kinds = append(kinds, "data")
		case readTruth(b).control == codec.ControlCommit:
			kinds = append(kinds, "COMMIT")
		default:
			kinds = append(kinds, "other")
		}
	}
	if !slices.Equal(kinds, []string{"data", "COMMIT"}) {
		t.Fatalf("new leader's log %v; want [data COMMIT]", kinds)
	}
}
