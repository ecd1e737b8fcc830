// Package testbatch is the one grammar of the batch lines in the datadriven
// tests of psm and appendpath: a line describes one v2 batch, Lines reads them
// (one Line each) and Line.Bytes builds the batch. Tests only.
//
//	data pid=P [epoch=E] [seq=S] [records=N] [txn] [offset=O] [leader-epoch=L]
//	marker pid=P [epoch=E] [coord=C] commit|abort [type=T] [records=0] [offset=O] [leader-epoch=L]
//
// Numbers are decimal; an absent epoch, seq, coord, offset or leader-epoch
// is 0 and an absent records 1. txn makes a data batch transactional (a
// marker always is). A marker is a COMMIT or ABORT control batch of one
// record whose value carries coordinator epoch C; type=T replaces the key's
// type with Kafka's name of another (codec.ControlType: LEADER_CHANGE,
// MIRROR_PID_RESET, …), records=0 leaves the control batch without a record.
// offset= and leader-epoch= are the base offset and partition leader epoch
// a source log stores; a test that has no source log refuses them
// (Line.Placed).
package testbatch

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
)

// Line is one batch line.
type Line struct {
	Marker      bool // a marker line, else a data line
	PID         int64
	Epoch       int16
	Seq         int32 // data: the base sequence
	Records     int32
	Txn         bool              // data: transactional
	Abort       bool              // marker: ABORT, else COMMIT
	Coord       int32             // marker: the coordinator epoch
	Type        codec.ControlType // marker: the key's type (COMMIT or ABORT unless type=)
	Offset      int64
	LeaderEpoch int32
	Placed      bool // offset= or leader-epoch= given
}

// Lines parses every non-blank line of input.
func Lines(input string) ([]Line, error) {
	var out []Line
	for s := range strings.Lines(input) {
		if strings.TrimSpace(s) == "" {
			continue
		}
		l, err := parse(s)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// parse reads one batch line. The error names the line and what is wrong:
// an unknown kind, argument or flag, a number out of its field's range, no
// pid=, a marker that is not exactly one of commit and abort.
func parse(line string) (Line, error) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return Line{}, fmt.Errorf("testbatch: empty batch line")
	}
	l := Line{Records: 1}
	switch fields[0] {
	case "data":
	case "marker":
		l.Marker = true
	default:
		return Line{}, fmt.Errorf("testbatch: %q: unknown batch kind %q", line, fields[0])
	}
	var commit, hasPID, hasType bool
	for _, f := range fields[1:] {
		k, v, hasValue := strings.Cut(f, "=")
		var err error
		switch {
		case !hasValue && f == "txn" && !l.Marker:
			l.Txn = true
		case !hasValue && f == "commit" && l.Marker:
			commit = true
		case !hasValue && f == "abort" && l.Marker:
			l.Abort = true
		case !hasValue:
			return Line{}, fmt.Errorf("testbatch: %q: unknown flag %s", line, f)
		case k == "pid":
			l.PID, err = strconv.ParseInt(v, 10, 64)
			hasPID = true
		case k == "epoch":
			l.Epoch, err = parseInt[int16](v, 16)
		case k == "seq" && !l.Marker:
			l.Seq, err = parseInt[int32](v, 32)
		case k == "records":
			l.Records, err = parseInt[int32](v, 32)
			if err == nil && (!l.Marker && l.Records < 1 || l.Marker && l.Records != 0 && l.Records != 1) {
				err = fmt.Errorf("%d records: a data batch has at least one, a marker one or none", l.Records)
			}
		case k == "coord" && l.Marker:
			l.Coord, err = parseInt[int32](v, 32)
		case k == "type" && l.Marker:
			err = l.Type.UnmarshalText([]byte(v))
			hasType = true
		case k == "offset":
			l.Offset, err = strconv.ParseInt(v, 10, 64)
			l.Placed = true
		case k == "leader-epoch":
			l.LeaderEpoch, err = parseInt[int32](v, 32)
			l.Placed = true
		default:
			return Line{}, fmt.Errorf("testbatch: %q: unknown argument %s=", line, k)
		}
		if err != nil {
			return Line{}, fmt.Errorf("testbatch: %q: %s: %w", line, k, err)
		}
	}
	if !hasPID {
		return Line{}, fmt.Errorf("testbatch: %q lacks pid=", line)
	}
	if l.Marker && commit == l.Abort {
		return Line{}, fmt.Errorf("testbatch: %q: a marker is either commit or abort", line)
	}
	if l.Marker && !hasType {
		l.Type = codec.ControlCommit
		if l.Abort {
			l.Type = codec.ControlAbort
		}
	}
	return l, nil
}

func parseInt[T int16 | int32](s string, bits int) (T, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	return T(n), err
}

// Bytes builds the batch l describes as its producer or coordinator sends
// it: base offset 0, partition leader epoch 0 (-1 for a marker, as Kafka's
// coordinator writes it), base timestamp ts. Offset and LeaderEpoch are for
// a caller that places it in a source log (testlog.WithOffsets). A data
// batch is testlog.Batch's (uncompressed, 16-byte values, record i at ts +
// i); a COMMIT or ABORT marker of one record is codec.AppendEndTxnMarker's.
func (l Line) Bytes(t testing.TB, ts int64) []byte {
	t.Helper()
	switch {
	case !l.Marker:
		return testlog.Batch(t, testlog.Spec{PID: l.PID, Epoch: l.Epoch, Seq: l.Seq, Records: int(l.Records),
			Txn: l.Txn, TS: ts})
	case l.Records == 1 && (l.Type == codec.ControlCommit || l.Type == codec.ControlAbort):
		return codec.AppendEndTxnMarker(nil, l.PID, l.Epoch, l.Coord, l.Type == codec.ControlAbort, ts)
	}
	var recs []codec.Record
	if l.Records == 1 {
		recs = []codec.Record{{Key: codec.AppendControlKey(nil, l.Type),
			Value: codec.EndTxnMarker{CoordinatorEpoch: l.Coord}.AppendTo(nil)}}
	}
	b, err := codec.AppendBatch(nil, codec.BatchHeader{PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch,
		Attributes: codec.AttrTransactional | codec.AttrControl, BaseTimestamp: ts, MaxTimestamp: ts,
		ProducerID: l.PID, ProducerEpoch: l.Epoch, BaseSequence: codec.NoSequence}, recs, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
