// Package testlog builds what the tests of the log's packages (storage,
// appendpath) read and write: test batches and the independent model of a
// segment's index files; and it decodes a batch's records for them and for
// codec's tests. Tests only.
package testlog

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// IndexIntervalBytes is storage.IndexIntervalBytes, Kafka's
// index.interval.bytes default; written out here because the model must not
// import the code it checks; storage's TestIndexIntervalMatches holds the
// two equal.
const IndexIntervalBytes = 4096

// Spec describes a test batch: an uncompressed v2 batch of Records records
// whose values are Value bytes each (default 16), the n-th of them the letter
// 'a'+n repeated, at base timestamp TS (default 1700000000000).
type Spec struct {
	PID      int64
	Epoch    int16
	Seq      int32
	Records  int
	Txn      bool
	Value    int   // value bytes per record (default 16)
	TS       int64 // base timestamp (default 1700000000000)
	Base     int64 // base offset
	LeaderEp int32
}

// Batch builds the batch s describes.
func Batch(t testing.TB, s Spec) []byte {
	t.Helper()
	if s.Records == 0 {
		s.Records = 1
	}
	if s.Value == 0 {
		s.Value = 16
	}
	if s.TS == 0 {
		s.TS = 1700000000000
	}
	recs := make([]codec.Record, s.Records)
	for i := range recs {
		recs[i] = codec.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, s.Value)}
	}
	var attrs codec.Attributes
	if s.Txn {
		attrs |= codec.AttrTransactional
	}
	b, err := codec.AppendBatch(nil, codec.BatchHeader{
		BaseOffset: s.Base, PartitionLeaderEpoch: s.LeaderEp, Attributes: attrs, BaseTimestamp: s.TS,
		ProducerID: s.PID, ProducerEpoch: s.Epoch, BaseSequence: s.Seq,
	}, recs, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WithOffsets returns a copy of b with its base offset (and leader epoch) set,
// as a source log holds it.
func WithOffsets(b []byte, base int64, ep int32) []byte {
	c := bytes.Clone(b)
	codec.Batch(c).SetBaseOffset(base)
	codec.Batch(c).SetPartitionLeaderEpoch(ep)
	return c
}

// RefIndexes is the independent model of a segment's index files: a walk of
// the .log with codec.Next that follows Kafka's LogSegment.append literally
// (a bytesSinceLastIndexEntry counter checked before each batch is counted,
// TimeIndex.maybeAppend's lastEntry starting at (NO_TIMESTAMP, base)), plus
// the roll entry when sealed. It encodes with encoding/binary directly.
func RefIndexes(t testing.TB, log []byte, base int64, sealed bool) (idx, tidx []byte) {
	t.Helper()
	since, pos := 0, 0
	maxTS, maxOff := int64(-1), int64(-1)
	lastTS := int64(-1)
	timeEntry := func(ts, off int64) {
		if ts > lastTS {
			tidx = binary.BigEndian.AppendUint64(tidx, uint64(ts))
			tidx = binary.BigEndian.AppendUint32(tidx, uint32(off-base))
			lastTS = ts
		}
	}
	for rest := log; len(rest) > 0; {
		b, r, err := codec.Next(rest)
		if err != nil {
			t.Fatalf("segment %d: %v", base, err)
		}
		if b.MaxTimestamp() > maxTS {
			maxTS, maxOff = b.MaxTimestamp(), b.LastOffset()
		}
		if since > IndexIntervalBytes {
			idx = binary.BigEndian.AppendUint32(idx, uint32(b.LastOffset()-base))
			idx = binary.BigEndian.AppendUint32(idx, uint32(pos))
			timeEntry(maxTS, maxOff)
			since = 0
		}
		since += len(b)
		pos += len(b)
		rest = r
	}
	if sealed {
		timeEntry(maxTS, maxOff)
	}
	return idx, tidx
}

// Records decodes every record of b (decompressing it when needed) with the
// iterator bound to b, for Offset and Timestamp, failing t on any error.
func Records(t testing.TB, b codec.Batch) ([]codec.Record, codec.RecordIter) {
	t.Helper()
	it, _, err := b.OpenRecords(nil, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var out []codec.Record
	for r, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out, it
}
