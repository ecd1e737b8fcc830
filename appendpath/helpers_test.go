package appendpath

import (
	"bytes"
	"testing"
	"time"

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

func mkMarker(pid int64, epoch int16, coordEpoch int32, abort bool) []byte {
	return codec.AppendEndTxnMarker(nil, pid, epoch, coordEpoch, abort, 1700000000500)
}

// withOffsets returns a copy of b with its base offset (and leader epoch) set,
// as a source log holds it.
func withOffsets(b []byte, base int64, ep int32) []byte {
	c := bytes.Clone(b)
	codec.Batch(c).SetBaseOffset(base)
	codec.Batch(c).SetPartitionLeaderEpoch(ep)
	return c
}

// chunk concatenates batches.
func chunk(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// testNow is the clock of test partitions: just after the test batches'
// timestamps, so no producer expires on a snapshot load.
func testNow() time.Time { return time.UnixMilli(1700000001000) }

func mustOpen(t testing.TB, cfg Config) *Partition {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = testNow
	}
	p, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll returns every batch of p as copies.
func readAll(t testing.TB, p *Partition) [][]byte {
	t.Helper()
	var out [][]byte
	for b, err := range p.Batches(p.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(b))
	}
	return out
}
