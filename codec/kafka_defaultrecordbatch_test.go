package codec_test

// Kafka's DefaultRecordBatchTest, ported: one Go test per test method, named
// TestKafkaDefaultRecordBatch_<method> (docs/kafka-tests.md). Kafka's
// DefaultRecordBatch is codec.Batch (the header view and setters), its
// MemoryRecordsBuilder AppendBatch and AppendEndTxnMarker, its iterators
// the record iterator (Batch.Records, Batch.OpenRecords; the partial
// NewPartialRecordIter for skipKeyValueIterator). Where a rule decides what
// a broker answers, the batch is also appended as a producer's
// (appendpath.Partition.AppendClient), the path LogValidator guards.

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

var kCodecs = []codec.Compression{codec.CompressionNone, codec.CompressionGzip, codec.CompressionSnappy,
	codec.CompressionLZ4, codec.CompressionZstd}

// kRec is Kafka's SimpleRecord at index i of a batch whose baseTimestamp is
// base.
func kRec(i int, base, ts int64, key, value string) codec.Record {
	r := codec.Record{OffsetDelta: int32(i), TimestampDelta: ts - base}
	if key != "" {
		r.Key = []byte(key)
	}
	if value != "" {
		r.Value = []byte(value)
	}
	return r
}

// abc3 is the batch most of Kafka's DefaultRecordBatchTest methods build
// with MemoryRecords.withRecords: records (1, "a", "1"), (2, "b", "2"),
// (3, "c", "3"), CreateTime, no producer ID, base offset 0.
func abc3(t *testing.T, c codec.Compression) codec.Batch {
	t.Helper()
	recs := []codec.Record{kRec(0, 1, 1, "a", "1"), kRec(1, 1, 2, "b", "2"), kRec(2, 1, 3, "c", "3")}
	b, err := codec.AppendBatch(nil, codec.BatchHeader{BaseTimestamp: 1, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence,
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch}, recs, c)
	if err != nil {
		t.Fatal(err)
	}
	return codec.Batch(b)
}

// iterErr walks b's records and returns the iterator's first error other
// than io.EOF.
func iterErr(t *testing.T, b codec.Batch) error {
	t.Helper()
	it, _, err := b.OpenRecords(nil, 1<<30)
	if err != nil {
		return err
	}
	for _, err := range it.All() {
		if err != nil {
			return err
		}
	}
	return nil
}

// clientAppend appends b to a new writable partition as a producer's batch.
func clientAppend(t *testing.T, b []byte) error {
	t.Helper()
	p, err := appendpath.Open(appendpath.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.AppendClient(b)
	return err
}

// TestKafkaDefaultRecordBatch_testWriteEmptyHeader ports
// DefaultRecordBatchTest#testWriteEmptyHeader: the header of a batch with
// no records (DefaultRecordBatch.writeEmptyHeader; AppendBatch with none)
// keeps every field it is given, for each timestamp type, transactional or
// not, control or not: the last offset and last sequence follow from
// lastOffsetDelta, baseTimestamp is -1 and maxTimestamp the timestamp.
func TestKafkaDefaultRecordBatch_testWriteEmptyHeader(t *testing.T) {
	const (
		producerID     = 23423
		producerEpoch  = 145
		baseSequence   = 983
		baseOffset     = 15
		lastOffset     = 37
		leaderEpoch    = 15
		timestamp      = 1700000000000
		lastOffsetDiff = lastOffset - baseOffset
	)
	for _, lat := range []bool{false, true} {
		for _, txn := range []bool{true, false} {
			for _, control := range []bool{true, false} {
				var attrs codec.Attributes
				if lat {
					attrs |= codec.AttrLogAppendTime
				}
				if txn {
					attrs |= codec.AttrTransactional
				}
				if control {
					attrs |= codec.AttrControl
				}
				raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: baseOffset,
					PartitionLeaderEpoch: leaderEpoch, Attributes: attrs, BaseTimestamp: codec.NoTimestamp,
					MaxTimestamp: timestamp, ProducerID: producerID, ProducerEpoch: producerEpoch,
					BaseSequence: baseSequence, LastOffsetDelta: lastOffsetDiff}, nil, codec.CompressionNone)
				if err != nil {
					t.Fatal(err)
				}
				b, err := codec.ParseBatch(raw)
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != codec.HeaderSize || b.RecordsCount() != 0 || b.VerifyCRC() != nil {
					t.Errorf("size %d, count %d, CRC %v", len(b), b.RecordsCount(), b.VerifyCRC())
				}
				type field struct {
					name      string
					got, want int64
				}
				for _, f := range []field{
					{"producerId", b.ProducerID(), producerID},
					{"producerEpoch", int64(b.ProducerEpoch()), producerEpoch},
					{"baseSequence", int64(b.BaseSequence()), baseSequence},
					{"lastSequence", int64(b.LastSequence()), baseSequence + lastOffsetDiff},
					{"baseOffset", b.BaseOffset(), baseOffset},
					{"lastOffset", b.LastOffset(), lastOffset},
					{"partitionLeaderEpoch", int64(b.PartitionLeaderEpoch()), leaderEpoch},
					{"maxTimestamp", b.MaxTimestamp(), timestamp},
					{"baseTimestamp", b.BaseTimestamp(), codec.NoTimestamp},
				} {
					if f.got != f.want {
						t.Errorf("lat=%v txn=%v control=%v: %s %d, want %d", lat, txn, control, f.name, f.got, f.want)
					}
				}
				if b.IsTransactional() != txn || b.IsControl() != control || b.Attributes().LogAppendTime() != lat {
					t.Errorf("lat=%v txn=%v control=%v: attributes %#x", lat, txn, control, b.Attributes())
				}
			}
		}
	}
}

// checkBuilt checks a batch built by the Kafka tests' builder calls: valid
// CRC and records, offsets 1234567..1234568, maxTimestamp 2, and the
// producer fields given.
func checkBuilt(t *testing.T, raw []byte, pid int64, epoch int16, seq, lastSeq int32) {
	t.Helper()
	b, err := codec.ParseBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Check(nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if b.BaseOffset() != 1234567 || b.LastOffset() != 1234568 || b.MaxTimestamp() != 2 {
		t.Errorf("offsets %d..%d, maxTimestamp %d", b.BaseOffset(), b.LastOffset(), b.MaxTimestamp())
	}
	if b.ProducerID() != pid || b.ProducerEpoch() != epoch || b.BaseSequence() != seq || b.LastSequence() != lastSeq {
		t.Errorf("producer %d epoch %d sequences %d..%d", b.ProducerID(), b.ProducerEpoch(), b.BaseSequence(), b.LastSequence())
	}
	recs, it := testlog.Records(t, b)
	for i := range recs {
		if o := it.Offset(&recs[i]); o != 1234567+int64(i) {
			t.Errorf("record %d: offset %d", i, o)
		}
	}
}

// builtAV builds the batch of buildDefaultRecordBatch*: records "a"/"v" at
// offset 1234567, timestamp 1, and "b"/"v" at 1234568, timestamp 2, with
// the producer fields given.
func builtAV(t *testing.T, pid int64, epoch int16, seq int32) []byte {
	t.Helper()
	raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: 1234567, BaseTimestamp: 1, ProducerID: pid,
		ProducerEpoch: epoch, BaseSequence: seq, PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch},
		[]codec.Record{kRec(0, 1, 1, "a", "v"), kRec(1, 1, 2, "b", "v")}, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestKafkaDefaultRecordBatch_buildDefaultRecordBatch ports
// DefaultRecordBatchTest#buildDefaultRecordBatch: a batch built without a
// producer has valid records, the offsets of its records, maxTimestamp the
// largest record timestamp, and producerId, epoch and both sequences -1.
func TestKafkaDefaultRecordBatch_buildDefaultRecordBatch(t *testing.T) {
	raw := builtAV(t, codec.NoProducerID, codec.NoProducerEpoch, codec.NoSequence)
	checkBuilt(t, raw, codec.NoProducerID, codec.NoProducerEpoch, codec.NoSequence, codec.NoSequence)
}

// TestKafkaDefaultRecordBatch_buildDefaultRecordBatchWithProducerId ports
// DefaultRecordBatchTest#buildDefaultRecordBatchWithProducerId: with a
// producer, the batch carries its ID, epoch and base sequence, and the last
// sequence is the base sequence plus lastOffsetDelta.
func TestKafkaDefaultRecordBatch_buildDefaultRecordBatchWithProducerId(t *testing.T) {
	raw := builtAV(t, 23423, 145, 983)
	checkBuilt(t, raw, 23423, 145, 983, 984)
}

// TestKafkaDefaultRecordBatch_buildDefaultRecordBatchWithSequenceWrapAround
// ports DefaultRecordBatchTest#buildDefaultRecordBatchWithSequenceWrapAround:
// sequences wrap from MaxInt32 to 0, in the batch's last sequence and in
// each record's.
func TestKafkaDefaultRecordBatch_buildDefaultRecordBatchWithSequenceWrapAround(t *testing.T) {
	raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: 1234567, BaseTimestamp: 1, ProducerID: 23423,
		ProducerEpoch: 145, BaseSequence: math.MaxInt32 - 1, PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch},
		[]codec.Record{kRec(0, 1, 1, "a", "v"), kRec(1, 1, 2, "b", "v"), kRec(2, 1, 3, "c", "v")}, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	b, rest, err := codec.Next(raw)
	if err != nil || len(rest) != 0 {
		t.Fatalf("%v, %d bytes after the batch", err, len(rest))
	}
	if b.ProducerID() != 23423 || b.ProducerEpoch() != 145 || b.BaseSequence() != math.MaxInt32-1 || b.LastSequence() != 0 {
		t.Errorf("producer %d epoch %d sequences %d..%d", b.ProducerID(), b.ProducerEpoch(), b.BaseSequence(), b.LastSequence())
	}
	recs, it := testlog.Records(t, b)
	want := []int32{math.MaxInt32 - 1, math.MaxInt32, 0}
	if len(recs) != len(want) {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		if s := it.Sequence(&recs[i]); s != want[i] {
			t.Errorf("record %d: sequence %d, want %d", i, s, want[i])
		}
	}
}

// TestKafkaDefaultRecordBatch_testInvalidRecordSize ports
// DefaultRecordBatchTest#testInvalidRecordSize: a batchLength (10) smaller
// than a v2 header makes the batch corrupt (CorruptRecordException; a
// broker answers CORRUPT_MESSAGE).
func TestKafkaDefaultRecordBatch_testInvalidRecordSize(t *testing.T) {
	b := abc3(t, codec.CompressionNone)
	binaryPut32(b[codec.OffBatchLength:], 10)
	if _, err := codec.ParseBatch(b); !errors.Is(err, codec.ErrCorruption) {
		t.Errorf("ParseBatch: %v, want a corruption", err)
	}
	if _, _, err := codec.Next(b); !errors.Is(err, codec.ErrCorruption) {
		t.Errorf("Next: %v, want a corruption", err)
	}
	if err := clientAppend(t, b); !errors.Is(err, kafkaerr.CorruptMessage) {
		t.Errorf("AppendClient: %v, want CORRUPT_MESSAGE", err)
	}
}

func binaryPut32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

// invalidRecordCount checks the rule of testInvalidRecordCount*: a batch of
// three records (null keys, "hello", "there", "beautiful") whose
// recordsCount says count is invalid when its records are read
// (InvalidRecordException). Through the append path, with lastOffsetDelta
// made to agree with the count (or the batch check would refuse it first)
// and the CRC recomputed, it is INVALID_RECORD from the record walk.
func invalidRecordCount(t *testing.T, c codec.Compression, count int32) {
	t.Helper()
	const ts = 1700000000000
	raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseTimestamp: ts, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence},
		[]codec.Record{kRec(0, ts, ts, "", "hello"), kRec(1, ts, ts, "", "there"), kRec(2, ts, ts, "", "beautiful")}, c)
	if err != nil {
		t.Fatal(err)
	}
	b := codec.Batch(raw)
	binaryPut32(b[codec.OffRecordsCount:], uint32(count))
	if err := iterErr(t, b); !errors.Is(err, codec.ErrBadRecord) {
		t.Errorf("records: %v, want ErrBadRecord", err)
	}
	binaryPut32(b[codec.OffLastOffsetDelta:], uint32(count-1))
	b.UpdateCRC()
	err = clientAppend(t, b)
	if !errors.Is(err, kafkaerr.InvalidRecord) || !errors.Is(err, appendpath.ErrRecordStructure) {
		t.Errorf("AppendClient: %v, want INVALID_RECORD (ErrRecordStructure)", err)
	}
}

// TestKafkaDefaultRecordBatch_testInvalidRecordCountTooManyNonCompressedV2
// ports DefaultRecordBatchTest#testInvalidRecordCountTooManyNonCompressedV2:
// an uncompressed batch that says 5 records and holds 3 is invalid.
func TestKafkaDefaultRecordBatch_testInvalidRecordCountTooManyNonCompressedV2(t *testing.T) {
	invalidRecordCount(t, codec.CompressionNone, 5)
}

// TestKafkaDefaultRecordBatch_testInvalidRecordCountTooLittleNonCompressedV2
// ports DefaultRecordBatchTest#testInvalidRecordCountTooLittleNonCompressedV2:
// an uncompressed batch that says 2 records and holds 3 is invalid.
func TestKafkaDefaultRecordBatch_testInvalidRecordCountTooLittleNonCompressedV2(t *testing.T) {
	invalidRecordCount(t, codec.CompressionNone, 2)
}

// TestKafkaDefaultRecordBatch_testInvalidRecordCountTooManyCompressedV2
// ports DefaultRecordBatchTest#testInvalidRecordCountTooManyCompressedV2:
// a gzip batch that says 5 records and holds 3 is invalid.
func TestKafkaDefaultRecordBatch_testInvalidRecordCountTooManyCompressedV2(t *testing.T) {
	invalidRecordCount(t, codec.CompressionGzip, 5)
}

// TestKafkaDefaultRecordBatch_testInvalidRecordCountTooLittleCompressedV2
// ports DefaultRecordBatchTest#testInvalidRecordCountTooLittleCompressedV2:
// a gzip batch that says 2 records and holds 3 is invalid.
func TestKafkaDefaultRecordBatch_testInvalidRecordCountTooLittleCompressedV2(t *testing.T) {
	invalidRecordCount(t, codec.CompressionGzip, 2)
}

// TestKafkaDefaultRecordBatch_testInvalidCrc ports
// DefaultRecordBatchTest#testInvalidCrc: a field under the CRC changed
// (lastOffsetDelta 23) without fixing the CRC makes the batch corrupt; a
// broker answers CORRUPT_MESSAGE, to a producer and to a follower.
func TestKafkaDefaultRecordBatch_testInvalidCrc(t *testing.T) {
	b := abc3(t, codec.CompressionNone)
	binaryPut32(b[codec.OffLastOffsetDelta:], 23)
	if err := b.VerifyCRC(); !errors.Is(err, codec.ErrCRC) {
		t.Errorf("VerifyCRC: %v, want ErrCRC", err)
	}
	if _, err := b.Check(nil, 1<<20); !errors.Is(err, codec.ErrCRC) {
		t.Errorf("Check: %v, want ErrCRC", err)
	}
	if err := clientAppend(t, b); !errors.Is(err, kafkaerr.CorruptMessage) {
		t.Errorf("AppendClient: %v, want CORRUPT_MESSAGE", err)
	}
	p, err := appendpath.Open(appendpath.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.AppendReplica(b); !errors.Is(err, kafkaerr.CorruptMessage) {
		t.Errorf("AppendReplica: %v, want CORRUPT_MESSAGE", err)
	}
}

// TestKafkaDefaultRecordBatch_testSetLastOffset ports
// DefaultRecordBatchTest#testSetLastOffset: setting the last offset moves
// the base offset with it (lastOffsetDelta kept), leaves the CRC valid, and
// the records' offsets follow.
func TestKafkaDefaultRecordBatch_testSetLastOffset(t *testing.T) {
	b := abc3(t, codec.CompressionNone)
	b.SetLastOffset(500)
	if b.LastOffset() != 500 || b.BaseOffset() != 498 || b.VerifyCRC() != nil {
		t.Fatalf("offsets %d..%d, CRC %v", b.BaseOffset(), b.LastOffset(), b.VerifyCRC())
	}
	again, rest, err := codec.Next(b)
	if err != nil || len(rest) != 0 || again.LastOffset() != 500 {
		t.Fatalf("re-read: %v, last offset %d", err, again.LastOffset())
	}
	recs, it := testlog.Records(t, again)
	for i := range recs {
		if o := it.Offset(&recs[i]); o != 498+int64(i) {
			t.Errorf("record %d: offset %d", i, o)
		}
	}
}

// TestKafkaDefaultRecordBatch_testSetPartitionLeaderEpoch ports
// DefaultRecordBatchTest#testSetPartitionLeaderEpoch: the partition leader
// epoch is set in place, outside the CRC, which stays valid.
func TestKafkaDefaultRecordBatch_testSetPartitionLeaderEpoch(t *testing.T) {
	b := abc3(t, codec.CompressionNone)
	b.SetPartitionLeaderEpoch(500)
	again, _, err := codec.Next(b)
	if err != nil || again.PartitionLeaderEpoch() != 500 || again.VerifyCRC() != nil {
		t.Errorf("%v: epoch %d, CRC %v", err, again.PartitionLeaderEpoch(), again.VerifyCRC())
	}
}

// TestKafkaDefaultRecordBatch_testSetLogAppendTime ports
// DefaultRecordBatchTest#testSetLogAppendTime: stamping LogAppendTime (the
// timestamp-type bit and maxTimestamp, as DefaultRecordBatch#setMaxTimestamp
// does) keeps the CRC valid, and every record's timestamp is then the
// batch's maxTimestamp.
func TestKafkaDefaultRecordBatch_testSetLogAppendTime(t *testing.T) {
	b := abc3(t, codec.CompressionNone)
	b.SetAttributes(b.Attributes() | codec.AttrLogAppendTime)
	b.SetMaxTimestamp(15)
	again, _, err := codec.Next(b)
	if err != nil || again.VerifyCRC() != nil {
		t.Fatalf("%v, CRC %v", err, again.VerifyCRC())
	}
	if again.Attributes().TimestampType() != "LogAppendTime" || again.MaxTimestamp() != 15 {
		t.Errorf("%s, maxTimestamp %d", again.Attributes().TimestampType(), again.MaxTimestamp())
	}
	recs, it := testlog.Records(t, again)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	for i := range recs {
		if ts := it.Timestamp(&recs[i]); ts != 15 {
			t.Errorf("record %d: timestamp %d", i, ts)
		}
	}
}

// TestKafkaDefaultRecordBatch_testReadAndWriteControlBatch ports
// DefaultRecordBatchTest#testReadAndWriteControlBatch: a COMMIT marker
// batch is one control batch of one record whose value reads back as the
// marker written.
func TestKafkaDefaultRecordBatch_testReadAndWriteControlBatch(t *testing.T) {
	raw := codec.AppendEndTxnMarker(nil, 1, 0, 15, false, 1700000000000)
	b, rest, err := codec.Next(raw)
	if err != nil || len(rest) != 0 {
		t.Fatalf("%v, %d bytes after one batch", err, len(rest))
	}
	if !b.IsControl() || !b.IsTransactional() || b.ProducerID() != 1 || b.ProducerEpoch() != 0 {
		t.Errorf("attributes %#x, producer %d/%d", b.Attributes(), b.ProducerID(), b.ProducerEpoch())
	}
	if recs, _ := testlog.Records(t, b); len(recs) != 1 {
		t.Errorf("%d records", len(recs))
	}
	cr, err := b.ControlRecord()
	if err != nil || cr.Type != codec.ControlCommit {
		t.Fatalf("%v, type %v", err, cr.Type)
	}
	if m, err := cr.EndTxnMarker(); err != nil || m != (codec.EndTxnMarker{CoordinatorEpoch: 15}) {
		t.Errorf("%+v, %v", m, err)
	}
}

// TestKafkaDefaultRecordBatch_testStreamingIteratorConsistency ports
// DefaultRecordBatchTest#testStreamingIteratorConsistency, for every codec:
// the readers of a batch agree. Kafka compares its streaming and buffered
// iterators; codec's two readers are the in-place one (uncompressed) and
// the decompressing one, so the records of the batch under each codec,
// read by OpenRecords, equal those of the same batch uncompressed read by
// Records, offsets and timestamps included.
func TestKafkaDefaultRecordBatch_testStreamingIteratorConsistency(t *testing.T) {
	plain := abc3(t, codec.CompressionNone)
	it := plain.Records()
	var want []codec.Record
	for r, err := range it.All() {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	for _, c := range kCodecs {
		t.Run(c.String(), func(t *testing.T) {
			b := abc3(t, c)
			if b.Compression() != c {
				t.Fatalf("codec %v", b.Compression())
			}
			got, git := testlog.Records(t, b)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range got {
				if string(codec.AppendRecord(nil, got[i])) != string(codec.AppendRecord(nil, want[i])) ||
					git.Offset(&got[i]) != it.Offset(&want[i]) || git.Timestamp(&got[i]) != it.Timestamp(&want[i]) {
					t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestKafkaDefaultRecordBatch_testSkipKeyValueIteratorCorrectness ports
// DefaultRecordBatchTest#testSkipKeyValueIteratorCorrectness, for every
// codec: the partial read LogValidator uses on compressed batches
// (skipKeyValueIterator) gives each record's size, attributes, offset,
// timestamp, sequence (-1 here) and key and value sizes (-1 for null) as
// the full read would, over small, null, 200 KiB values and headers with a
// null value. On an uncompressed batch Kafka uses the full iterator; the
// count is checked.
func TestKafkaDefaultRecordBatch_testSkipKeyValueIteratorCorrectness(t *testing.T) {
	large := make([]byte, 200*1024)
	rng := rand.New(rand.NewPCG(20231025, 1))
	for i := range large {
		large[i] = byte(rng.Uint32())
	}
	recs := []codec.Record{
		kRec(0, 1, 1, "a", "1"),
		kRec(1, 1, 2, "b", ""),
		kRec(2, 1, 3, "", "3"),
		kRec(3, 1, 4, "", ""),
		{OffsetDelta: 4, TimestampDelta: 999, Key: []byte("abc"), Value: large},
		{OffsetDelta: 5, TimestampDelta: 9998, Key: []byte("abc"), Value: []byte("0"),
			Headers: codec.MakeHeaders(codec.Header{Key: []byte("k1"), Value: []byte("v1")}, codec.Header{Key: []byte("k2")})},
	}
	type partial struct {
		size       int
		attributes int8
		offset     int64
		timestamp  int64
		sequence   int32
		keySize    int
		valueSize  int
	}
	want := []partial{
		{9, 0, 0, 1, -1, 1, 1},
		{8, 0, 1, 2, -1, 1, -1},
		{8, 0, 2, 3, -1, -1, 1},
		{7, 0, 3, 4, -1, -1, -1},
		{15 + len(large), 0, 4, 1000, -1, 3, len(large)},
		{23, 0, 5, 9999, -1, 3, 1},
	}
	size := func(b []byte) int {
		if b == nil {
			return -1
		}
		return len(b)
	}
	for _, c := range kCodecs {
		t.Run(c.String(), func(t *testing.T) {
			raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseTimestamp: 1, ProducerID: codec.NoProducerID,
				ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence}, recs, c)
			if err != nil {
				t.Fatal(err)
			}
			b := codec.Batch(raw)
			if c == codec.CompressionNone {
				if got, _ := testlog.Records(t, b); len(got) != len(recs) {
					t.Errorf("%d records", len(got))
				}
				return
			}
			data, err := codec.Decompress(nil, b, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			it := codec.NewPartialRecordIter(data, b.RecordsCount()).In(b)
			for i, w := range want {
				var r codec.Record
				pos := it.Pos()
				if err := it.Read(&r); err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				got := partial{it.Pos() - pos, r.Attributes, it.Offset(&r), it.Timestamp(&r), it.Sequence(&r),
					size(r.Key), size(r.Value)}
				if got != w {
					t.Errorf("record %d: %+v, want %+v", i, got, w)
				}
			}
			var r codec.Record
			if err := it.Read(&r); err != io.EOF {
				t.Errorf("after the last record: %v, want io.EOF", err)
			}
		})
	}
}

// TestKafkaDefaultRecordBatch_testBufferReuseInSkipKeyValueIterator ports
// DefaultRecordBatchTest#testBufferReuseInSkipKeyValueIterator, for each
// codec and a small and a 512 KiB value: reading a compressed batch with
// the partial read takes its buffers from the caller and gives them back.
// Kafka counts its BufferSupplier's calls (one or two per iterator); here
// the decompression buffer is the caller's, so once it has grown a second
// batch is decompressed and walked without any allocation.
func TestKafkaDefaultRecordBatch_testBufferReuseInSkipKeyValueIterator(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("sync.Pool drops items under -race; the allocation gate runs without it")
	}
	large := make([]byte, 512*1024)
	rng := rand.New(rand.NewPCG(20231025, 2))
	for i := range large {
		large[i] = byte(rng.Uint32())
	}
	for _, c := range kCodecs[1:] {
		for _, v := range []struct {
			name  string
			value []byte
		}{{"small", []byte("1")}, {"large", large}} {
			t.Run(c.String()+"/"+v.name, func(t *testing.T) {
				raw, err := codec.AppendBatch(nil, codec.BatchHeader{BaseTimestamp: 1000},
					[]codec.Record{kRec(0, 1000, 1000, "a", "0"), {OffsetDelta: 1, TimestampDelta: 8999, Key: []byte("b"), Value: v.value}}, c)
				if err != nil {
					t.Fatal(err)
				}
				b := codec.Batch(raw)
				buf, err := codec.Decompress(nil, b, 1<<30) // grows buf once
				if err != nil {
					t.Fatal(err)
				}
				if n := testing.AllocsPerRun(20, func() {
					data, err := codec.Decompress(buf, b, 1<<30)
					if err != nil {
						t.Fatal(err)
					}
					it := codec.NewPartialRecordIter(data, b.RecordsCount())
					var r codec.Record
					k := 0
					for it.Read(&r) == nil {
						k++
					}
					if k != 2 {
						t.Fatalf("%d records", k)
					}
				}); n != 0 {
					t.Errorf("%v allocations per batch", n)
				}
			})
		}
	}
}

// TestKafkaDefaultRecordBatch_testIncrementSequence ports
// DefaultRecordBatchTest#testIncrementSequence: sequences advance with
// wrap-around past MaxInt32 to 0.
func TestKafkaDefaultRecordBatch_testIncrementSequence(t *testing.T) {
	for _, c := range []struct{ s, n, want int32 }{{5, 5, 10}, {math.MaxInt32, 1, 0}, {math.MaxInt32 - 5, 10, 4}} {
		if got := codec.IncrementSequence(c.s, c.n); got != c.want {
			t.Errorf("IncrementSequence(%d, %d) = %d, want %d", c.s, c.n, got, c.want)
		}
	}
}

// TestKafkaDefaultRecordBatch_testDecrementSequence ports
// DefaultRecordBatchTest#testDecrementSequence: sequences go back with
// wrap-around from 0 to MaxInt32.
func TestKafkaDefaultRecordBatch_testDecrementSequence(t *testing.T) {
	for _, c := range []struct{ s, n, want int32 }{{5, 5, 0}, {0, 1, math.MaxInt32}} {
		if got := codec.DecrementSequence(c.s, c.n); got != c.want {
			t.Errorf("DecrementSequence(%d, %d) = %d, want %d", c.s, c.n, got, c.want)
		}
	}
}
