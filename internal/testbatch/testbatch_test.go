package testbatch

import (
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Each line parses to the Line its words say, with the grammar's defaults
// (epoch, seq, coord 0; records 1; a marker's type from commit|abort).
func TestParse(t *testing.T) {
	for _, c := range []struct {
		line string
		want Line
	}{
		{"data pid=5", Line{PID: 5, Records: 1}},
		{"data pid=5 epoch=3 seq=7 records=4 txn", Line{PID: 5, Epoch: 3, Seq: 7, Records: 4, Txn: true}},
		{"data pid=-1 seq=0 offset=100 leader-epoch=4",
			Line{PID: -1, Records: 1, Offset: 100, LeaderEpoch: 4, Placed: true}},
		{"marker pid=1 epoch=3 commit coord=0",
			Line{Marker: true, PID: 1, Epoch: 3, Records: 1, Type: codec.ControlCommit}},
		{"marker pid=2 abort coord=9 offset=3", Line{Marker: true, PID: 2, Records: 1, Abort: true, Coord: 9,
			Type: codec.ControlAbort, Offset: 3, Placed: true}},
		{"marker pid=1 epoch=2 commit coord=7 type=LEADER_CHANGE",
			Line{Marker: true, PID: 1, Epoch: 2, Records: 1, Coord: 7, Type: codec.ControlLeaderChange}},
		{"marker pid=1 abort records=0", Line{Marker: true, PID: 1, Abort: true, Type: codec.ControlAbort}},
	} {
		got, err := parse(c.line)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}

// A line the grammar does not describe is refused, saying why.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ line, why string }{
		{"", "empty"},
		{"record pid=1", "unknown batch kind"},
		{"data epoch=1", "lacks pid="},
		{"data pid=1 count=2", "unknown argument count="},
		{"data pid=1 coord=2", "unknown argument coord="},
		{"marker pid=1 seq=0 commit", "unknown argument seq="},
		{"data pid=1 commit", "unknown flag commit"},
		{"marker pid=1 txn commit", "unknown flag txn"},
		{"marker pid=1", "either commit or abort"},
		{"marker pid=1 commit abort", "either commit or abort"},
		{"data pid=1 epoch=40000", "epoch"},
		{"data pid=1 records=0", "records"},
		{"marker pid=1 commit records=2", "records"},
		{"marker pid=1 commit type=FOO", "control type"},
	} {
		if _, err := parse(c.line); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%q: %v, want an error saying %q", c.line, err, c.why)
		}
	}
}

// Lines skips blank lines and stops at the first bad one.
func TestLines(t *testing.T) {
	ls, err := Lines("data pid=1\n\n  marker pid=1 commit\n")
	if err != nil || len(ls) != 2 || ls[0].Marker || !ls[1].Marker {
		t.Fatalf("%+v, %v", ls, err)
	}
	if _, err := Lines("data pid=1\nbogus\n"); err == nil {
		t.Fatal("bad second line accepted")
	}
}

// Bytes builds the batch the line describes, as codec reads it back.
func TestBytes(t *testing.T) {
	must := func(line string) Line {
		l, err := parse(line)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	b := codec.Batch(must("data pid=5 epoch=3 seq=7 records=4 txn offset=9").Bytes(t, 1000))
	if b.VerifyCRC() != nil || b.BaseOffset() != 0 || b.PartitionLeaderEpoch() != 0 || b.ProducerID() != 5 ||
		b.ProducerEpoch() != 3 || b.BaseSequence() != 7 || b.RecordsCount() != 4 || !b.IsTransactional() ||
		b.IsControl() || b.BaseTimestamp() != 1000 || b.MaxTimestamp() != 1003 {
		t.Errorf("data: %x", []byte(b))
	}
	for _, c := range []struct {
		line    string
		typ     codec.ControlType
		records int32
	}{
		{"marker pid=2 epoch=4 abort coord=9", codec.ControlAbort, 1},
		{"marker pid=2 epoch=4 commit coord=9 type=LEADER_CHANGE", codec.ControlLeaderChange, 1},
		{"marker pid=2 epoch=4 commit coord=9 records=0", codec.ControlUnknown, 0},
	} {
		b := codec.Batch(must(c.line).Bytes(t, 2000))
		if b.VerifyCRC() != nil || b.PartitionLeaderEpoch() != codec.NoPartitionLeaderEpoch || b.ProducerID() != 2 ||
			b.ProducerEpoch() != 4 || b.BaseSequence() != codec.NoSequence || !b.IsControl() || !b.IsTransactional() ||
			b.RecordsCount() != c.records || b.MaxTimestamp() != 2000 {
			t.Errorf("%s: %x", c.line, []byte(b))
			continue
		}
		if c.records == 0 {
			continue
		}
		cr, err := b.ControlRecord()
		if err != nil || cr.Type != c.typ {
			t.Errorf("%s: control record %+v, %v", c.line, cr, err)
			continue
		}
		if m, err := codec.ParseEndTxnMarker(cr.Value); err != nil || m.CoordinatorEpoch != 9 {
			t.Errorf("%s: marker value %+v, %v", c.line, m, err)
		}
	}
}
