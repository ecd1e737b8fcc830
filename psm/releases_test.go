package psm

import (
	"errors"
	"testing"
)

// releases are the release lines of Options.Release, newest first.
var releases = []Release{Kafka4, Kafka41, Kafka40, Kafka3}

// ways are the two ways to append one batch: an Appender (Begin, Add,
// Commit) and the one-call Update.
var ways = []string{"append", "update"}

// one appends b alone in the way named, under origin, and returns its
// error; an accepted batch takes the next offset.
func (h *harness) one(way string, origin Origin, b Batch) error {
	h.t.Helper()
	if way == "append" {
		return h.append(origin, b).err
	}
	b.BaseOffset = h.next
	out, _, err := h.m.Update(h.p, origin, &b)
	if err == nil && !out.Duplicate.Found {
		h.next += int64(b.LastOffsetDelta) + 1
	}
	return err
}

// UnifiedLog#maybeStartTransactionVerification, from Kafka 4.1
// (KAFKA-18042): a verification whose epoch is below the producer's is
// refused with INVALID_PRODUCER_EPOCH (InvalidProducerEpochException)
// before any entry is made; Kafka 4.0 and 3 hand out a guard.
func TestStartVerificationRefusesStaleEpoch(t *testing.T) {
	for _, rel := range releases {
		t.Run(rel.String(), func(t *testing.T) {
			forEachImpl(t, Options{Release: rel, VerifyTransactions: true}, func(t *testing.T, h *harness) {
				h.ok(Client, data(1000, 1, 0, 1))
				g, err := h.m.StartVerification(h.p, 1000, 0, 0, TV0, 0)
				if rel == Kafka4 || rel == Kafka41 { // 4.1 and later
					if !errors.Is(err, ErrInvalidProducerEpoch) || g != 0 {
						t.Fatalf("verify at epoch 0 below 1: (%d, %v), want INVALID_PRODUCER_EPOCH", g, err)
					}
				} else if err != nil || g == 0 {
					t.Fatalf("verify at epoch 0 below 1: (%d, %v), want a guard", g, err)
				}
				// The producer's own epoch and a higher one are verified.
				for _, epoch := range []int16{1, 2} {
					if g, err := h.m.StartVerification(h.p, 1000, 1, epoch, TV0, 0); err != nil || g == 0 {
						t.Fatalf("verify at epoch %d: (%d, %v), want a guard", epoch, g, err)
					}
				}
				// An unknown producer has no epoch to be below.
				if g, err := h.m.StartVerification(h.p, 7, 0, -1, TV0, 0); err != nil || g == 0 {
					t.Fatalf("verify an unknown producer: (%d, %v), want a guard", g, err)
				}
			})
		})
	}
}
