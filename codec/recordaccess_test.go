package codec

import (
	"math"
	"testing"
)

// The record iterator gives each record's absolute offset, timestamp and
// sequence as Kafka's DefaultRecord#offset, #timestamp and #sequence do
// (DefaultRecordBatchTest's iteration checks): baseOffset + offsetDelta,
// maxTimestamp under LogAppendTime or baseTimestamp + timestampDelta, and
// baseSequence advanced by offsetDelta with wrap-around.
func TestRecordIterAbsoluteFields(t *testing.T) {
	recs := []Record{{OffsetDelta: 0, TimestampDelta: 0}, {OffsetDelta: 1, TimestampDelta: 7}, {OffsetDelta: 2, TimestampDelta: 3}}
	for _, c := range []struct {
		name    string
		attrs   Attributes
		baseSeq int32
		codec   Compression
		seqs    []int32
		ts      []int64
	}{
		{"CreateTime", 0, 10, CompressionNone, []int32{10, 11, 12}, []int64{1000, 1007, 1003}},
		{"SequenceWraps", 0, math.MaxInt32 - 1, CompressionNone, []int32{math.MaxInt32 - 1, math.MaxInt32, 0}, []int64{1000, 1007, 1003}},
		{"NoSequence", 0, NoSequence, CompressionNone, []int32{-1, -1, -1}, []int64{1000, 1007, 1003}},
		{"NegativeSequence", 0, -5, CompressionNone, []int32{-1, -1, -1}, []int64{1000, 1007, 1003}}, // baseSequence >= 0 ? ... : NO_SEQUENCE
		{"LogAppendTime", AttrLogAppendTime, 0, CompressionNone, []int32{0, 1, 2}, []int64{5000, 5000, 5000}},
		{"Compressed", 0, 4, CompressionGzip, []int32{4, 5, 6}, []int64{1000, 1007, 1003}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := BatchHeader{BaseOffset: 40, BaseTimestamp: 1000, Attributes: c.attrs, ProducerID: 9, BaseSequence: c.baseSeq}
			if c.attrs.LogAppendTime() {
				h.MaxTimestamp = 5000
			}
			b, err := AppendBatch(nil, h, recs, c.codec)
			if err != nil {
				t.Fatal(err)
			}
			it, _, err := Batch(b).OpenRecords(nil, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				var r Record
				if err := it.Read(&r); err != nil {
					t.Fatal(err)
				}
				if got := it.Offset(&r); got != 40+int64(i) {
					t.Errorf("record %d offset %d, want %d", i, got, 40+i)
				}
				if got := it.Timestamp(&r); got != c.ts[i] {
					t.Errorf("record %d timestamp %d, want %d", i, got, c.ts[i])
				}
				if got := it.Sequence(&r); got != c.seqs[i] {
					t.Errorf("record %d sequence %d, want %d", i, got, c.seqs[i])
				}
			}
		})
	}
}

// An iterator made by NewRecordIter knows no batch until In binds one.
func TestRecordIterInBindsBatch(t *testing.T) {
	b, err := AppendBatch(nil, BatchHeader{BaseOffset: 100, BaseTimestamp: 50, ProducerID: 1, BaseSequence: 3},
		[]Record{{OffsetDelta: 0}, {OffsetDelta: 1, TimestampDelta: 2}}, CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	bare := NewRecordIter(b[HeaderSize:], 2)
	bound := bare.In(Batch(b))
	var r Record
	if err := bare.Read(&r); err != nil {
		t.Fatal(err)
	}
	if err := bare.Read(&r); err != nil {
		t.Fatal(err)
	}
	if bare.Offset(&r) != 1 || bare.Timestamp(&r) != 2 || bare.Sequence(&r) != NoSequence {
		t.Fatalf("unbound: offset %d timestamp %d sequence %d", bare.Offset(&r), bare.Timestamp(&r), bare.Sequence(&r))
	}
	if bound.Offset(&r) != 101 || bound.Timestamp(&r) != 52 || bound.Sequence(&r) != 4 {
		t.Fatalf("bound: offset %d timestamp %d sequence %d", bound.Offset(&r), bound.Timestamp(&r), bound.Sequence(&r))
	}
}
