package appendpath

import (
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

// tvMirror is a verbatim mirror under release rel holding producer 5's
// open transaction at epoch 3.
func tvMirror(t *testing.T, rel psm.Release) *Partition {
	t.Helper()
	p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Verbatim,
		PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, Release: rel}})
	in := testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Epoch: 3, Seq: 0, Txn: true, Records: 2}), 0, 4)
	if _, err := p.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	return p
}

// lastMarkerEpoch is the producer epoch of the last batch of p's log, which
// must be an ABORT marker.
func lastMarkerEpoch(t *testing.T, p *Partition) int16 {
	t.Helper()
	all := readAll(t, p)
	b := codec.Batch(all[len(all)-1])
	if cr, err := b.ControlRecord(); !b.IsControl() || err != nil || cr.Type != codec.ControlAbort {
		t.Fatalf("last batch is not an ABORT marker")
	}
	return b.ProducerEpoch()
}

// TestStopAbortMarker: STOPPING's ABORT for each StopHazards.AbortMarker
// and transaction version, under Kafka 4.2's marker rules
// (ProducerAppendInfo#appendEndTxnMarker, #checkProducerEpoch): the
// versioned marker closes the transaction under every version (TV2 at
// epoch + 1); the current epoch is refused for TV2 only; the prototype's
// marker, stating no version, under every version. A refused ABORT leaves
// the partition STOPPING with the transaction open; under hazard R2 the
// partition goes STOPPED and the transaction stays open (M6).
func TestStopAbortMarker(t *testing.T) {
	for _, c := range []struct {
		how       AbortMarker
		tv        psm.TxnVersion
		want      error // nil: the ABORT is written
		wantEpoch int16
	}{
		{AbortVersioned, psm.TV0, nil, 3},
		{AbortVersioned, psm.TV1, nil, 3},
		{AbortVersioned, psm.TV2, nil, 4},
		{AbortCurrentEpoch, psm.TV1, nil, 3},
		{AbortCurrentEpoch, psm.TV2, kafkaerr.InvalidProducerEpoch, 0},
		{AbortPrototype, psm.TV1, psm.ErrMarkerWithoutTxnVersion, 0},
		{AbortPrototype, psm.TV2, psm.ErrMarkerWithoutTxnVersion, 0},
	} {
		t.Run(c.how.String()+"/"+c.tv.String(), func(t *testing.T) {
			opt := StopOptions{TxnVersion: c.tv, Hazards: StopHazards{AbortMarker: c.how}}
			p := tvMirror(t, psm.Kafka4)
			err := p.Stop(opt)
			if c.want == nil {
				if err != nil || p.State() != Stopped {
					t.Fatalf("Stop: %v, state %s", err, p.State())
				}
				if e := lastMarkerEpoch(t, p); e != c.wantEpoch {
					t.Fatalf("ABORT at epoch %d, want %d", e, c.wantEpoch)
				}
				if in, _ := p.Producer(5); in.Epoch != c.wantEpoch || in.TxnFirstOffset != -1 {
					t.Fatalf("producer after STOPPING %+v", in)
				}
				if p.LastStableOffset() != p.HighWatermark() {
					t.Fatalf("LSO %d below HW %d", p.LastStableOffset(), p.HighWatermark())
				}
				return
			}
			if !errors.Is(err, c.want) || p.State() != Stopping {
				t.Fatalf("Stop: %v in %s, want %v in STOPPING", err, p.State(), c.want)
			}
			if len(p.OpenTxns(nil)) != 1 {
				t.Fatal("refused ABORT closed the transaction")
			}
			opt.Hazards.IgnoreMarkerFailure = true
			if err := p.Stop(opt); err != nil || p.State() != Stopped {
				t.Fatalf("Stop under R2: %v, state %s", err, p.State())
			}
			if len(p.OpenTxns(nil)) != 1 || p.LastStableOffset() != 0 {
				t.Fatalf("under R2 the transaction must stay open: LSO %d", p.LastStableOffset())
			}
		})
	}
}

// TestStopAbortMarkerBeforeKafka42: Kafka 4.0 and 3.x leaders are not told
// a marker's version and check every marker as TV0/TV1, so the prototype's
// ABORT closes the transaction there.
func TestStopAbortMarkerBeforeKafka42(t *testing.T) {
	for _, rel := range []psm.Release{psm.Kafka40, psm.Kafka3} {
		p := tvMirror(t, rel)
		if err := p.Stop(StopOptions{TxnVersion: psm.TV2, Hazards: StopHazards{AbortMarker: AbortPrototype}}); err != nil || p.State() != Stopped {
			t.Fatalf("%s: Stop: %v, state %s", rel, err, p.State())
		}
		if len(p.OpenTxns(nil)) != 0 {
			t.Fatalf("%s: transaction still open", rel)
		}
	}
}

// TestAppendTxnMarker: the transaction version a WriteTxnMarkers request
// states reaches producer state; AppendCoordinator states TV0.
func TestAppendTxnMarker(t *testing.T) {
	p := mustOpen(t, Config{PSMOptions: nonNegOne})
	for _, pid := range []int64{5, 6} {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: pid, Epoch: 3, Seq: 0, Txn: true})); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.AppendTxnMarker(mkMarker(5, 3, 0, false), psm.TVUnknown); !errors.Is(err, psm.ErrMarkerWithoutTxnVersion) {
		t.Fatalf("no version stated: %v", err)
	}
	if _, err := p.AppendTxnMarker(mkMarker(5, 3, 0, false), psm.TV2); !errors.Is(err, kafkaerr.InvalidProducerEpoch) {
		t.Fatalf("TV2 at the producer's epoch: %v", err)
	}
	if _, err := p.AppendTxnMarker(mkMarker(5, 4, 0, false), psm.TV2); err != nil {
		t.Fatalf("TV2 at epoch + 1: %v", err)
	}
	if _, err := p.AppendCoordinator(mkMarker(6, 3, 0, false)); err != nil {
		t.Fatalf("AppendCoordinator at the producer's epoch: %v", err)
	}
	if len(p.OpenTxns(nil)) != 0 {
		t.Fatal("a transaction is still open")
	}
}
