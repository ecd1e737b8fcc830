package codec_test

// Kafka's EndTransactionMarkerTest and ControlRecordTypeTest, ported: one Go
// test per test method, named TestKafkaEndTransactionMarker_<method> and
// TestKafkaControlRecordType_<method> (docs/kafka-tests.md). Kafka's
// EndTransactionMarker is codec.EndTxnMarker (its value decoded by
// ControlRecord.EndTxnMarker, which takes the type from the key as
// EndTransactionMarker.deserializeValue takes it as an argument);
// ControlRecordType.parse is ParseControlKey.

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// TestKafkaEndTransactionMarker_testUnknownControlTypeNotAllowed ports
// EndTransactionMarkerTest#testUnknownControlTypeNotAllowed: a marker is a
// COMMIT or an ABORT and nothing else. Kafka's constructor refuses another
// type; AppendEndTxnMarker takes the choice as a bool, so the rule is that
// the two batches it can build carry exactly those two types, with a value
// that decodes.
func TestKafkaEndTransactionMarker_testUnknownControlTypeNotAllowed(t *testing.T) {
	for abort, want := range map[bool]codec.ControlType{false: codec.ControlCommit, true: codec.ControlAbort} {
		cr, err := codec.Batch(codec.AppendEndTxnMarker(nil, 1, 0, 24, abort, 1700000000000)).ControlRecord()
		if err != nil {
			t.Fatal(err)
		}
		if cr.Type != want {
			t.Errorf("abort=%v: type %v, want %v", abort, cr.Type, want)
		}
		if m, err := cr.EndTxnMarker(); err != nil || m.CoordinatorEpoch != 24 {
			t.Errorf("abort=%v: %+v, %v", abort, m, err)
		}
	}
}

// TestKafkaEndTransactionMarker_testCannotDeserializeUnknownControlType
// ports EndTransactionMarkerTest#testCannotDeserializeUnknownControlType:
// the value of a control record whose type is not COMMIT or ABORT is not a
// marker (UNKNOWN in Kafka's test; every other type here too).
func TestKafkaEndTransactionMarker_testCannotDeserializeUnknownControlType(t *testing.T) {
	valid := codec.EndTxnMarker{CoordinatorEpoch: 24}.AppendTo(nil)
	for _, typ := range []codec.ControlType{codec.ControlUnknown, codec.ControlLeaderChange,
		codec.ControlSnapshotHeader, codec.ControlSnapshotFooter, codec.ControlKRaftVersion,
		codec.ControlKRaftVoters, codec.ControlMirrorPidReset, 337} {
		for _, v := range [][]byte{{}, valid} {
			if _, err := (codec.ControlRecord{Type: typ, Value: v}).EndTxnMarker(); !errors.Is(err, codec.ErrBadControl) {
				t.Errorf("type %v, value %x: %v, want ErrBadControl", typ, v, err)
			}
		}
	}
}

// TestKafkaEndTransactionMarker_testIllegalNegativeVersion ports
// EndTransactionMarkerTest#testIllegalNegativeVersion: a marker value with
// version -1 is invalid. Kafka's input is the two version bytes alone, which
// its length check refuses before the version is read; the six-byte value
// reaches the version check.
func TestKafkaEndTransactionMarker_testIllegalNegativeVersion(t *testing.T) {
	for _, v := range [][]byte{{0xff, 0xff}, {0xff, 0xff, 0, 0, 0, 1}} {
		cr := codec.ControlRecord{Type: codec.ControlAbort, Value: v}
		if _, err := cr.EndTxnMarker(); !errors.Is(err, codec.ErrBadControl) {
			t.Errorf("%x: %v, want ErrBadControl", v, err)
		}
	}
}

// TestKafkaEndTransactionMarker_testNotEnoughBytes ports
// EndTransactionMarkerTest#testNotEnoughBytes: an empty marker value is
// invalid.
func TestKafkaEndTransactionMarker_testNotEnoughBytes(t *testing.T) {
	cr := codec.ControlRecord{Type: codec.ControlCommit, Value: []byte{}}
	if _, err := cr.EndTxnMarker(); !errors.Is(err, codec.ErrBadControl) {
		t.Errorf("%v, want ErrBadControl", err)
	}
}

// TestKafkaEndTransactionMarker_testSerde ports
// EndTransactionMarkerTest#testSerde: a marker value written and read back
// keeps its coordinator epoch.
func TestKafkaEndTransactionMarker_testSerde(t *testing.T) {
	v := codec.EndTxnMarker{CoordinatorEpoch: 79}.AppendTo(nil)
	if len(v) != codec.EndTxnMarkerSize {
		t.Fatalf("%d bytes", len(v))
	}
	m, err := codec.ControlRecord{Type: codec.ControlCommit, Value: v}.EndTxnMarker()
	if err != nil || m.CoordinatorEpoch != 79 || m.Version != 0 {
		t.Errorf("%+v, %v", m, err)
	}
}

// TestKafkaEndTransactionMarker_testDeserializeNewerVersion ports
// EndTransactionMarkerTest#testDeserializeNewerVersion: a marker value of a
// later version (5) with bytes after the coordinator epoch is read as
// version 0: the epoch is kept, the rest ignored.
func TestKafkaEndTransactionMarker_testDeserializeNewerVersion(t *testing.T) {
	v := binary.BigEndian.AppendUint16(nil, 5)
	v = binary.BigEndian.AppendUint32(v, 79)
	v = append(v, 0, 0)
	m, err := codec.ControlRecord{Type: codec.ControlCommit, Value: v}.EndTxnMarker()
	if err != nil || m.CoordinatorEpoch != 79 {
		t.Errorf("%+v, %v", m, err)
	}
}

func controlKey(version, typ int16, extra ...byte) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(version))
	k = binary.BigEndian.AppendUint16(k, uint16(typ))
	return append(k, extra...)
}

// TestKafkaControlRecordType_testParseUnknownType ports
// ControlRecordTypeTest#testParseUnknownType: a key of an unknown type
// (337) parses, as an unknown type rather than an error.
func TestKafkaControlRecordType_testParseUnknownType(t *testing.T) {
	_, typ, err := codec.ParseControlKey(controlKey(0, 337))
	if err != nil {
		t.Fatal(err)
	}
	if typ.Known() || typ != 337 || typ.String() != "UNKNOWN(337)" {
		t.Errorf("type %v (known %v), want an unknown type", typ, typ.Known())
	}
}

// TestKafkaControlRecordType_testParseUnknownVersion ports
// ControlRecordTypeTest#testParseUnknownVersion: a key of a later version
// (5) with a field added after the type still parses to its type.
func TestKafkaControlRecordType_testParseUnknownVersion(t *testing.T) {
	v, typ, err := codec.ParseControlKey(controlKey(5, int16(codec.ControlAbort), 0, 0, 0x5b, 0x88))
	if err != nil || typ != codec.ControlAbort || v != 5 {
		t.Errorf("version %d, type %v, %v; want ABORT", v, typ, err)
	}
}

// TestKafkaControlRecordType_testRoundTrip ports
// ControlRecordTypeTest#testRoundTrip, parameterized over Kafka's enum: a
// version 0 key of each type parses back to that type (UNKNOWN is written
// as -1), and each name but UNKNOWN back to its type. MIRROR_PID_RESET,
// ours, is checked beside them.
func TestKafkaControlRecordType_testRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name string
		typ  codec.ControlType
	}{
		{"ABORT", codec.ControlAbort}, {"COMMIT", codec.ControlCommit},
		{"LEADER_CHANGE", codec.ControlLeaderChange}, {"SNAPSHOT_HEADER", codec.ControlSnapshotHeader},
		{"SNAPSHOT_FOOTER", codec.ControlSnapshotFooter}, {"KRAFT_VERSION", codec.ControlKRaftVersion},
		{"KRAFT_VOTERS", codec.ControlKRaftVoters}, {"UNKNOWN", codec.ControlUnknown},
		{"MIRROR_PID_RESET", codec.ControlMirrorPidReset},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := codec.AppendControlKey(nil, c.typ)
			if want := controlKey(0, int16(c.typ)); string(key) != string(want) {
				t.Errorf("key %x, want %x", key, want)
			}
			v, typ, err := codec.ParseControlKey(key)
			if err != nil || v != 0 || typ != c.typ {
				t.Fatalf("version %d, type %v, %v", v, typ, err)
			}
			if c.typ != codec.ControlUnknown && typ.String() != c.name {
				t.Errorf("name %s, want %s", typ, c.name)
			}
			var named codec.ControlType
			if err := named.UnmarshalText([]byte(c.name)); (err == nil) != (c.typ != codec.ControlUnknown) ||
				(err == nil && named != c.typ) {
				t.Errorf("name %s parses to %v, %v", c.name, named, err)
			}
			if typ.Known() != (c.typ != codec.ControlUnknown) {
				t.Errorf("Known() = %v", typ.Known())
			}
		})
	}
}
