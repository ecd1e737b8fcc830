package scenario

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/psm"
)

// producersOnly is a replica that answers Producers only.
type producersOnly struct {
	replica
	entries []producerEntry
}

func (r producersOnly) Producers() []producerEntry { return r.entries }

// TestOpenOnFollowsRelease: the client's verification shortcut is
// UnifiedLog#hasOngoingTransaction of the release in force: from Kafka 4.0
// a transaction open at another epoch than the batch's does not count
// (KAFKA-14563), so the batch is verified with the coordinator; in 3.x it
// does.
func TestOpenOnFollowsRelease(t *testing.T) {
	r := producersOnly{entries: []producerEntry{{PID: 5, Epoch: 2, TxnFirstOffset: 10}, {PID: 6, Epoch: 2, TxnFirstOffset: -1}}}
	for _, c := range []struct {
		rel   psm.Release
		pid   int64
		epoch int16
		want  bool
	}{
		{psm.Kafka4, 5, 2, true},
		{psm.Kafka4, 5, 3, false},
		{psm.Kafka40, 5, 3, false},
		{psm.Kafka3, 5, 3, true},
		{psm.Kafka3, 6, 2, false},
		{psm.Kafka4, 7, 2, false},
	} {
		if got := openOn(r, c.pid, c.epoch, c.rel); got != c.want {
			t.Errorf("%s: openOn(pid %d, epoch %d) = %v, want %v", c.rel, c.pid, c.epoch, got, c.want)
		}
	}
	o := DefaultOptions()
	if release(o) != psm.Kafka4 {
		t.Errorf("default kafka-release is %s, want 4.2", release(o))
	}
	for v, want := range map[string]psm.Release{"4.1": psm.Kafka41, "4.0": psm.Kafka40, "3.6": psm.Kafka3} {
		if err := o.Set("kafka-release", v); err != nil || release(o) != want {
			t.Errorf("kafka-release=%s: %v, %s", v, err, release(o))
		}
	}
}
