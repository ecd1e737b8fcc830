package appendpath

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/psm"
)

// UnifiedLog#analyzeAndValidateProducerState through a Partition (Kafka
// 4.2, KAFKA-19690): a COORDINATOR marker below its producer's epoch is
// INVALID_PRODUCER_EPOCH before its transaction version is looked at, so
// one that states none is refused for its epoch under every release, and
// nothing is written. psm's TestStaleEpochRefusedFirst has the rule's
// other cases.
func TestStaleMarkerEpochRefusedFirst(t *testing.T) {
	for _, rel := range []psm.Release{psm.Kafka4, psm.Kafka41, psm.Kafka40, psm.Kafka3} {
		t.Run(rel.String(), func(t *testing.T) {
			p := mustOpen(t, Config{PSMOptions: psm.Options{Release: rel}})
			kpClient(t, p, bspec{PID: 1, Epoch: 1}, nil)
			end := p.LogEndOffset()
			_, err := p.AppendTxnMarker(mkMarker(1, 0, 0, false), psm.TVUnknown)
			kpWant(t, "AppendTxnMarker", err, kafkaerr.InvalidProducerEpoch)
			if p.LogEndOffset() != end {
				t.Fatalf("log end %d after a refused marker, want %d", p.LogEndOffset(), end)
			}
			// At the producer's epoch the version decides (KAFKA-19446).
			_, err = p.AppendTxnMarker(mkMarker(1, 1, 0, false), psm.TVUnknown)
			if rel == psm.Kafka4 {
				kpWant(t, "AppendTxnMarker", err, psm.ErrMarkerWithoutTxnVersion)
			} else {
				kpWant(t, "AppendTxnMarker", err, nil)
			}
		})
	}
}

// controlOfType is a transactional control batch of pid at epoch whose
// control key has type ct: an end-transaction marker with its type
// rewritten (offset 69: header 61, record length, attributes, timestamp
// and offset deltas, key length, key version 2 bytes, type's low byte).
func controlOfType(pid int64, epoch int16, ct codec.ControlType) []byte {
	b := mkMarker(pid, epoch, 0, false)
	b[69] = byte(ct)
	codec.Batch(b).UpdateCRC()
	return b
}

// The KIP-1279 prototype's barrier (psm.Prototype) clears the producers
// where the validation loop meets it: a replicated chunk [barrier, a
// control batch of type 3] is refused by both modes (UNKNOWN_SERVER_ERROR)
// and writes nothing, but under Prototype the producer entries are gone,
// though the log still holds their batches; under Exact nothing changed.
// A rebuild from the log brings them back.
func TestPrototypeBarrierClearsOnRefusedAppend(t *testing.T) {
	for _, mode := range []psm.BarrierApply{psm.Exact, psm.Prototype} {
		t.Run(map[psm.BarrierApply]string{psm.Exact: "exact", psm.Prototype: "prototype"}[mode], func(t *testing.T) {
			p := mustOpen(t, Config{PSMOptions: psm.Options{BarrierApply: mode}})
			kpCoordinator(t, p, mkMarker(1, 1, 0, false), nil)
			end := p.LogEndOffset()
			in := chunk(testlogWithBase(codec.AppendBarrierNoSource(nil, 0, 1700000000600), end),
				testlogWithBase(controlOfType(1, 1, 3), end+1))
			_, err := p.AppendReplica(in)
			kpWant(t, "AppendReplica", err, kafkaerr.UnknownServerError)
			if p.LogEndOffset() != end {
				t.Fatalf("log end %d after a refused chunk, want %d", p.LogEndOffset(), end)
			}
			_, ok := p.Producer(1)
			if mode == psm.Prototype && ok {
				t.Fatal("pid 1 kept: the prototype's barrier removed it before the chunk was refused")
			}
			if mode == psm.Exact && !ok {
				t.Fatal("pid 1 gone after a refused chunk")
			}
			if err := p.Rebuild(); err != nil {
				t.Fatal(err)
			}
			if _, ok := p.Producer(1); !ok {
				t.Fatal("pid 1 not rebuilt from the log")
			}
		})
	}
}
