package psm

import (
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
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

// UnifiedLog#analyzeAndValidateProducerState, from Kafka 4.2 (KAFKA-19690):
// a transactional batch or marker from CLIENT or COORDINATOR whose producer
// has no transaction open at its epoch, and whose epoch is below the
// committed entry's, is refused with INVALID_PRODUCER_EPOCH before
// anything else: before the verification guard (INVALID_TXN_STATE), the
// marker's transaction version (ErrMarkerWithoutTxnVersion), its control
// type (UNKNOWN_SERVER_ERROR) and its record count (INVALID_RECORD), and
// an emptied marker of that epoch, which ProducerAppendInfo ignores, is
// refused too. Verification on or off; REPLICATION is not checked. Before
// 4.2 each gives its own answer.
func TestStaleEpochRefusedFirst(t *testing.T) {
	stale := func(b Batch) Batch { b.ProducerEpoch = 0; return b }
	markerOf := func(ct codec.ControlType, records int32, tv TxnVersion) Batch {
		b := tvMarker(1, 0, false, 0, tv)
		b.ControlType, b.RecordsCount = ct, records
		return b
	}
	cases := []struct {
		name   string
		origin Origin
		b      Batch
		before error // the answer before 4.2
	}{
		{"txn-data-no-guard", Client, stale(txnData(1, 0, 0, 1)), kafkaerr.InvalidTxnState},
		{"marker-no-txn-version", Coordinator, markerOf(codec.ControlCommit, 1, TVUnknown), kafkaerr.InvalidProducerEpoch},
		{"marker-unknown-control-type", Coordinator, markerOf(codec.ControlType(3), 1, TV0), kafkaerr.UnknownServerError},
		{"marker-record-count-minus-one", Coordinator, markerOf(codec.ControlCommit, -1, TV0), kafkaerr.InvalidRecord},
		{"emptied-marker", Coordinator, markerOf(codec.ControlCommit, 0, TV0), nil},
	}
	for _, rel := range releases {
		for _, verify := range []bool{true, false} {
			for _, c := range cases {
				for _, way := range ways {
					name := rel.String() + "/verify=" + map[bool]string{true: "on", false: "off"}[verify] + "/" + c.name + "/" + way
					t.Run(name, func(t *testing.T) {
						forEachImpl(t, Options{Release: rel, VerifyTransactions: verify}, func(t *testing.T, h *harness) {
							h.ok(Client, data(1, 1, 0, 1))
							want := c.before
							if rel == Kafka4 {
								want = kafkaerr.InvalidProducerEpoch
							}
							if !verify && errors.Is(want, kafkaerr.InvalidTxnState) {
								// No guard needed: ProducerAppendInfo#checkProducerEpoch refuses it.
								want = kafkaerr.InvalidProducerEpoch
							}
							before := dumpState(h.m, h.p)
							err := h.one(way, c.origin, c.b)
							if !errors.Is(err, want) || (want == nil) != (err == nil) {
								t.Fatalf("%+v: %v, want %v", c.b, err, want)
							}
							if err != nil && !equalState(before, dumpState(h.m, h.p)) {
								t.Fatal("the refused batch changed the state")
							}
							// REPLICATION trusts the leader.
							if c.b.RecordsCount >= 0 && c.b.ControlType <= codec.ControlCommit {
								if err := h.one(way, Replication, c.b); err != nil {
									t.Fatalf("REPLICATION %+v: %v", c.b, err)
								}
							}
						})
					})
				}
			}
		}
	}
}

// UnifiedLog#updateProducers, from Kafka 4.0 (KAFKA-18654): a passing
// transactional batch or marker removes its producer's verification entry,
// except a marker at the epoch of an entry that supports the epoch bump
// (created by a TV2 request). Under TV2 the coordinator verifies the next
// transaction at the bumped epoch before the last one's marker, written at
// that same epoch, lands: the entry must survive the marker, or the next
// transaction's first batch fails with INVALID_TXN_STATE. Kafka 3 removes
// it.
func TestTV2MarkerKeepsNextTransactionsVerification(t *testing.T) {
	for _, rel := range releases {
		for _, way := range ways {
			t.Run(rel.String()+"/"+way, func(t *testing.T) {
				keeps := rel != Kafka3 // 4.0 and later
				forEachImpl(t, Options{Release: rel, VerifyTransactions: true}, func(t *testing.T, h *harness) {
					guarded := func(g Guard, b Batch) error {
						a := h.m.Begin(h.p, Client)
						a.SetGuard(g)
						b.BaseOffset = h.next
						if _, err := a.Add(&b); err != nil {
							a.Abort()
							return err
						}
						a.Commit()
						h.next += int64(b.LastOffsetDelta) + 1
						return nil
					}
					if err := guarded(h.verify(1, 0, 0, TV2, 0), txnData(1, 0, 0, 1)); err != nil {
						t.Fatal(err)
					}
					g := h.verify(1, 0, 1, TV2, 0)
					if err := h.one(way, Coordinator, tvMarker(1, 1, false, 0, TV2)); err != nil {
						t.Fatal(err)
					}
					err := guarded(g, txnData(1, 1, 0, 1))
					if keeps && err != nil {
						t.Fatalf("the next transaction's first batch: %v, want accepted", err)
					}
					if !keeps && !errors.Is(err, kafkaerr.InvalidTxnState) {
						t.Fatalf("Kafka 3, the next transaction's first batch: %v, want INVALID_TXN_STATE", err)
					}
				})
			})
		}
	}
	// A marker at another epoch, or one whose entry was created by a TV0
	// or TV1 request, removes the entry under every release.
	for _, rel := range releases {
		t.Run(rel.String()+"/other-epoch-or-version", func(t *testing.T) {
			forEachImpl(t, Options{Release: rel, VerifyTransactions: true}, func(t *testing.T, h *harness) {
				h.ok(Replication, txnData(1, 0, 0, 1), txnData(2, 0, 0, 1))
				g1 := h.verify(1, 0, 2, TV2, 0)
				g2 := h.verify(2, 0, 1, TV1, 0)
				h.ok(Coordinator, tvMarker(1, 1, false, 0, TV2), tvMarker(2, 1, false, 0, TV0))
				for pid, g := range map[int64]Guard{1: g1, 2: g2} {
					a := h.m.Begin(h.p, Client)
					a.SetGuard(g)
					b := txnData(pid, 2, 0, 1)
					b.BaseOffset = h.next
					if _, err := a.Add(&b); !errors.Is(err, kafkaerr.InvalidTxnState) {
						t.Fatalf("pid %d after its marker: %v, want INVALID_TXN_STATE", pid, err)
					}
					a.Abort()
				}
			})
		})
	}
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
					if !errors.Is(err, kafkaerr.InvalidProducerEpoch) || g != 0 {
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

// BarrierApply Prototype is the KIP-1279 prototype's barrier
// (expireMirroredProducers, run where the validation loop meets the
// barrier): it removes the producer entries only, so a verification entry
// survives it and its guard still admits a first transactional batch,
// which Exact refuses; and it removes them at once, so an append refused at
// a batch after the barrier has still removed them, where Exact changes
// nothing. Both through an append, Update and Reset.
func TestBarrierPrototypeAsCoded(t *testing.T) {
	for _, mode := range []BarrierApply{Exact, Prototype} {
		for _, way := range []string{"append", "update", "reset"} {
			t.Run("verification/"+map[BarrierApply]string{Exact: "exact", Prototype: "prototype"}[mode]+"/"+way, func(t *testing.T) {
				forEachImpl(t, Options{BarrierApply: mode, VerifyTransactions: true}, func(t *testing.T, h *harness) {
					g := h.verify(1, 0, 0, TV0, 0)
					if way == "reset" {
						h.m.Reset(h.p)
					} else if err := h.one(way, Replication, barrierBatch()); err != nil {
						t.Fatal(err)
					}
					a := h.m.Begin(h.p, Client)
					a.SetGuard(g)
					b := txnData(1, 0, 0, 1)
					b.BaseOffset = h.next
					_, err := a.Add(&b)
					a.Abort()
					if mode == Prototype && err != nil {
						t.Fatalf("guard handed out before the barrier: %v, want accepted (the entry stays)", err)
					}
					if mode == Exact && !errors.Is(err, kafkaerr.InvalidTxnState) {
						t.Fatalf("guard handed out before the barrier: %v, want INVALID_TXN_STATE", err)
					}
				})
			})
		}
		t.Run("refused-append/"+map[BarrierApply]string{Exact: "exact", Prototype: "prototype"}[mode], func(t *testing.T) {
			forEachImpl(t, Options{BarrierApply: mode}, func(t *testing.T, h *harness) {
				h.ok(Coordinator, tvMarker(1, 1, false, 0, TV0))
				bad := tvMarker(1, 1, false, 0, TV0)
				bad.ControlType = codec.ControlType(3)
				if r := h.append(Replication, barrierBatch(), bad); !errors.Is(r.err, kafkaerr.UnknownServerError) {
					t.Fatalf("[barrier, control type 3]: %v, want UNKNOWN_SERVER_ERROR", r.err)
				}
				_, ok := h.m.Producer(h.p, 1)
				if mode == Prototype && ok {
					t.Fatal("pid 1 kept: the prototype's barrier removed it before the append was refused")
				}
				if mode == Exact && !ok {
					t.Fatal("pid 1 gone: a refused append changes nothing")
				}
			})
		})
	}
}
