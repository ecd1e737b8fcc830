package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// bspec describes a test batch.
type bspec struct {
	pid      int64
	epoch    int16
	seq      int32
	records  int
	txn      bool
	value    int   // value bytes per record (default 16)
	ts       int64 // base timestamp (default 1700000000000)
	base     int64 // base offset
	leaderEp int32
}

func mkBatch(t testing.TB, s bspec) []byte {
	t.Helper()
	if s.records == 0 {
		s.records = 1
	}
	if s.value == 0 {
		s.value = 16
	}
	if s.ts == 0 {
		s.ts = 1700000000000
	}
	recs := make([]codec.Record, s.records)
	for i := range recs {
		recs[i] = codec.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Value: bytes.Repeat([]byte{byte('a' + i%26)}, s.value)}
	}
	var attrs codec.Attributes
	if s.txn {
		attrs |= codec.AttrTransactional
	}
	b, err := codec.AppendBatch(nil, codec.BatchHeader{
		BaseOffset: s.base, PartitionLeaderEpoch: s.leaderEp, Attributes: attrs, BaseTimestamp: s.ts,
		ProducerID: s.pid, ProducerEpoch: s.epoch, BaseSequence: s.seq,
	}, recs, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withOffsets returns a copy of b with its base offset (and leader epoch) set,
// as a source log holds it.
func withOffsets(b []byte, base int64, ep int32) []byte {
	c := bytes.Clone(b)
	codec.Batch(c).SetBaseOffset(base)
	codec.Batch(c).SetPartitionLeaderEpoch(ep)
	return c
}

// refIndexes is the independent model of a segment's index files: a walk of
// the .log with codec.Next that follows Kafka's LogSegment.append literally
// (a bytesSinceLastIndexEntry counter checked before each batch is counted,
// TimeIndex.maybeAppend's lastEntry starting at (NO_TIMESTAMP, base)), plus
// the roll entry when sealed. It encodes with encoding/binary directly.
func refIndexes(t testing.TB, log []byte, base int64, sealed bool) (idx, tidx []byte) {
	t.Helper()
	since, pos := 0, 0
	maxTs, maxOff := int64(-1), int64(-1)
	lastTs := int64(-1)
	timeEntry := func(ts, off int64) {
		if ts > lastTs {
			tidx = binary.BigEndian.AppendUint64(tidx, uint64(ts))
			tidx = binary.BigEndian.AppendUint32(tidx, uint32(off-base))
			lastTs = ts
		}
	}
	for rest := log; len(rest) > 0; {
		b, r, err := codec.Next(rest)
		if err != nil {
			t.Fatalf("segment %d: %v", base, err)
		}
		if b.MaxTimestamp() > maxTs {
			maxTs, maxOff = b.MaxTimestamp(), b.LastOffset()
		}
		if since > IndexIntervalBytes {
			idx = binary.BigEndian.AppendUint32(idx, uint32(b.LastOffset()-base))
			idx = binary.BigEndian.AppendUint32(idx, uint32(pos))
			timeEntry(maxTs, maxOff)
			since = 0
		}
		since += len(b)
		pos += len(b)
		rest = r
	}
	if sealed {
		timeEntry(maxTs, maxOff)
	}
	return idx, tidx
}

// unhex decodes an annotated hex dump: '#' starts a comment, spaces ignored.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.Join(strings.Fields(line), "")
		b, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}
