package appendpath

// Kafka's LogValidatorTest, ported for message format v2: one Go test per
// test method, named TestKafkaLogValidator_<method> (docs/kafka-tests.md).
// Kafka's LogValidator is reached here the only way it is reached in
// mirrorpath, through the append path: each batch a Kafka test builds is
// appended with Partition.AppendClient (AppendCoordinator for the
// coordinator's), and the answer and the stored batch are checked.
//
// Translation of Kafka's test set-up:
//   - System.currentTimeMillis() and MockTime are the partition's clock,
//     testNow; timestampBeforeMaxMs/AfterMaxMs are
//     Config.TimestampBeforeMaxMs/AfterMaxMs, the topic's timestamp type
//     Config.TimestampType, compactedTopic Config.Compacted, the
//     partitionLeaderEpoch argument Config.LeaderEpoch.
//   - ValidationResult's validatedRecords is the stored batch;
//     maxTimestampMs its maxTimestamp; messageSizeMaybeChanged false means
//     the stored batch is the caller's bytes.
//   - sourceCompressionType is the batch's codec. The target codec
//     (compression.type) has no counterpart: mirrorpath keeps the
//     producer's codec, as a topic with compression.type=producer does, so
//     parameters that differ only in the target run the same check once.
//   - Kafka's tests call LogValidator directly, after the CRC check of
//     UnifiedLog#analyzeAndValidateRecords; when one edits a field under
//     the CRC, the CRC is recomputed here so the append reaches the rule.
//   - parameters on magic 0 or 1 (and conversions between magics) are not
//     ported; each such method is listed in logValidatorNotApplicable.

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/kafkatests"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// logValidatorNotApplicable lists the methods of LogValidatorTest that do
// not apply to a v2-only append path, each with the reason.
var logValidatorNotApplicable = map[string]string{
	"checkMismatchMagic": "parameters 0,1 and 1,0 only: a batch of one magic holding records of another " +
		"exists in message formats 0 and 1; a v2 batch's records have no magic.",
	"testCreateTimeUpConversionV1ToV2":  "converts a v1 batch to v2; mirrorpath reads v2 only.",
	"checkCreateTimeUpConversionFromV0": "converts v0 batches to v1/v2; mirrorpath reads v2 only.",
	"checkRecompression": "recompresses an uncompressed batch to the topic's codec (gzip); mirrorpath has " +
		"no topic compression.type and keeps the producer's codec (compression.type=producer). Parameter 1 " +
		"is magic 1.",
	"checkAllowMultiBatch": "parameters on magic 0 and 1 only: several batches per append are allowed " +
		"for uncompressed v0/v1 message sets; v2 allows one (checkOnlyOneBatch).",
	"testInvalidCreateTimeNonCompressedV1": "magic 1 batch; the v2 rule is testInvalidCreateTimeNonCompressedV2.",
	"testInvalidCreateTimeCompressedV1":    "magic 1 batch; the v2 rule is testInvalidCreateTimeCompressedV2.",
	"checkInvalidChecksum": "parameters on magic 0 and 1 only: the CRC of a legacy record inside the " +
		"batch; v2 records have no CRC of their own (the batch's is DefaultRecordBatchTest#testInvalidCrc).",
	"testAbsoluteOffsetAssignmentNonCompressed":                  "magic 0 batch (absolute inner offsets).",
	"testAbsoluteOffsetAssignmentCompressed":                     "magic 0 batch (absolute inner offsets).",
	"testRelativeOffsetAssignmentNonCompressedV1":                "magic 1 batch; the v2 rule is testRelativeOffsetAssignmentNonCompressedV2.",
	"testRelativeOffsetAssignmentCompressedV1":                   "magic 1 batch; the v2 rule is testRelativeOffsetAssignmentCompressedV2.",
	"testOffsetAssignmentAfterUpConversionV0ToV1NonCompressed":   "conversion from magic 0 to 1.",
	"testOffsetAssignmentAfterUpConversionV0ToV2NonCompressed":   "conversion from magic 0 to 2.",
	"testOffsetAssignmentAfterUpConversionV0ToV1Compressed":      "conversion from magic 0 to 1.",
	"testOffsetAssignmentAfterUpConversionV0ToV2Compressed":      "conversion from magic 0 to 2.",
	"testOffsetAssignmentAfterDownConversionV1ToV0NonCompressed": "conversion from magic 1 to 0.",
	"testOffsetAssignmentAfterDownConversionV1ToV0Compressed":    "conversion from magic 1 to 0.",
	"testOffsetAssignmentAfterUpConversionV1ToV2NonCompressed":   "conversion from magic 1 to 2.",
	"testOffsetAssignmentAfterUpConversionV1ToV2Compressed":      "conversion from magic 1 to 2.",
	"testOffsetAssignmentAfterDownConversionV2ToV1NonCompressed": "conversion from magic 2 to 1.",
	"testOffsetAssignmentAfterDownConversionV2ToV1Compressed":    "conversion from magic 2 to 1.",
	"testDownConversionOfTransactionalRecordsNotPermitted":       "conversion from magic 2 to 1.",
	"testDownConversionOfIdempotentRecordsNotPermitted":          "conversion from magic 2 to 1.",
	"testOffsetAssignmentAfterDownConversionV2ToV0NonCompressed": "conversion from magic 2 to 0.",
	"testOffsetAssignmentAfterDownConversionV2ToV0Compressed":    "conversion from magic 2 to 0.",
	"testInvalidRecordExceptionHasBatchIndex": "a v0 batch holding v1 records (inner magic mismatch); the " +
		"per-record indexes of an INVALID_RECORD are held for v2 by checkNoKeyCompactedTopic and " +
		"testBatchWithInvalidRecordsAndInvalidTimestamp.",
	"testDifferentCodecCausesRecompression": "recompression to a topic codec other than the producer's; " +
		"mirrorpath has no topic compression.type.",
	"checkLogAppendTimeWithRecompression": "the batch is magic 0, converted to the target magic (1 or 2).",
}

// TestKafkaLogValidatorSuite: every method of LogValidatorTest is ported
// or listed as not applicable with a reason, and docs/kafka-tests.md and
// results/kafka-tests.md state the figures computed here.
func TestKafkaLogValidatorSuite(t *testing.T) {
	apply, total := kafkatests.Check(t, kafkatests.Suite{
		Class:         "LogValidatorTest",
		List:          "testdata/kafka-logvalidatortest.txt",
		Prefix:        "TestKafkaLogValidator_",
		NotApplicable: logValidatorNotApplicable,
		Sections:      []string{"../docs/kafka-tests.md"},
		Rows:          []string{"../results/kafka-tests.md"},
	})
	t.Logf("LogValidatorTest: %d of %d methods apply", apply, total)
}

// kNow is testNow in milliseconds: Kafka's "now" in these tests.
var kNow = testNow().UnixMilli()

// kRecords builds a v2 batch the way LogValidatorTest's createRecords does:
// null keys, the given values, every record at timestamp ts, offsets
// 0..n-1, no producer ID, CreateTime, partition leader epoch -1.
func kRecords(t *testing.T, ts int64, c codec.Compression, values ...string) []byte {
	t.Helper()
	if len(values) == 0 {
		values = []string{"hello", "there", "beautiful"}
	}
	recs := make([]codec.Record, len(values))
	for i, v := range values {
		recs[i] = codec.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	return vBatch(t, codec.BatchHeader{BaseTimestamp: ts, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence,
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch}, recs, c)
}

// timestampsOf returns the timestamp of every record of b.
func timestampsOf(t *testing.T, b codec.Batch) []int64 {
	t.Helper()
	return perRecord(t, b, (*codec.RecordIter).Timestamp)
}

// offsetsOf returns the absolute offset of every record of b.
func offsetsOf(t *testing.T, b codec.Batch) []int64 {
	t.Helper()
	return perRecord(t, b, (*codec.RecordIter).Offset)
}

// perRecord returns f of every record of b, with the iterator bound to b.
func perRecord(t *testing.T, b codec.Batch, f func(*codec.RecordIter, *codec.Record) int64) []int64 {
	t.Helper()
	recs, it := testlog.Records(t, b)
	out := make([]int64, len(recs))
	for i := range recs {
		out[i] = f(&it, &recs[i])
	}
	return out
}

// TestKafkaLogValidator_testValidationOfBatchesWithNonSequentialInnerOffsets
// ports LogValidatorTest#testValidationOfBatchesWithNonSequentialInnerOffsets
// (its magic 2 iteration; magic 0 and 1 are rewritten instead): a gzip
// batch of 20 records all at offset delta 0 has a lastOffsetDelta (0) that
// does not cover its count and is INVALID_RECORD.
func TestKafkaLogValidator_testValidationOfBatchesWithNonSequentialInnerOffsets(t *testing.T) {
	recs := make([]codec.Record, 20)
	for i := range recs {
		recs[i] = codec.Record{Value: []byte(strconv.Itoa(i))}
	}
	in := vBatch(t, codec.BatchHeader{BaseTimestamp: codec.NoTimestamp, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence}, recs, codec.CompressionGzip)
	mustReject(t, mustOpen(t, Config{}), in, kafkaerr.InvalidRecord, nil)
}

// twoBatches is LogValidatorTest's createTwoBatchedRecords: a batch of one
// record at offset 0 and a batch of two at offsets 1 and 2, back to back.
func twoBatches(t *testing.T, c codec.Compression) []byte {
	t.Helper()
	h := codec.BatchHeader{BaseTimestamp: 10, ProducerID: codec.NoProducerID, ProducerEpoch: codec.NoProducerEpoch,
		BaseSequence: codec.NoSequence, PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch}
	a := vBatch(t, h, []codec.Record{{Key: []byte("1"), Value: []byte("a")}}, c)
	h.BaseOffset, h.BaseTimestamp = 1, 11
	b := vBatch(t, h, []codec.Record{{Key: []byte("2"), Value: []byte("b")},
		{OffsetDelta: 1, TimestampDelta: 1, Key: []byte("3"), Value: []byte("c")}}, c)
	return append(a, b...)
}

// TestKafkaLogValidator_checkOnlyOneBatch ports LogValidatorTest#checkOnlyOneBatch,
// its magic 2 parameters (magic,source,target): a producer's append of two
// v2 batches is INVALID_RECORD, compressed or not.
func TestKafkaLogValidator_checkOnlyOneBatch(t *testing.T) {
	for _, p := range []struct {
		name   string
		source codec.Compression
	}{
		{"2,gzip,none", codec.CompressionGzip}, {"2,gzip,gzip", codec.CompressionGzip},
		{"2,snappy,gzip", codec.CompressionSnappy}, {"2,lz4,gzip", codec.CompressionLZ4},
		{"2,none,none", codec.CompressionNone}, {"2,none,gzip", codec.CompressionNone},
		{"2,zstd,gzip", codec.CompressionZstd},
	} {
		t.Run(p.name, func(t *testing.T) {
			mustReject(t, mustOpen(t, Config{}), twoBatches(t, p.source), kafkaerr.InvalidRecord, nil)
		})
	}
}

// TestKafkaLogValidator_testBatchWithoutRecordsNotAllowed ports
// LogValidatorTest#testBatchWithoutRecordsNotAllowed, for every source
// codec (the target codec does not exist here): a v2 batch with no records
// (an empty header: transactional, producer 1324, lastOffsetDelta 5) is
// INVALID_RECORD.
func TestKafkaLogValidator_testBatchWithoutRecordsNotAllowed(t *testing.T) {
	for _, c := range allCodecs {
		t.Run("source="+c.String(), func(t *testing.T) {
			in := vBatch(t, codec.BatchHeader{PartitionLeaderEpoch: 40, Attributes: codec.AttrTransactional,
				BaseTimestamp: codec.NoTimestamp, MaxTimestamp: kNow, ProducerID: 1324, ProducerEpoch: 10,
				BaseSequence: 984, LastOffsetDelta: 5}, nil, c)
			if codec.Batch(in).RecordsCount() != 0 || codec.Batch(in).Compression() != c {
				t.Fatalf("count %d codec %v", codec.Batch(in).RecordsCount(), codec.Batch(in).Compression())
			}
			mustReject(t, mustOpen(t, windowed(5000, 5000)), in, kafkaerr.InvalidRecord, nil)
		})
	}
}

// producerBatch is the batch of checkCompressed and checkNonCompressed:
// producer 1324, epoch 10, base sequence 984, transactional, partition
// leader epoch 40, records "hello", "there", "beautiful" (null keys) at
// now-1, now+1 and now.
func producerBatch(t *testing.T, c codec.Compression) ([]byte, []int64) {
	t.Helper()
	ts := []int64{kNow - 1, kNow + 1, kNow}
	recs := make([]codec.Record, len(ts))
	for i, v := range []string{"hello", "there", "beautiful"} {
		recs[i] = codec.Record{OffsetDelta: int32(i), TimestampDelta: ts[i] - ts[0], Value: []byte(v)}
	}
	return vBatch(t, codec.BatchHeader{PartitionLeaderEpoch: 40, Attributes: codec.AttrTransactional,
		BaseTimestamp: ts[0], ProducerID: 1324, ProducerEpoch: 10, BaseSequence: 984}, recs, c), ts
}

// checkProducerBatch is the body of checkCompressed and checkNonCompressed
// on magic 2: the batch is accepted and stored as sent (in place, CRC
// valid), CreateTime, its baseTimestamp the first record's and its
// maxTimestamp the largest (now+1), the producer fields and partition
// leader epoch kept, every record's timestamp kept, three offsets used.
func checkProducerBatch(t *testing.T, c codec.Compression) {
	t.Helper()
	p := mustOpen(t, Config{LeaderEpoch: 40, TimestampBeforeMaxMs: 1000, TimestampAfterMaxMs: 1000})
	in, ts := producerBatch(t, c)
	s := mustAccept(t, p, in)
	if !bytes.Equal(s, in) {
		t.Error("stored batch is not the producer's bytes")
	}
	if s.Attributes().LogAppendTime() || s.BaseTimestamp() != kNow-1 || s.MaxTimestamp() != kNow+1 {
		t.Errorf("%s, timestamps %d..%d", s.Attributes().TimestampType(), s.BaseTimestamp(), s.MaxTimestamp())
	}
	if s.ProducerID() != 1324 || s.ProducerEpoch() != 10 || s.BaseSequence() != 984 || !s.IsTransactional() ||
		s.PartitionLeaderEpoch() != 40 {
		t.Errorf("header %+v", s.Header())
	}
	if got := timestampsOf(t, s); fmt.Sprint(got) != fmt.Sprint(ts) {
		t.Errorf("record timestamps %v, want %v", got, ts)
	}
	if p.LogEndOffset() != 3 {
		t.Errorf("log end offset %d, want 3", p.LogEndOffset())
	}
}

// TestKafkaLogValidator_checkCompressed ports LogValidatorTest#checkCompressed,
// parameter magic 2: a gzip batch is validated in place (checkProducerBatch).
func TestKafkaLogValidator_checkCompressed(t *testing.T) {
	t.Run("2", func(t *testing.T) { checkProducerBatch(t, codec.CompressionGzip) })
}

// countOverrides is LogValidatorTest's validateRecordBatchWithCountOverrides:
// the three-record batch at timestamp 1234 with recordsCount and
// lastOffsetDelta overwritten (CRC recomputed), appended to a LogAppendTime
// topic.
func countOverrides(t *testing.T, lastOffsetDelta, count int32) ([]byte, *Partition) {
	t.Helper()
	in := codec.Batch(kRecords(t, 1234, codec.CompressionNone))
	binaryPut32(in[codec.OffRecordsCount:], uint32(count))
	binaryPut32(in[codec.OffLastOffsetDelta:], uint32(lastOffsetDelta))
	in.UpdateCRC()
	return in, mustOpen(t, Config{TimestampType: LogAppendTime, TimestampBeforeMaxMs: 1000, TimestampAfterMaxMs: 1000})
}

// TestKafkaLogValidator_testRecordBatchWithCountOverrides ports
// LogValidatorTest#testRecordBatchWithCountOverrides: the control case of
// the two below, recordsCount 3 and lastOffsetDelta 2 written over the same
// values, is accepted.
func TestKafkaLogValidator_testRecordBatchWithCountOverrides(t *testing.T) {
	in, p := countOverrides(t, 2, 3)
	mustAccept(t, p, in)
}

// TestKafkaLogValidator_testInconsistentCountAndOffset ports
// LogValidatorTest#testInconsistentCountAndOffset (lastOffsetDelta,count):
// a recordsCount that is not lastOffsetDelta+1, or a negative
// lastOffsetDelta, is INVALID_RECORD.
func TestKafkaLogValidator_testInconsistentCountAndOffset(t *testing.T) {
	for _, c := range [][2]int32{{0, 3}, {15, 3}, {-3, 3}} {
		t.Run(fmt.Sprintf("%d,%d", c[0], c[1]), func(t *testing.T) {
			in, p := countOverrides(t, c[0], c[1])
			mustReject(t, p, in, kafkaerr.InvalidRecord, nil)
		})
	}
}

// TestKafkaLogValidator_testUnmatchedNumberOfRecords ports
// LogValidatorTest#testUnmatchedNumberOfRecords (lastOffsetDelta,count): a
// recordsCount that agrees with lastOffsetDelta but not with the records
// there are (6 or 2 for 3) is INVALID_RECORD, found by the record walk.
func TestKafkaLogValidator_testUnmatchedNumberOfRecords(t *testing.T) {
	for _, c := range [][2]int32{{5, 6}, {1, 2}} {
		t.Run(fmt.Sprintf("%d,%d", c[0], c[1]), func(t *testing.T) {
			in, p := countOverrides(t, c[0], c[1])
			mustReject(t, p, in, kafkaerr.InvalidRecord, ErrRecordStructure)
		})
	}
}

// invalidCreateTime checks the rule of testInvalidCreateTime*V2: on a
// CreateTime topic with a 1000 ms window, records 1001 ms old are
// INVALID_TIMESTAMP, every one of them listed.
func invalidCreateTime(t *testing.T, c codec.Compression) *RecordError {
	t.Helper()
	in := kRecords(t, kNow-1001, c)
	re := mustReject(t, mustOpen(t, windowed(1000, 1000)), in, kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 3, 0, 1, 2)
	return re
}

// TestKafkaLogValidator_testInvalidCreateTimeNonCompressedV2 ports
// LogValidatorTest#testInvalidCreateTimeNonCompressedV2: an uncompressed
// batch of records older than the window is INVALID_TIMESTAMP.
func TestKafkaLogValidator_testInvalidCreateTimeNonCompressedV2(t *testing.T) {
	invalidCreateTime(t, codec.CompressionNone)
}

// TestKafkaLogValidator_testInvalidCreateTimeCompressedV2 ports
// LogValidatorTest#testInvalidCreateTimeCompressedV2: a gzip batch of
// records older than the window is INVALID_TIMESTAMP.
func TestKafkaLogValidator_testInvalidCreateTimeCompressedV2(t *testing.T) {
	invalidCreateTime(t, codec.CompressionGzip)
}

// TestKafkaLogValidator_checkInvalidSequence ports
// LogValidatorTest#checkInvalidSequence, parameters on magic 2, for every
// codec of the batch (Kafka's second codec parameter, the target, does not
// exist here; magic 0 and 1 are conversions): a batch with a producer ID
// and base sequence -2 is INVALID_RECORD.
func TestKafkaLogValidator_checkInvalidSequence(t *testing.T) {
	for _, c := range allCodecs {
		t.Run("2,"+c.String(), func(t *testing.T) {
			in := codec.Batch(vBatch(t, codec.BatchHeader{ProducerID: 1234, BaseSequence: 0,
				PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch, BaseTimestamp: codec.NoTimestamp},
				[]codec.Record{{Value: []byte("hello")}}, c))
			binaryPut32(in[codec.OffBaseSequence:], uint32(0xfffffffe)) // -2, at byte 53 as in Kafka's test
			in.UpdateCRC()
			mustReject(t, mustOpen(t, windowed(1000, 1000)), in, kafkaerr.InvalidRecord, nil)
		})
	}
}

// TestKafkaLogValidator_checkNoKeyCompactedTopic ports
// LogValidatorTest#checkNoKeyCompactedTopic, its magic 2 parameters: on a
// compacted topic, a batch of records without keys is INVALID_RECORD,
// every record listed.
func TestKafkaLogValidator_checkNoKeyCompactedTopic(t *testing.T) {
	for _, c := range []codec.Compression{codec.CompressionGzip, codec.CompressionLZ4, codec.CompressionSnappy,
		codec.CompressionZstd} {
		t.Run("2,"+c.String()+","+c.String(), func(t *testing.T) {
			cfg := windowed(1000, 1000)
			cfg.Compacted = true
			re := mustReject(t, mustOpen(t, cfg), kRecords(t, codec.NoTimestamp, c), kafkaerr.InvalidRecord, ErrNullKey)
			wantIndexes(t, re, 3, 0, 1, 2)
		})
	}
}

// relativeOffsets checks the rule of testRelativeOffsetAssignment*V2: a
// batch appended at log end offset 1234567 (reached here by a follower's
// append) gets offsets 1234567, 1234568, 1234569 for its records.
func relativeOffsets(t *testing.T, c codec.Compression) {
	t.Helper()
	p := mustOpen(t, windowed(5000, 5000))
	if _, err := p.AppendReplica(mkBatch(t, bspec{PID: -1, Seq: -1, Epoch: -1, Base: 1234566})); err != nil {
		t.Fatal(err)
	}
	in := kRecords(t, kNow, c)
	if got := offsetsOf(t, codec.Batch(in)); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("offsets before the append %v", got)
	}
	s := mustAccept(t, p, in)
	if got := offsetsOf(t, s); fmt.Sprint(got) != "[1234567 1234568 1234569]" {
		t.Errorf("offsets %v", got)
	}
}

// TestKafkaLogValidator_testRelativeOffsetAssignmentNonCompressedV2 ports
// LogValidatorTest#testRelativeOffsetAssignmentNonCompressedV2: an
// uncompressed batch's records take consecutive offsets from the log end.
func TestKafkaLogValidator_testRelativeOffsetAssignmentNonCompressedV2(t *testing.T) {
	relativeOffsets(t, codec.CompressionNone)
}

// TestKafkaLogValidator_testRelativeOffsetAssignmentCompressedV2 ports
// LogValidatorTest#testRelativeOffsetAssignmentCompressedV2: a gzip
// batch's records take consecutive offsets from the log end.
func TestKafkaLogValidator_testRelativeOffsetAssignmentCompressedV2(t *testing.T) {
	relativeOffsets(t, codec.CompressionGzip)
}

// TestKafkaLogValidator_testControlRecordsNotAllowedFromClients ports
// LogValidatorTest#testControlRecordsNotAllowedFromClients: a producer may
// not append a control batch (a COMMIT marker): INVALID_RECORD.
func TestKafkaLogValidator_testControlRecordsNotAllowedFromClients(t *testing.T) {
	mustReject(t, mustOpen(t, windowed(5000, 5000)), mkMarker(23423, 5, 0, false), kafkaerr.InvalidRecord, nil)
}

// TestKafkaLogValidator_testControlRecordsNotCompressed ports
// LogValidatorTest#testControlRecordsNotCompressed: a coordinator's marker
// is stored as one batch, uncompressed, whatever the topic's codec (Kafka's
// test asks for snappy; mirrorpath never recompresses).
func TestKafkaLogValidator_testControlRecordsNotCompressed(t *testing.T) {
	p := mustOpen(t, windowed(5000, 5000))
	in := mkMarker(23423, 5, 0, false)
	s := mustStore(t, p, in, p.AppendCoordinator)
	if n := len(readAll(t, p)); n != 1 {
		t.Fatalf("%d batches", n)
	}
	if s.Compression() != codec.CompressionNone || !s.IsControl() || !bytes.Equal(s[codec.OffMagic:], in[codec.OffMagic:]) {
		t.Errorf("stored marker %+v", s.Header())
	}
}

// TestKafkaLogValidator_testNonIncreasingOffsetRecordBatchHasMetricsLogged
// ports LogValidatorTest#testNonIncreasingOffsetRecordBatchHasMetricsLogged
// (the v2 batch; the target magic 0 is never reached, and the metric is
// Kafka's): records at offset deltas 0, 2 and 3 with the last offset set to
// 2 (base offset -1) are INVALID_RECORD; so is the same batch at base
// offset 0, whose offset range (4) does not match its count (3).
func TestKafkaLogValidator_testNonIncreasingOffsetRecordBatchHasMetricsLogged(t *testing.T) {
	recs := []codec.Record{{Value: []byte("hello")}, {OffsetDelta: 2, Value: []byte("there")},
		{OffsetDelta: 3, Value: []byte("beautiful")}}
	in := codec.Batch(vBatch(t, codec.BatchHeader{BaseTimestamp: codec.NoTimestamp, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence}, recs, codec.CompressionNone))
	base0 := codec.Batch(bytes.Clone(in))
	in.SetLastOffset(2)
	if in.BaseOffset() != -1 {
		t.Fatalf("base offset %d", in.BaseOffset())
	}
	mustReject(t, mustOpen(t, windowed(5000, 5000)), in, kafkaerr.InvalidRecord, nil)
	mustReject(t, mustOpen(t, windowed(5000, 5000)), base0, kafkaerr.InvalidRecord, nil)
}

// TestKafkaLogValidator_testInvalidTimestampExceptionHasBatchIndex ports
// LogValidatorTest#testInvalidTimestampExceptionHasBatchIndex (on a v2
// target; Kafka's target magic 1 is a conversion that the rejection comes
// before): the INVALID_TIMESTAMP of a gzip batch lists every record at
// fault, 3 of 3.
func TestKafkaLogValidator_testInvalidTimestampExceptionHasBatchIndex(t *testing.T) {
	re := invalidCreateTime(t, codec.CompressionGzip)
	if re.Err != kafkaerr.InvalidTimestamp || re.Count != 3 {
		t.Errorf("%v: %d records", re.Err, re.Count)
	}
}

// TestKafkaLogValidator_testBatchWithInvalidRecordsAndInvalidTimestamp
// ports LogValidatorTest#testBatchWithInvalidRecordsAndInvalidTimestamp: in
// a batch where some records are invalid and one has a timestamp out of
// range, the answer is INVALID_TIMESTAMP and every record at fault (6) is
// listed. Kafka's batch is v1 and its invalid records v0 ones (an inner
// magic mismatch, which v2 cannot express); here, in a gzip v2 batch, they
// are five records without a key on a compacted topic, after one keyed
// record at timestamp 1200.
func TestKafkaLogValidator_testBatchWithInvalidRecordsAndInvalidTimestamp(t *testing.T) {
	recs := []codec.Record{{Key: []byte("k"), Value: []byte("timestamp")}}
	for i := range 5 {
		recs = append(recs, codec.Record{OffsetDelta: int32(i + 1), TimestampDelta: kNow - 1200,
			Value: []byte(strconv.Itoa(i))})
	}
	in := vBatch(t, codec.BatchHeader{BaseTimestamp: 1200, ProducerID: codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence}, recs, codec.CompressionGzip)
	cfg := windowed(1000, 1000)
	cfg.Compacted = true
	re := mustReject(t, mustOpen(t, cfg), in, kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 6, 0, 1, 2, 3, 4, 5)
}

// timestampWindow checks the rule of testRecordWith*TimestampIsRejected: a
// window of 24 hours before and 1 hour after now; gzip records at ts are
// INVALID_TIMESTAMP, all 3 listed.
func timestampWindow(t *testing.T, ts int64) {
	t.Helper()
	before, after := (24 * time.Hour).Milliseconds(), time.Hour.Milliseconds()
	re := mustReject(t, mustOpen(t, windowed(before, after)), kRecords(t, ts, codec.CompressionGzip),
		kafkaerr.InvalidTimestamp, ErrTimestampOutOfRange)
	wantIndexes(t, re, 3, 0, 1, 2)
	// The edges of the window are inside it.
	for _, edge := range []int64{kNow - before, kNow + after} {
		mustAccept(t, mustOpen(t, windowed(before, after)), kRecords(t, edge, codec.CompressionGzip))
	}
}

// TestKafkaLogValidator_testRecordWithPastTimestampIsRejected ports
// LogValidatorTest#testRecordWithPastTimestampIsRejected: records five
// minutes older than message.timestamp.before.max.ms allows are
// INVALID_TIMESTAMP.
func TestKafkaLogValidator_testRecordWithPastTimestampIsRejected(t *testing.T) {
	timestampWindow(t, kNow-(24*time.Hour).Milliseconds()-(5*time.Minute).Milliseconds())
}

// TestKafkaLogValidator_testRecordWithFutureTimestampIsRejected ports
// LogValidatorTest#testRecordWithFutureTimestampIsRejected: records five
// minutes further ahead than message.timestamp.after.max.ms allows are
// INVALID_TIMESTAMP.
func TestKafkaLogValidator_testRecordWithFutureTimestampIsRejected(t *testing.T) {
	timestampWindow(t, kNow+time.Hour.Milliseconds()+(5*time.Minute).Milliseconds())
}

// gzipBatch builds a gzip batch of recs compressed at the given level, no
// timestamps (baseTimestamp and maxTimestamp -1).
func gzipBatch(t *testing.T, recs []codec.Record, level int) []byte {
	t.Helper()
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(encode(recs))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h := codec.BatchHeader{BaseTimestamp: codec.NoTimestamp, MaxTimestamp: codec.NoTimestamp,
		ProducerID: codec.NoProducerID, ProducerEpoch: codec.NoProducerEpoch, BaseSequence: codec.NoSequence,
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch, LastOffsetDelta: int32(len(recs) - 1)}
	b := codec.Batch(append(vBatch(t, h, nil, codec.CompressionNone), z.Bytes()...))
	binaryPut32(b[codec.OffBatchLength:], uint32(len(b)-codec.LogOverhead))
	binaryPut32(b[codec.OffRecordsCount:], uint32(len(recs)))
	b.SetAttributes(codec.Attributes(codec.CompressionGzip))
	b.UpdateCRC()
	return b
}

// TestKafkaLogValidator_testDifferentLevelDoesNotCauseRecompression ports
// LogValidatorTest#testDifferentLevelDoesNotCauseRecompression: a gzip
// batch compressed at the highest level is stored as the producer wrote
// it, not recompressed at another level (Kafka's topic asks for gzip's
// lowest; mirrorpath never recompresses).
func TestKafkaLogValidator_testDifferentLevelDoesNotCauseRecompression(t *testing.T) {
	recs := []codec.Record{{Value: bytes.Repeat([]byte("some"), 256)},
		{OffsetDelta: 1, Value: bytes.Repeat([]byte("data"), 256)}}
	maxLevel := gzipBatch(t, recs, gzip.BestCompression)
	minLevel := gzipBatch(t, recs, gzip.BestSpeed)
	if bytes.Equal(maxLevel, minLevel) {
		t.Fatal("the two levels wrote the same bytes")
	}
	s := mustAccept(t, mustOpen(t, windowed(5000, 5000)), maxLevel)
	if !bytes.Equal(s[codec.OffMagic:], maxLevel[codec.OffMagic:]) {
		t.Error("stored batch is not the producer's bytes")
	}
}

// TestKafkaLogValidator_checkNonCompressed ports
// LogValidatorTest#checkNonCompressed, parameter magic 2: an uncompressed
// batch is validated in place (checkProducerBatch).
func TestKafkaLogValidator_checkNonCompressed(t *testing.T) {
	t.Run("2", func(t *testing.T) { checkProducerBatch(t, codec.CompressionNone) })
}

// checkLogAppendTime checks the rule of checkLogAppendTime*: on a
// LogAppendTime topic, a batch at timestamp 1234 (far outside the 1000 ms
// window, which does not apply) is stored at its size with the
// LogAppendTime type, maxTimestamp now, its baseTimestamp kept (1234),
// every record's timestamp now, a valid CRC, and three offsets used.
func checkLogAppendTime(t *testing.T, c codec.Compression) {
	t.Helper()
	p := mustOpen(t, Config{TimestampType: LogAppendTime, TimestampBeforeMaxMs: 1000, TimestampAfterMaxMs: 1000})
	in := kRecords(t, 1234, c)
	s := mustAccept(t, p, in)
	if len(s) != len(in) || s.Compression() != c {
		t.Errorf("stored %d bytes of %v, sent %d", len(s), s.Compression(), len(in))
	}
	if !s.Attributes().LogAppendTime() || s.MaxTimestamp() != kNow || s.BaseTimestamp() != 1234 {
		t.Errorf("%s, timestamps %d..%d", s.Attributes().TimestampType(), s.BaseTimestamp(), s.MaxTimestamp())
	}
	if got := timestampsOf(t, s); fmt.Sprint(got) != fmt.Sprint([]int64{kNow, kNow, kNow}) {
		t.Errorf("record timestamps %v, want now (%d)", got, kNow)
	}
	if p.LogEndOffset() != 3 {
		t.Errorf("log end offset %d, want 3", p.LogEndOffset())
	}
}

// TestKafkaLogValidator_checkLogAppendTimeWithoutRecompression ports
// LogValidatorTest#checkLogAppendTimeWithoutRecompression, parameter magic
// 2: a gzip batch is stamped in place (checkLogAppendTime).
func TestKafkaLogValidator_checkLogAppendTimeWithoutRecompression(t *testing.T) {
	t.Run("2", func(t *testing.T) { checkLogAppendTime(t, codec.CompressionGzip) })
}

// TestKafkaLogValidator_checkLogAppendTimeNonCompressed ports
// LogValidatorTest#checkLogAppendTimeNonCompressed, parameter magic 2: an
// uncompressed batch is stamped in place (checkLogAppendTime).
func TestKafkaLogValidator_checkLogAppendTimeNonCompressed(t *testing.T) {
	t.Run("2", func(t *testing.T) { checkLogAppendTime(t, codec.CompressionNone) })
}
