package appendpath

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/cputime"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Test batches of the LogValidator tests: producer 5, epoch 0, records with
// keys "k0".., base timestamp vBase; testNow is vBase+1000.
const vBase = 1700000000000

var allCodecs = []codec.Compression{codec.CompressionNone, codec.CompressionGzip, codec.CompressionSnappy,
	codec.CompressionLZ4, codec.CompressionZstd}

// vRecs returns n records: key "k<i>", a 40-byte value, one header,
// timestampDelta i, offsetDelta i.
func vRecs(n int) []codec.Record {
	recs := make([]codec.Record, n)
	for i := range recs {
		recs[i] = codec.Record{
			TimestampDelta: int64(i), OffsetDelta: int32(i),
			Key:     fmt.Appendf(nil, "k%d", i),
			Value:   bytes.Repeat([]byte{byte('a' + i%26)}, 40),
			Headers: codec.MakeHeaders(codec.Header{Key: []byte("h"), Value: []byte{byte(i)}}),
		}
	}
	return recs
}

func vHeader(seq int32) codec.BatchHeader {
	return codec.BatchHeader{BaseTimestamp: vBase, ProducerID: 5, BaseSequence: seq,
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch}
}

func vBatch(t testing.TB, h codec.BatchHeader, recs []codec.Record, c codec.Compression) []byte {
	t.Helper()
	b, err := codec.AppendBatch(nil, h, recs, c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawBatch builds a batch whose records section is raw compressed with c
// (gzip or zstd) under a header of count records: a way to write records
// the builder would not.
func rawBatch(t testing.TB, h codec.BatchHeader, count int32, raw []byte, c codec.Compression) []byte {
	t.Helper()
	var z []byte
	switch c {
	case codec.CompressionGzip:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
		z = buf.Bytes()
	case codec.CompressionZstd:
		e, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		z = e.EncodeAll(raw, nil)
	case codec.CompressionNone:
		z = raw
	default:
		t.Fatalf("rawBatch: codec %v", c)
	}
	h.LastOffsetDelta = count - 1
	b := vBatch(t, h, nil, codec.CompressionNone)
	b = append(b, z...)
	bb := codec.Batch(b)
	binaryPut32(bb[codec.OffBatchLength:], uint32(len(b)-codec.LogOverhead))
	binaryPut32(bb[codec.OffRecordsCount:], uint32(count))
	bb.SetAttributes(bb.Attributes() | codec.Attributes(c))
	bb.UpdateCRC()
	return b
}

func binaryPut32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// encode returns the records encoded back to back (the decompressed form).
func encode(recs []codec.Record) []byte {
	var raw []byte
	for _, r := range recs {
		raw = codec.AppendRecord(raw, r)
	}
	return raw
}

// mustReject appends in as a CLIENT batch and checks that it fails with the
// Kafka error code (errors.Is and errors.As, code and name) and reason, that
// nothing was written, producer state is byte for byte what it was and in
// is unchanged. It returns the *RecordError if the error is one.
func mustReject(t *testing.T, p *Partition, in []byte, code *kafkaerr.Error, reason error) *RecordError {
	t.Helper()
	orig := bytes.Clone(in)
	leo, snap, n := p.LogEndOffset(), p.Snapshot(), len(readAll(t, p))
	_, err := p.AppendClient(in)
	if !errors.Is(err, code) || (reason != nil && !errors.Is(err, reason)) {
		t.Fatalf("got %v, want %v / %v", err, code, reason)
	}
	var ke *kafkaerr.Error
	if !errors.As(err, &ke) || ke.Code != code.Code || ke.Name != code.Name {
		t.Fatalf("Kafka error %+v, want %+v", ke, code)
	}
	if p.LogEndOffset() != leo || len(readAll(t, p)) != n || !bytes.Equal(snap, p.Snapshot()) {
		t.Fatal("rejected append changed the partition")
	}
	if !bytes.Equal(in, orig) {
		t.Fatal("caller's batch was modified")
	}
	var re *RecordError
	errors.As(err, &re)
	return re
}

// mustAccept appends in as a CLIENT batch and returns the stored copy,
// checking that in is unchanged and the stored CRC verifies.
func mustAccept(t *testing.T, p *Partition, in []byte) codec.Batch {
	t.Helper()
	return mustStore(t, p, in, p.AppendClient)
}

// mustStore is mustAccept with the append given (AppendClient or
// AppendCoordinator).
func mustStore(t *testing.T, p *Partition, in []byte, appendFn func([]byte) (Result, error)) codec.Batch {
	t.Helper()
	orig := bytes.Clone(in)
	if _, err := appendFn(in); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, orig) {
		t.Fatal("caller's batch was modified")
	}
	all := readAll(t, p)
	b := codec.Batch(all[len(all)-1])
	if err := b.VerifyCRC(); err != nil {
		t.Fatalf("stored batch: %v", err)
	}
	return b
}

// recordsOf decodes every record of b.
func recordsOf(t testing.TB, b codec.Batch) []codec.Record {
	t.Helper()
	recs, _ := testlog.Records(t, b)
	return recs
}

func wantIndexes(t *testing.T, re *RecordError, count int, idx ...int32) {
	t.Helper()
	if re == nil {
		t.Fatal("not a *RecordError")
	}
	if re.Count != count || !slices.Equal(re.Indexes, idx) {
		t.Fatalf("indexes %v count %d, want %v count %d", re.Indexes, re.Count, idx, count)
	}
}

// --- compressed batches ---

func TestValidateCompressedAcceptedInPlace(t *testing.T) {
	for _, c := range allCodecs {
		t.Run("codec="+c.String(), func(t *testing.T) {
			p := mustOpen(t, Config{LeaderEpoch: 3})
			in := vBatch(t, vHeader(0), vRecs(7), c)
			s := mustAccept(t, p, in)
			// In place: only baseOffset and the leader epoch (outside the CRC) differ.
			if !bytes.Equal(s[codec.CRCStart-4:], in[codec.CRCStart-4:]) || s.PartitionLeaderEpoch() != 3 {
				t.Fatal("stored batch is not the caller's bytes")
			}
			if e, ok := p.Producer(5); !ok || e.LastSeq() != 6 {
				t.Fatalf("producer %+v", e)
			}
		})
	}
}

func TestValidateCompressedStructuralDefect(t *testing.T) {
	// Record 2 has a negative header key length, which Kafka's partial read
	// refuses too.
	raw := append(encode(vRecs(2)), 14, 0, 4, 4, 1, 1, 2, 1, 1) // len 7, attrs, tsΔ 2, offΔ 2, null key, null value, 1 header, key len -1, value len -1
	p := mustOpen(t, Config{})
	re := mustReject(t, p, rawBatch(t, vHeader(0), 3, raw, codec.CompressionGzip), kafkaerr.InvalidRecord, ErrRecordStructure)
	wantIndexes(t, re, 1, 2)
	if !errors.Is(re, codec.ErrHeaderKeyLength) {
		t.Fatalf("cause %v", re.Cause)
	}
}

// TestValidateCompressedRecordLengthIgnored: LogValidator reads a compressed
// batch with the partial read, which ignores each record's length field, so
// Kafka accepts and stores (in place) a batch whose record lengths are
// wrong; the same records uncompressed are refused, as DefaultRecord.readFrom
// refuses them.
func TestValidateCompressedRecordLengthIgnored(t *testing.T) {
	recs := vRecs(3)
	raw := encode(recs)
	raw[len(encode(recs[:2]))] = 0x7f // record 2's length: -64
	for _, c := range []codec.Compression{codec.CompressionGzip, codec.CompressionZstd} {
		p := mustOpen(t, Config{})
		h := vHeader(0)
		h.MaxTimestamp = vBase + 2 // right already: nothing to fix
		in := rawBatch(t, h, 3, raw, c)
		s := mustAccept(t, p, in)
		if !bytes.Equal(s[codec.CRCStart-4:], in[codec.CRCStart-4:]) {
			t.Fatalf("%v: not kept in place", c)
		}
	}
	p := mustOpen(t, Config{})
	re := mustReject(t, p, rawBatch(t, vHeader(0), 3, raw, codec.CompressionNone), kafkaerr.InvalidRecord, ErrRecordStructure)
	wantIndexes(t, re, 1, 2)
}

// TestValidateCompressedPartialOnlyRebuild: a batch only the partial read
// accepts (a wrong record length) whose inner offsets also need a rebuild.
// Kafka's rebuild calls key() on its partial records and throws
// (UNKNOWN_SERVER_ERROR); we cannot rebuild records the full read refuses
// and answer INVALID_RECORD, the full reader's answer
// (docs/kafka-differences.md).
func TestValidateCompressedPartialOnlyRebuild(t *testing.T) {
	recs := offsetsOff(3)
	raw := encode(recs)
	raw[len(encode(recs[:2]))] = 0x7f // record 2's length: -64
	p := mustOpen(t, Config{})
	re := mustReject(t, p, rawBatch(t, vHeader(0), 3, raw, codec.CompressionGzip), kafkaerr.InvalidRecord, ErrRecordStructure)
	wantIndexes(t, re, 1, 2)
	if !errors.Is(re, codec.ErrRecordLength) {
		t.Fatalf("cause %v", re.Cause)
	}
}

func TestValidateCompressedFewerRecordsThanCount(t *testing.T) {
	p := mustOpen(t, Config{})
	re := mustReject(t, p, rawBatch(t, vHeader(0), 4, encode(vRecs(3)), codec.CompressionZstd),
		kafkaerr.InvalidRecord, codec.ErrRecordTruncated)
	wantIndexes(t, re, 1, 3)
}

func TestValidateCompressedMoreRecordsThanCount(t *testing.T) {
	p := mustOpen(t, Config{})
	re := mustReject(t, p, rawBatch(t, vHeader(0), 2, encode(vRecs(3)), codec.CompressionGzip),
		kafkaerr.InvalidRecord, codec.ErrRecordsLeftover)
	wantIndexes(t, re, 1, 1)
}

func TestValidateUncompressedCountMismatch(t *testing.T) {
	p := mustOpen(t, Config{})
	mustReject(t, p, rawBatch(t, vHeader(0), 4, encode(vRecs(3)), codec.CompressionNone),
		kafkaerr.InvalidRecord, codec.ErrRecordTruncated)
	mustReject(t, p, rawBatch(t, vHeader(0), 2, encode(vRecs(3)), codec.CompressionNone),
		kafkaerr.InvalidRecord, codec.ErrRecordsLeftover)
}

func TestValidateCompressedCorruptStream(t *testing.T) {
	in := vBatch(t, vHeader(0), vRecs(5), codec.CompressionGzip)
	in = in[:len(in)-9] // cut the gzip trailer
	binaryPut32(in[codec.OffBatchLength:], uint32(len(in)-codec.LogOverhead))
	codec.Batch(in).UpdateCRC()
	p := mustOpen(t, Config{})
	re := mustReject(t, p, in, kafkaerr.InvalidRecord, ErrBadCompression)
	wantIndexes(t, re, 0)
}

func TestValidateDecompressedTooLarge(t *testing.T) {
	recs := vRecs(50) // about 3 KiB decompressed
	for _, c := range allCodecs[1:] {
		t.Run("codec="+c.String(), func(t *testing.T) {
			p := mustOpen(t, Config{MaxDecompressedBytes: 1024})
			mustReject(t, p, vBatch(t, vHeader(0), recs, c), kafkaerr.InvalidRecord, ErrDecompressedTooLarge)
			if cap(p.val.buf) > 1025 {
				t.Fatalf("scratch grew to %d past the limit", cap(p.val.buf))
			}
			// Within the limit the same batch goes in.
			p = mustOpen(t, Config{MaxDecompressedBytes: len(encode(recs))})
			mustAccept(t, p, vBatch(t, vHeader(0), recs, c))
		})
	}
}

func TestValidateUnknownCodec(t *testing.T) {
	in := vBatch(t, vHeader(0), vRecs(2), codec.CompressionNone)
	codec.Batch(in).SetAttributes(6)
	p := mustOpen(t, Config{})
	mustReject(t, p, in, kafkaerr.UnknownServerError, ErrUnsupportedCompression)
}

// offsetsOff returns vRecs(n) with inner offset deltas other than 0..n-1
// (the last stays n-1 so that recordsCount = lastOffsetDelta+1 holds).
func offsetsOff(n int) []codec.Record {
	recs := vRecs(n)
	for i := range n - 1 {
		recs[i].OffsetDelta = int32(n - 2 - i) // reversed
	}
	recs[1].Key = nil
	return recs
}

func TestValidateCompressedRebuild(t *testing.T) {
	for _, c := range allCodecs[1:] {
		t.Run("codec="+c.String(), func(t *testing.T) {
			p := mustOpen(t, Config{LeaderEpoch: 4})
			mustAccept(t, p, vBatch(t, vHeader(0), vRecs(2), c)) // the log end is 2 now
			h := vHeader(2)
			h.Attributes = codec.AttrDeleteHorizon // dropped by the rebuild
			recs := offsetsOff(6)
			recs[2].Attributes = 9 // record attributes are rewritten as 0
			in := vBatch(t, h, recs, c)
			r, err := p.AppendClient(in)
			if err != nil || r.FirstOffset != 2 || r.LastOffset != 7 {
				t.Fatalf("%+v %v", r, err)
			}
			all := readAll(t, p)
			s := codec.Batch(all[1])
			if err := s.VerifyCRC(); err != nil || s.Compression() != c || s.BaseOffset() != 2 ||
				s.PartitionLeaderEpoch() != 4 || s.LastOffsetDelta() != 5 || s.RecordsCount() != 6 ||
				s.ProducerID() != 5 || s.BaseSequence() != 2 || s.Attributes() != codec.Attributes(c) ||
				s.BaseTimestamp() != vBase || s.MaxTimestamp() != vBase+5 {
				t.Fatalf("rebuilt header %+v crc %v", s.Header(), s.VerifyCRC())
			}
			if s.NextOffset() != p.LogEndOffset() {
				t.Fatalf("log end %d, batch ends at %d", p.LogEndOffset(), s.NextOffset())
			}
			got := recordsOf(t, s)
			for i, r := range got {
				w := recs[i]
				if r.OffsetDelta != int32(i) || r.TimestampDelta != w.TimestampDelta || r.Attributes != 0 ||
					!bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
					!bytes.Equal(r.Value, w.Value) || !bytes.Equal(r.Headers.Raw(), w.Headers.Raw()) {
					t.Fatalf("record %d: %+v, want %+v", i, r, w)
				}
			}
			if e, _ := p.Producer(5); e.LastSeq() != 7 || e.NumBatches != 2 {
				t.Fatalf("producer %+v", e)
			}
		})
	}
}

func TestValidateUncompressedOffsetsNotChecked(t *testing.T) {
	// assignOffsetsNonCompressed never looks at inner offsets: kept in place.
	p := mustOpen(t, Config{})
	in := vBatch(t, vHeader(0), offsetsOff(4), codec.CompressionNone)
	s := mustAccept(t, p, in)
	if !bytes.Equal(s[codec.CRCStart-4:], in[codec.CRCStart-4:]) {
		t.Fatal("uncompressed batch was rewritten")
	}
}

func TestValidateRebuildOnLogAppendTimeTopic(t *testing.T) {
	p := mustOpen(t, Config{TimestampType: LogAppendTime})
	s := mustAccept(t, p, vBatch(t, vHeader(0), offsetsOff(4), codec.CompressionZstd))
	if !s.Attributes().LogAppendTime() || s.MaxTimestamp() != testNow().UnixMilli() || s.BaseTimestamp() != vBase {
		t.Fatalf("header %+v", s.Header())
	}
	for i, r := range recordsOf(t, s) {
		if r.OffsetDelta != int32(i) {
			t.Fatalf("record %d offset delta %d", i, r.OffsetDelta)
		}
	}
}

func TestValidateRebuildNegativeTimestamp(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp = -10
	h.MaxTimestamp = -7
	p := mustOpen(t, Config{})
	re := mustReject(t, p, vBatch(t, h, offsetsOff(4), codec.CompressionGzip), kafkaerr.UnknownServerError,
		ErrRebuildNegativeTimestamp)
	wantIndexes(t, re, 1, 0)
}

func TestValidateRebuildTooLarge(t *testing.T) {
	// Snappy on random values barely compresses, so rebuilding inner offsets
	// 0 (one varint byte) as 0..199 (two bytes from 64 on) grows the batch.
	recs := vRecs(200)
	for i := range recs {
		recs[i].OffsetDelta = 0
		for j := range recs[i].Value {
			recs[i].Value[j] = byte(i*131 + j*17 + i*j*7)
		}
	}
	recs[199].OffsetDelta = 199
	in := vBatch(t, vHeader(0), recs, codec.CompressionSnappy)
	p := mustOpen(t, Config{MaxMessageBytes: len(in)})
	mustReject(t, p, in, kafkaerr.MessageTooLarge, nil)
	p = mustOpen(t, Config{MaxMessageBytes: len(in) + 1000})
	if s := mustAccept(t, p, in); len(s) <= len(in) {
		t.Fatalf("rebuilt %d bytes, original %d: the test does not grow the batch", len(s), len(in))
	}
}

// --- timestamps ---

func windowed(before, after int64) Config {
	return Config{TimestampBeforeMaxMs: before, TimestampAfterMaxMs: after}
}

func TestValidateTimestampTooOld(t *testing.T) {
	p := mustOpen(t, windowed(999, 0)) // now = vBase+1000: records 0 and 1 are 1000 and 999 ms old
	re := mustReject(t, p, vBatch(t, vHeader(0), vRecs(4), codec.CompressionNone), kafkaerr.InvalidTimestamp,
		ErrTimestampOutOfRange)
	wantIndexes(t, re, 1, 0)
	p = mustOpen(t, windowed(1000, 0))
	mustAccept(t, p, vBatch(t, vHeader(0), vRecs(4), codec.CompressionNone))
}

func TestValidateTimestampTooNew(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp = vBase + 1000 + 8 // records 8..13 ms ahead of now
	for _, c := range []codec.Compression{codec.CompressionNone, codec.CompressionLZ4} {
		t.Run("codec="+c.String(), func(t *testing.T) {
			p := mustOpen(t, windowed(0, 10))
			re := mustReject(t, p, vBatch(t, h, vRecs(6), c), kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
			wantIndexes(t, re, 3, 3, 4, 5)
		})
	}
}

func TestValidateTimestampUsesPartitionClock(t *testing.T) {
	now := time.UnixMilli(vBase + 5000)
	p := mustOpen(t, Config{TimestampBeforeMaxMs: 4000, Now: func() time.Time { return now }})
	mustReject(t, p, vBatch(t, vHeader(0), vRecs(2), codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	now = time.UnixMilli(vBase + 4000)
	mustAccept(t, p, vBatch(t, vHeader(0), vRecs(2), codec.CompressionNone))
}

func TestValidateTimestampIndexesCapped(t *testing.T) {
	p := mustOpen(t, windowed(1, 0))
	re := mustReject(t, p, vBatch(t, vHeader(0), vRecs(20), codec.CompressionNone), kafkaerr.InvalidTimestamp,
		ErrTimestampOutOfRange)
	wantIndexes(t, re, 20, 0, 1, 2, 3, 4, 5, 6, 7)
	if len(re.Indexes) != MaxRecordErrorIndexes {
		t.Fatal(len(re.Indexes))
	}
}

func TestValidateNoTimestampIsNotChecked(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp = -1 // record 0 reads as -1 (NO_TIMESTAMP), the others as 0, 1, ...
	h.MaxTimestamp = 2
	p := mustOpen(t, windowed(10, 10))
	re := mustReject(t, p, vBatch(t, h, vRecs(4), codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 3, 1, 2, 3)
	recs := vRecs(1)
	recs[0].TimestampDelta = 0
	h.MaxTimestamp = -1
	s := mustAccept(t, p, vBatch(t, h, recs, codec.CompressionNone))
	if s.MaxTimestamp() != -1 || s.Attributes().LogAppendTime() {
		t.Fatalf("header %+v", s.Header())
	}
}

func TestValidateDefaultWindowIsUnlimited(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp = math.MaxInt64 - 10 // far future and, below, far past
	p := mustOpen(t, Config{})
	mustAccept(t, p, vBatch(t, h, vRecs(3), codec.CompressionNone))
	h.BaseTimestamp, h.BaseSequence = 0, 3
	mustAccept(t, p, vBatch(t, h, vRecs(3), codec.CompressionNone))
	if p.val.windowed || p.val.before != math.MaxInt64 || p.val.after != math.MaxInt64 {
		t.Fatalf("defaults %+v", p.val)
	}
}

func TestValidateConfigRejected(t *testing.T) {
	for _, cfg := range []Config{
		{TimestampBeforeMaxMs: -1}, {TimestampAfterMaxMs: -5}, {MaxDecompressedBytes: -1}, {TimestampType: 2},
	} {
		if _, err := Open(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
}

func TestValidateProducerLogAppendTimeOnLogAppendTimeTopic(t *testing.T) {
	h := vHeader(0)
	h.Attributes = codec.AttrLogAppendTime
	p := mustOpen(t, Config{TimestampType: LogAppendTime})
	re := mustReject(t, p, vBatch(t, h, vRecs(3), codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrProducerLogAppendTime)
	wantIndexes(t, re, 3, 0, 1, 2)
}

func TestValidateProducerLogAppendTimeOnCreateTimeTopic(t *testing.T) {
	// Its records read as maxTimestamp, in range: accepted; setMaxTimestamp
	// with the topic's type then clears the bit.
	h := vHeader(0)
	h.Attributes = codec.AttrLogAppendTime | codec.AttrTransactional
	h.MaxTimestamp = vBase + 500
	p := mustOpen(t, windowed(600, 0))
	s := mustAccept(t, p, vBatch(t, h, vRecs(3), codec.CompressionNone))
	if s.Attributes() != codec.AttrTransactional || s.MaxTimestamp() != vBase+500 {
		t.Fatalf("header %+v", s.Header())
	}
	// Out of range: every record is at fault.
	h.MaxTimestamp, h.ProducerID = vBase+300, 6
	re := mustReject(t, p, vBatch(t, h, vRecs(3), codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 3, 0, 1, 2)
	// maxTimestamp -1: the records read as NO_TIMESTAMP, which a
	// LogAppendTime batch may not carry.
	h.MaxTimestamp = -1
	re = mustReject(t, p, vBatch(t, h, vRecs(2), codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrProducerLogAppendTime)
	wantIndexes(t, re, 2, 0, 1)
}

func TestValidateLogAppendTimeTopicStamps(t *testing.T) {
	for _, c := range allCodecs {
		t.Run("codec="+c.String(), func(t *testing.T) {
			p := mustOpen(t, Config{TimestampType: LogAppendTime, TimestampBeforeMaxMs: 1})
			h := vHeader(0)
			h.BaseTimestamp = 5 // not checked on a LogAppendTime topic
			in := vBatch(t, h, vRecs(3), c)
			s := mustAccept(t, p, in)
			now := testNow().UnixMilli()
			if !s.Attributes().LogAppendTime() || s.MaxTimestamp() != now || s.Compression() != c {
				t.Fatalf("header %+v", s.Header())
			}
			if s.CRC() != s.ComputeCRC() || s.CRC() == codec.Batch(in).CRC() {
				t.Fatal("CRC not recomputed")
			}
			// Only attributes, maxTimestamp and the CRC changed.
			want := bytes.Clone(in)
			copy(want[:codec.CRCStart-4], s[:codec.CRCStart-4])
			codec.Batch(want).SetAttributes(codec.Batch(want).Attributes() | codec.AttrLogAppendTime)
			codec.Batch(want).SetMaxTimestamp(now)
			if !bytes.Equal(want, s) {
				t.Fatal("stamping changed more than the header")
			}
			if e, _ := p.Producer(5); e.LastTimestamp != now {
				t.Fatalf("producer state saw timestamp %d, want the stamp %d", e.LastTimestamp, now)
			}
		})
	}
}

func TestValidateCreateTimeFixesMaxTimestamp(t *testing.T) {
	for _, c := range allCodecs {
		t.Run("codec="+c.String(), func(t *testing.T) {
			h := vHeader(0)
			h.MaxTimestamp = vBase + 77 // the producer's header says 77, its records say 3
			h.Attributes = 0x7f00       // high byte set: computeAttributes clears it
			p := mustOpen(t, Config{})
			s := mustAccept(t, p, vBatch(t, h, vRecs(4), c))
			if s.MaxTimestamp() != vBase+3 || s.Attributes() != codec.Attributes(c) || s.CRC() != s.ComputeCRC() {
				t.Fatalf("header %+v", s.Header())
			}
			if e, _ := p.Producer(5); e.LastTimestamp != vBase+3 {
				t.Fatalf("producer timestamp %d", e.LastTimestamp)
			}
		})
	}
}

func TestValidateCreateTimeKeepsRightHeader(t *testing.T) {
	h := vHeader(0)
	h.Attributes = 0x7f00 // garbage in bits 8-15 stays when nothing else changes
	in := vBatch(t, h, vRecs(4), codec.CompressionNone)
	p := mustOpen(t, Config{})
	s := mustAccept(t, p, in)
	if !bytes.Equal(s[codec.CRCStart-4:], in[codec.CRCStart-4:]) {
		t.Fatal("a right header was rewritten")
	}
}

// --- keys ---

func TestValidateCompactedNullKey(t *testing.T) {
	for _, c := range []codec.Compression{codec.CompressionNone, codec.CompressionSnappy} {
		t.Run("codec="+c.String(), func(t *testing.T) {
			recs := vRecs(5)
			recs[1].Key, recs[4].Key = nil, nil
			p := mustOpen(t, Config{Compacted: true})
			re := mustReject(t, p, vBatch(t, vHeader(0), recs, c), kafkaerr.InvalidRecord, ErrNullKey)
			wantIndexes(t, re, 2, 1, 4)
			if errors.Is(re, kafkaerr.InvalidTimestamp) {
				t.Fatal("INVALID_TIMESTAMP without a timestamp fault")
			}
		})
	}
}

func TestValidateCompactedEmptyKeyAccepted(t *testing.T) {
	recs := vRecs(3)
	recs[0].Key = []byte{} // empty, not null
	p := mustOpen(t, Config{Compacted: true})
	mustAccept(t, p, vBatch(t, vHeader(0), recs, codec.CompressionNone))
}

func TestValidateNullKeyOnPlainTopicAccepted(t *testing.T) {
	recs := vRecs(3)
	recs[0].Key = nil
	p := mustOpen(t, Config{})
	mustAccept(t, p, vBatch(t, vHeader(0), recs, codec.CompressionNone))
}

func TestValidateTimestampWinsOverRecord(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp = vBase + 999 // record i is i-1 ms from now: 2 and 3 are 1 and 2 ms ahead
	recs := vRecs(4)
	recs[0].Key = nil
	recs[3].Key = nil // a key fault hides the timestamp check of its record
	p := mustOpen(t, Config{Compacted: true, TimestampAfterMaxMs: 0, TimestampBeforeMaxMs: 1})
	p.val.after = 0 // a 0 ms window (Config cannot say it: 0 means the default)
	p.val.windowed = true
	re := mustReject(t, p, vBatch(t, h, recs, codec.CompressionNone), kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 3, 0, 2, 3)
	if !errors.Is(re, kafkaerr.InvalidTimestamp) || errors.Is(re, kafkaerr.InvalidRecord) {
		t.Fatalf("%v", re)
	}
}

func TestValidateStructureStopsTheWalk(t *testing.T) {
	// Record 0 is out of range, record 1 does not decode: the iterator's
	// InvalidRecordException ends LogValidator before processRecordErrors.
	recs := vRecs(3)
	raw := encode(recs)
	first := len(codec.AppendRecord(nil, recs[0]))
	raw[first] = 0x7f // record 1's length runs past the end
	h := vHeader(0)
	h.BaseTimestamp = 1
	p := mustOpen(t, windowed(10, 10))
	re := mustReject(t, p, rawBatch(t, h, 3, raw, codec.CompressionNone), kafkaerr.InvalidRecord, ErrRecordStructure)
	wantIndexes(t, re, 1, 1)
}

// --- other origins ---

// The mirrored and follower paths run no LogValidator: what a CLIENT append
// rejects or rewrites goes in byte for byte.
func TestValidateNotOnReplicationPaths(t *testing.T) {
	h := vHeader(0)
	h.Attributes = codec.AttrLogAppendTime
	h.MaxTimestamp = 1
	recs := offsetsOff(4)
	in := vBatch(t, h, recs, codec.CompressionGzip)
	cfg := Config{TimestampType: LogAppendTime, Compacted: true, TimestampBeforeMaxMs: 1, TimestampAfterMaxMs: 1}
	p := mustOpen(t, cfg)
	mustReject(t, p, in, kafkaerr.InvalidTimestamp, nil)
	if _, err := p.AppendReplica(in); err != nil {
		t.Fatal(err)
	}
	cfg.State, cfg.MirrorOffsets = Mirroring, AssignOffsets
	m := mustOpen(t, cfg)
	if _, err := m.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	for _, q := range []*Partition{p, m} {
		all := readAll(t, q)
		if len(all) != 1 || !bytes.Equal(all[0][codec.CRCStart:], in[codec.CRCStart:]) {
			t.Fatal("a replicated batch was validated or rewritten")
		}
	}
}

// TestValidateHeaderFixCRC: the O(1) patch of attributes and maxTimestamp
// equals Kafka's recompute for every header the fix can meet.
func TestValidateHeaderFixCRC(t *testing.T) {
	for _, c := range allCodecs {
		for _, a := range []codec.Attributes{0, codec.AttrTransactional, codec.AttrLogAppendTime, 0x7f40} {
			h := vHeader(0)
			h.Attributes = a
			b := codec.Batch(vBatch(t, h, vRecs(3), c))
			v := validator{fix: true, attrs: b.Attributes()&0x77 | codec.AttrLogAppendTime, maxTS: 12345}
			v.applyFix(b)
			if b.CRC() != b.ComputeCRC() || b.MaxTimestamp() != 12345 || !b.Attributes().LogAppendTime() {
				t.Fatalf("codec %v attrs %#x: patched CRC %#x, recomputed %#x", c, a, b.CRC(), b.ComputeCRC())
			}
		}
	}
}

// BenchmarkValidateClient is a CLIENT append through LogValidator's record
// walk per codec (in place), with a LogAppendTime stamp, and with a rebuild
// (inner offsets not 0..n-1; allocates: the compressor). Values are
// half-repetitive so that the codecs have something to do. (Kept here, not in
// a *_bench_test.go file, because this task owns only the validate files.)
func BenchmarkValidateClient(b *testing.B) {
	for _, sh := range benchShapes[1:3] {
		recs := make([]codec.Record, sh.records)
		for i := range recs {
			v := make([]byte, sh.value)
			for j := range v {
				v[j] = byte(j / 4 * (i + 1))
			}
			recs[i] = codec.Record{TimestampDelta: int64(i), OffsetDelta: int32(i), Key: []byte("key"), Value: v}
		}
		for _, c := range []struct {
			name    string
			cfg     Config
			codec   codec.Compression
			rebuild bool
		}{
			{"codec=none", Config{}, codec.CompressionNone, false},
			{"codec=gzip", Config{}, codec.CompressionGzip, false},
			{"codec=snappy", Config{}, codec.CompressionSnappy, false},
			{"codec=lz4", Config{}, codec.CompressionLZ4, false},
			{"codec=zstd", Config{}, codec.CompressionZstd, false},
			{"codec=zstd/timestamp=LogAppendTime", Config{TimestampType: LogAppendTime}, codec.CompressionZstd, false},
			{"codec=zstd/rebuild=true", Config{}, codec.CompressionZstd, true},
		} {
			b.Run("batch="+sh.name+"/"+c.name, func(b *testing.B) {
				rs := slices.Clone(recs)
				if c.rebuild {
					rs[0].OffsetDelta = 1
				}
				in := vBatch(b, vHeader(0), rs, c.codec)
				cfg := c.cfg
				cfg.SegmentBytes, cfg.RetainSegments, cfg.SkipRollSnapshots = benchSegmentBytes(len(in)), 1, true
				p := mustOpen(b, cfg)
				seq := int32(0)
				appendOne := func() {
					codec.Batch(in).SetBaseSequence(seq)
					seq = codec.IncrementSequence(seq, int32(sh.records))
					if _, err := p.AppendClient(in); err != nil {
						b.Fatal(err)
					}
				}
				for range 4 * benchSegmentBytes(len(in)) / int64(len(in)) {
					appendOne()
				}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				cpu := cputime.Process()
				for b.Loop() {
					appendOne()
				}
				cputime.Report(b, cpu)
			})
		}
	}
}

// A rebuild of many tiny records allocates a few times the decompressed
// bytes, not a record struct per record (15 times as much for these).
func TestValidateRebuildTinyRecordsMemory(t *testing.T) {
	const n = 200000
	recs := make([]codec.Record, n) // null key and value, no headers: 7 bytes each
	recs[n-1].OffsetDelta = n - 1   // the others 0: rebuilt
	in := vBatch(t, vHeader(0), recs, codec.CompressionZstd)
	decompressed := len(encode(recs))
	// The shared zstd encoder sizes its history once, on its first large
	// input (a constant of the library, not of the batch): warm it.
	mustAccept(t, mustOpen(t, Config{}), in)
	p := mustOpen(t, Config{})
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	s := mustAccept(t, p, in)
	runtime.ReadMemStats(&ms1)
	if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > uint64(10*decompressed+(8<<20)) {
		t.Fatalf("rebuild allocated %d bytes for %d decompressed", grew, decompressed)
	}
	if s.RecordsCount() != n || s.LastOffsetDelta() != n-1 {
		t.Fatalf("header %+v", s.Header())
	}
	for i, r := range recordsOf(t, s) {
		if r.OffsetDelta != int32(i) || r.Key != nil || r.Value != nil {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
}

// Scratch buffers grown past retainScratch by one huge batch are freed after
// it; smaller ones are kept for reuse.
func TestValidateScratchNotPinned(t *testing.T) {
	big := vRecs(5)
	for i := range big {
		big[i].Value = make([]byte, 1<<20)
	}
	p := mustOpen(t, Config{MaxMessageBytes: 1 << 30})
	mustAccept(t, p, vBatch(t, vHeader(0), vRecs(5), codec.CompressionZstd))
	if cap(p.val.buf) == 0 {
		t.Fatal("small scratch not kept")
	}
	mustAccept(t, p, vBatch(t, vHeader(5), big, codec.CompressionZstd))
	if cap(p.val.buf) != 0 {
		t.Fatalf("%d-byte scratch kept after a 5 MiB batch", cap(p.val.buf))
	}
	offs := slices.Clone(big)
	offs[0].OffsetDelta = 1 // rebuilt: raw and out grow too
	mustAccept(t, p, vBatch(t, vHeader(10), offs, codec.CompressionGzip))
	if cap(p.val.buf) != 0 || cap(p.val.raw) != 0 {
		t.Fatalf("scratch kept after a rebuild: buf %d raw %d", cap(p.val.buf), cap(p.val.raw))
	}
}

// --- COORDINATOR appends: record rules and the header stamp apply too ---

func TestValidateCoordinatorMarkerStampedOnLogAppendTimeTopic(t *testing.T) {
	p := mustOpen(t, Config{TimestampType: LogAppendTime})
	m := codec.AppendEndTxnMarker(nil, 9, 0, 3, false, vBase)
	s := mustStore(t, p, m, p.AppendCoordinator)
	if !s.Attributes().LogAppendTime() || !s.IsControl() || s.MaxTimestamp() != testNow().UnixMilli() {
		t.Fatalf("marker header %+v", s.Header())
	}
	// The stamp changes the header only: the record still reads as COMMIT.
	if cr, err := s.ControlRecord(); err != nil || cr.Type != codec.ControlCommit {
		t.Fatalf("control record %+v %v", cr, err)
	}
}

func TestValidateCoordinatorMarkerOnCreateTimeTopicKeptAsIs(t *testing.T) {
	p := mustOpen(t, Config{})
	m := codec.AppendEndTxnMarker(nil, 9, 0, 3, true, vBase)
	s := mustStore(t, p, m, p.AppendCoordinator)
	if s.Attributes().LogAppendTime() || s.MaxTimestamp() != codec.Batch(m).MaxTimestamp() {
		t.Fatalf("marker header changed: %+v", s.Header())
	}
}

func TestValidateCoordinatorTimestampWindow(t *testing.T) {
	// A marker stamped an hour before now, with a one-minute window.
	p := mustOpen(t, windowed(60000, 60000))
	m := codec.AppendEndTxnMarker(nil, 9, 0, 3, false, testNow().UnixMilli()-3600000)
	before := readAll(t, p)
	_, err := p.AppendCoordinator(m)
	if !errors.Is(err, kafkaerr.InvalidTimestamp) || !errors.Is(err, ErrTimestampOutOfRange) {
		t.Fatalf("err %v, want INVALID_TIMESTAMP (out of range)", err)
	}
	if after := readAll(t, p); len(after) != len(before) {
		t.Fatalf("%d batches written by a rejected append", len(after)-len(before))
	}
}
