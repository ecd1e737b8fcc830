package appendpath

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Design note: LogValidator's record checks for CLIENT appends
// (LogValidator#validateMessagesAndAssignOffsets, #validateRecord,
// #validateTimestamp, #processRecordErrors).
//
// After the batch rules of checkLeader, validate walks every record of the
// caller's batch once, uncompressed in place or decompressed into the
// partition's scratch buffer (bounded by Config.MaxDecompressedBytes), and
// checks per record, in LogValidator#validateRecord's order: the key
// (compacted topics), then the timestamp (LogValidator#validateTimestamp).
// A record that does not decode, or a recordsCount that does not match the
// records, stops the walk at once with INVALID_RECORD, as the iterator's
// InvalidRecordException does in Kafka. Key and timestamp errors are
// collected over the whole batch; INVALID_TIMESTAMP wins over INVALID_RECORD
// (LogValidator#processRecordErrors). The walk has two loops: one without
// rule checks for the usual topic, where no record rule can fail (not
// compacted, no finite window on CreateTime, not a LogAppendTime batch), and
// the general one; on a fault the general loop runs again to collect every
// record at fault, so the hot loop carries no collector. A compressed inner
// record (nested compression, LogValidator#validateRecordCompression) cannot
// occur in v2 and is not checked.
//
// What a valid batch then needs is decided here and applied later to the
// log's staged copy, never to the caller's bytes:
//
//   - in place (every uncompressed batch; a compressed one whose inner offset
//     deltas are 0..n-1): DefaultRecordBatch#setMaxTimestamp(topic type, ts)
//     with ts = now (LogAppendTime topic) or the largest record timestamp
//     (CreateTime; -1 when no record has one above -1). Nothing changes when
//     the type and the value are already right; otherwise the attributes
//     (codec, transactional, control, delete-horizon bits kept; timestamp-type
//     bit set from the topic; bits 7-15 cleared, as computeAttributes does)
//     and maxTimestamp are written and the CRC follows by an O(1) patch,
//     which equals a recompute (TestValidateHeaderFixCRC).
//   - rebuild (a compressed batch whose inner offset deltas are not 0..n-1:
//     LogValidator#buildRecordsAndAssignOffsets): a new batch with the same
//     codec, producer ID, epoch, base sequence and transactional bit, records
//     with offset deltas 0..n-1, timestamps kept (baseTimestamp the first
//     record's, deltas from it), record attributes 0, maxTimestamp as above,
//     a fresh CRC. It is written instead of the caller's bytes and its size is
//     checked against Config.MaxMessageBytes again (UnifiedLog#append's
//     size check after validation). The records are re-encoded one by one
//     and compressed by codec.Compress (never gathered as a []codec.Record,
//     ~15 times the bytes for tiny records). A rebuild allocates the
//     compressor's state; the in-place paths nothing.
//   - which reader: an uncompressed batch is read with DefaultRecord.readFrom
//     (codec.NewRecordIter), as assignOffsetsNonCompressed iterates it; a
//     compressed one with Kafka's partial read (codec.NewPartialRecordIter),
//     as validateMessagesAndAssignOffsetsCompressed does when it may keep the
//     batch in place, which is always here (no topic codec other than the
//     producer's). The partial read ignores each record's length field and
//     the header-count bound, so a batch whose records have wrong lengths is
//     accepted and kept in place, as in Kafka.
//   - a rebuild after the partial read: Kafka then calls key() on its partial
//     records, which throws, and the broker answers UNKNOWN_SERVER_ERROR for
//     every compressed batch whose inner offsets are not 0..n-1. We do what
//     LogValidator's comment there intends (rewrite the batch for older
//     clients): the rebuild reads the records again with the full read and
//     writes them; a batch that only the partial read accepts cannot be
//     rebuilt and is INVALID_RECORD (ErrRecordStructure), the answer Kafka's
//     full reader gives. docs/kafka-differences.md lists this difference.
//   - scratch (decompressed, re-encoded, rebuilt) is kept between appends up
//     to retainScratch (4 MiB) each and freed after a batch that grew it past.
//
// Limits Kafka does not have: MaxDecompressedBytes. Beyond it the batch is
// INVALID_RECORD (ErrDecompressedTooLarge), not CORRUPT_MESSAGE: the bytes
// passed their CRC and the answer will not change, while CORRUPT_MESSAGE is
// retriable in the Java client, which would resend the batch until
// delivery.timeout.ms. A stream the codec rejects is INVALID_RECORD too
// (Kafka: EOFException → InvalidRecordException; other IOExceptions surface
// as UNKNOWN_SERVER_ERROR, which we do not copy).
//
// Cost: O(records) varint parsing on top of checkLeader's CRC pass, plus the
// decompression of a compressed batch; one clock read per append when the
// topic is LogAppendTime or a timestamp window is finite; no allocation once
// the scratch buffer has grown (TestAppendAllocs/client/*).

// TimestampType is the topic's message.timestamp.type.
type TimestampType uint8

const (
	// CreateTime (the default): records keep the producer's timestamps,
	// checked against Config.TimestampBeforeMaxMs/TimestampAfterMaxMs.
	CreateTime TimestampType = iota
	// LogAppendTime: the leader stamps maxTimestamp = now and sets the
	// timestamp-type bit; record timestamps are not checked.
	LogAppendTime
)

// String returns Kafka's name of t.
func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "TimestampType(" + strconv.Itoa(int(t)) + ")"
}

// DefaultMaxDecompressedBytes is Config.MaxDecompressedBytes when it is 0.
const DefaultMaxDecompressedBytes = 64 << 20

// validator holds one partition's LogValidator settings, its reused
// buffers, and what the last validated batch needs done to the staged copy.
// Owned by the Partition and used under its lock.
type validator struct {
	typ             TimestampType
	before, after   int64
	windowed        bool // before or after is finite: the clock is needed
	compacted       bool
	maxDecompressed int

	buf []byte // decompressed records, reused
	raw []byte // re-encoded records of a batch being rebuilt, reused
	out []byte // the rebuilt batch, reused

	// Set by validate for the batch it accepted.
	fix     bool             // write attrs and maxTS into the staged copy
	attrs   codec.Attributes // new attributes when fix
	maxTS   int64            // new maxTimestamp when fix
	rebuilt bool             // out holds the batch to write instead of the caller's
}

// validatorDefaults checks the LogValidator fields of cfg and fills in
// Kafka's defaults for zero values.
func validatorDefaults(cfg *Config) error {
	switch {
	case cfg.TimestampType > LogAppendTime:
		return fmt.Errorf("%w: TimestampType %d", ErrInvalidConfig, cfg.TimestampType)
	case cfg.TimestampBeforeMaxMs < 0:
		return fmt.Errorf("%w: TimestampBeforeMaxMs %d < 0", ErrInvalidConfig, cfg.TimestampBeforeMaxMs)
	case cfg.TimestampAfterMaxMs < 0:
		return fmt.Errorf("%w: TimestampAfterMaxMs %d < 0", ErrInvalidConfig, cfg.TimestampAfterMaxMs)
	case cfg.MaxDecompressedBytes < 0:
		return fmt.Errorf("%w: MaxDecompressedBytes %d < 0", ErrInvalidConfig, cfg.MaxDecompressedBytes)
	}
	if cfg.TimestampBeforeMaxMs == 0 {
		cfg.TimestampBeforeMaxMs = math.MaxInt64
	}
	if cfg.TimestampAfterMaxMs == 0 {
		cfg.TimestampAfterMaxMs = math.MaxInt64
	}
	if cfg.MaxDecompressedBytes == 0 {
		cfg.MaxDecompressedBytes = DefaultMaxDecompressedBytes
	}
	return nil
}

func newValidator(cfg *Config) validator {
	return validator{
		typ: cfg.TimestampType, before: cfg.TimestampBeforeMaxMs, after: cfg.TimestampAfterMaxMs,
		windowed:  cfg.TimestampBeforeMaxMs != math.MaxInt64 || cfg.TimestampAfterMaxMs != math.MaxInt64,
		compacted: cfg.Compacted, maxDecompressed: cfg.MaxDecompressedBytes,
	}
}

// recordErrs collects key and timestamp errors over a batch without
// allocating; err builds the RecordError once the walk is over.
type recordErrs struct {
	count     int
	timestamp bool  // some record broke a timestamp rule
	first     error // reason of the first record at fault
	firstTS   error // reason of the first timestamp fault
	idx       [MaxRecordErrorIndexes]int32
}

func (e *recordErrs) add(i int32, reason error, timestamp bool) {
	if e.count < len(e.idx) {
		e.idx[e.count] = i
	}
	if e.count == 0 {
		e.first = reason
	}
	if timestamp && !e.timestamp {
		e.timestamp, e.firstTS = true, reason
	}
	e.count++
}

func (e *recordErrs) err() error {
	re := &RecordError{Err: kafkaerr.InvalidRecord, Reason: e.first, Count: e.count, idx: e.idx}
	if e.timestamp {
		re.Err, re.Reason = kafkaerr.InvalidTimestamp, e.firstTS
	}
	re.Indexes = re.idx[:min(e.count, len(re.idx))]
	return re
}

// recordError is a one-reason RecordError (at record index i, or none when
// i < 0).
func recordError(code *kafkaerr.Error, reason, cause error, i int32) error {
	re := &RecordError{Err: code, Reason: reason, Cause: cause}
	if i >= 0 {
		re.idx[0], re.Count = i, 1
		re.Indexes = re.idx[:1]
	}
	return re
}

// validate runs LogValidator's record checks on b, a CLIENT batch that
// passed checkLeader's batch rules (recordsCount = lastOffsetDelta+1 > 0, not
// control), and records in v what the staged copy needs. now is read at most
// once. b is only read. O(records) plus decompression; no allocation unless
// the scratch buffer grows, the batch is rejected, or it is rebuilt.
func (v *validator) validate(b codec.Batch, now func() time.Time, maxMessageBytes int) error {
	v.fix, v.rebuilt = false, false
	err := v.check(b, now, maxMessageBytes)
	v.trim(!v.rebuilt)
	return err
}

func (v *validator) check(b codec.Batch, now func() time.Time, maxMessageBytes int) error {
	c := b.Compression()
	data := []byte(b[codec.HeaderSize:])
	if c != codec.CompressionNone {
		if !c.Valid() {
			return recordError(kafkaerr.UnknownServerError, ErrUnsupportedCompression, nil, -1)
		}
		out, err := codec.Decompress(v.buf, b, v.maxDecompressed)
		v.buf = out // buf's storage or its growth: kept for the next batch and for rebuild
		if err != nil {
			if err == codec.ErrDecompressionLimit {
				return recordError(kafkaerr.InvalidRecord, ErrDecompressedTooLarge, err, -1)
			}
			return recordError(kafkaerr.InvalidRecord, ErrBadCompression, err, -1)
		}
		data = out
	}
	var nowMs int64
	if v.typ == LogAppendTime || v.windowed {
		nowMs = now().UnixMilli()
	}
	maxTS, inPlace, err := v.walk(b, data, nowMs, nil)
	if err != nil {
		if err == errCollect {
			return v.collect(b, data, nowMs)
		}
		return err
	}
	if c != codec.CompressionNone && !inPlace {
		return v.rebuild(b, nowMs, maxTS, maxMessageBytes)
	}
	// DefaultRecordBatch#setMaxTimestamp(topic type, ts).
	wantTS, wantLAT := maxTS, false
	if v.typ == LogAppendTime {
		wantTS, wantLAT = nowMs, true
	}
	if b.Attributes().LogAppendTime() == wantLAT && b.MaxTimestamp() == wantTS {
		return nil
	}
	v.fix, v.maxTS = true, wantTS
	v.attrs = b.Attributes() & (codec.AttrCompressionMask | codec.AttrTransactional | codec.AttrControl | codec.AttrDeleteHorizon)
	if wantLAT {
		v.attrs |= codec.AttrLogAppendTime
	}
	return nil
}

// errCollect is walk's answer, without errs, to a record at fault.
var errCollect = errors.New("appendpath: record at fault")

// walk reads the b.RecordsCount() records in data (b's records section, or
// its decompression) and applies validateRecord to each: the key, then the
// timestamp. It returns the largest record timestamp (-1 if none is larger)
// and whether the inner offset deltas are 0..n-1. A record that does not
// decode ends the walk with its RecordError. With errs nil the first key or
// timestamp fault returns errCollect at once (the hot path carries no
// collector); with errs the walk goes on and collects every fault.
func (v *validator) walk(b codec.Batch, data []byte, nowMs int64, errs *recordErrs) (maxTS int64, inPlace bool, err error) {
	lat := b.Attributes().LogAppendTime()
	base, batchMax := b.BaseTimestamp(), b.MaxTimestamp()
	count := b.RecordsCount()
	it := codec.NewRecordIter(data, count)
	if b.Compression() != codec.CompressionNone {
		// LogValidator reads a compressed batch it may keep in place with
		// DefaultRecordBatch#skipKeyValueIterator: the partial read, which
		// ignores record lengths and the header-count bound.
		it = codec.NewPartialRecordIter(data, count)
	}
	maxTS, inPlace = codec.NoTimestamp, true
	var r codec.Record
	if errs == nil && !lat && !v.compacted && (!v.windowed || v.typ == LogAppendTime) {
		// No record rule can fail (the usual topic): only the largest
		// timestamp and the offsets are wanted. FuzzValidateClient holds
		// this loop to the reference like the general one.
		for i := range count {
			if err := it.Read(&r); err != nil {
				return 0, false, recordError(kafkaerr.InvalidRecord, ErrRecordStructure, err, i)
			}
			maxTS = max(maxTS, base+r.TimestampDelta)
			inPlace = inPlace && r.OffsetDelta == i
		}
		return maxTS, inPlace, nil
	}
	for i := range count { // count > 0: the iterator returns io.EOF after the last, never before
		if err := it.Read(&r); err != nil {
			return 0, false, recordError(kafkaerr.InvalidRecord, ErrRecordStructure, err, i)
		}
		var fault error
		ts := base + r.TimestampDelta
		if lat {
			ts = batchMax
		}
		switch {
		case v.compacted && r.Key == nil: // validateKey
			fault = ErrNullKey
		case v.typ == CreateTime && ts != codec.NoTimestamp: // validateTimestamp
			if d := nowMs - ts; v.windowed && (d > v.before || -d > v.after) {
				fault = ErrTimestampOutOfRange
			}
		case lat:
			fault = ErrProducerLogAppendTime
		}
		if fault != nil {
			if errs == nil {
				return 0, false, errCollect
			}
			errs.add(i, fault, fault != ErrNullKey)
			continue
		}
		maxTS = max(maxTS, ts)
		inPlace = inPlace && r.OffsetDelta == i // matters for compressed batches only (LogValidator#validateMessagesAndAssignOffsetsCompressed)
	}
	if errs != nil && errs.count > 0 {
		return 0, false, errs.err()
	}
	return maxTS, inPlace, nil
}

// collect walks b's records again, collecting every key and timestamp fault
// (LogValidator's recordErrors), for the RecordError of a rejected batch.
func (v *validator) collect(b codec.Batch, data []byte, nowMs int64) error {
	var errs recordErrs
	_, _, err := v.walk(b, data, nowMs, &errs)
	return err
}

// applyFix writes what validate decided into the staged copy s (O(1): the
// CRC is patched).
func (v *validator) applyFix(s codec.Batch) {
	if v.fix {
		s.SetAttributes(v.attrs)
		s.SetMaxTimestamp(v.maxTS)
	}
}

// rebuild builds into v.out the batch LogValidator#buildRecordsAndAssignOffsets
// writes for b, whose decompressed records are in v.buf and valid. The
// records are re-encoded one by one into v.raw (never gathered as a
// []codec.Record, which could be 15 times the decompressed bytes for tiny
// records), then compressed with b's codec. Allocates the compressor's state
// and, until they have grown, v.raw and v.out: at most a few times the
// decompressed size, which MaxDecompressedBytes bounds.
func (v *validator) rebuild(b codec.Batch, nowMs, maxTS int64, maxMessageBytes int) error {
	lat := b.Attributes().LogAppendTime()
	base, batchMax := b.BaseTimestamp(), b.MaxTimestamp()
	count := b.RecordsCount()
	it := codec.NewRecordIter(v.buf, count)
	raw := v.raw[:0]
	first := codec.NoTimestamp
	var r codec.Record
	for i := range count {
		// validate read these bytes with the partial read; the full read,
		// which the rebuild needs for keys, values and headers, can still
		// fail (record lengths, header counts): INVALID_RECORD, see the
		// design note.
		if err := it.Read(&r); err != nil {
			return recordError(kafkaerr.InvalidRecord, ErrRecordStructure, err, i)
		}
		ts := base + r.TimestampDelta
		if lat {
			ts = batchMax
		}
		if ts < 0 && ts != codec.NoTimestamp {
			return recordError(kafkaerr.UnknownServerError, ErrRebuildNegativeTimestamp, nil, i)
		}
		if i == 0 {
			first = ts
		}
		r.Attributes, r.OffsetDelta, r.TimestampDelta = 0, i, ts-first
		raw = codec.AppendRecord(raw, r)
	}
	v.raw = raw
	h := codec.BatchHeader{
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch,
		Attributes:           b.Attributes() & codec.AttrTransactional,
		BaseTimestamp:        first,
		MaxTimestamp:         maxTS,
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
		LastOffsetDelta:      count - 1,
	}
	if v.typ == LogAppendTime {
		h.Attributes |= codec.AttrLogAppendTime
		h.MaxTimestamp = nowMs
	}
	// The header of an empty batch (maxTimestamp written as given), then the
	// compressed records; count, codec, length and CRC filled in after.
	out, err := codec.AppendBatch(v.out[:0], h, nil, codec.CompressionNone)
	if err == nil {
		out, err = codec.Compress(out, raw, b.Compression())
	}
	if err != nil {
		return recordError(kafkaerr.UnknownServerError, ErrRecordStructure, err, -1)
	}
	v.out = out
	be := binary.BigEndian
	be.PutUint32(out[codec.OffRecordsCount:], uint32(count))
	be.PutUint16(out[codec.OffAttributes:], uint16(h.Attributes|codec.Attributes(b.Compression())))
	if len(out)-codec.LogOverhead > math.MaxInt32 || len(out) > maxMessageBytes {
		return kafkaerr.MessageTooLarge
	}
	be.PutUint32(out[codec.OffBatchLength:], uint32(len(out)-codec.LogOverhead))
	codec.Batch(out).UpdateCRC()
	v.rebuilt = true
	return nil
}

// retainScratch is the most scratch memory (each of buf, raw, out) a
// partition keeps between appends: a batch that decompresses to more gets
// its buffers freed afterwards, so one huge batch does not pin its memory.
const retainScratch = 4 << 20

// trim frees the scratch buffers grown past retainScratch; out too unless
// it holds a rebuilt batch still to be staged.
func (v *validator) trim(out bool) {
	if cap(v.buf) > retainScratch {
		v.buf = nil
	}
	if cap(v.raw) > retainScratch {
		v.raw = nil
	}
	if out && cap(v.out) > retainScratch {
		v.out = nil
	}
}

// checkLeader runs the checks of a CLIENT or COORDINATOR batch that read
// only the caller's bytes (UnifiedLog#analyzeAndValidateRecords, then
// LogValidator#validateBatch), in Kafka's order; the last is
// LogValidator's record walk (p.val.validate), which Kafka runs for every
// leader append (origin other than REPLICATION and RAFT_LEADER): the
// batch-level rules before it are CLIENT-only, the record rules and the
// maxTimestamp / LogAppendTime stamp apply to COORDINATOR batches too.
func (p *Partition) checkLeader(b codec.Batch, k kind) error {
	if k == kindClient && b.BaseOffset() != 0 {
		return kafkaerr.InvalidRecord
	}
	if len(b) > p.cfg.MaxMessageBytes {
		return kafkaerr.MessageTooLarge
	}
	if b.VerifyCRC() != nil {
		return kafkaerr.CorruptMessage
	}
	if k != kindClient {
		if b.LastOffsetDelta() < 0 {
			// Kafka does not check a COORDINATOR batch's offset range; a
			// negative one would put lastOffset before baseOffset in our log.
			return kafkaerr.CorruptMessage
		}
	} else {
		// LogValidator#validateBatch: lastOffset−baseOffset+1 > 0 (baseOffset
		// is 0 here), recordsCount > 0, and the two equal; all
		// InvalidRecordException. Compared in int64, as the Java does: a
		// count of MinInt32 beside a lastOffsetDelta of MaxInt32 is not equal.
		n := b.RecordsCount()
		switch {
		case b.LastOffsetDelta() < 0, n <= 0, int64(n) != int64(b.LastOffsetDelta())+1:
			return kafkaerr.InvalidRecord
		case b.IsControl():
			return kafkaerr.InvalidRecord
		case b.HasProducerID() && b.BaseSequence() < 0:
			return kafkaerr.InvalidRecord
		}
	}
	// LogValidator's record checks (validate.go); p.val says what the staged
	// copy then needs.
	return p.val.validate(b, p.now, p.cfg.MaxMessageBytes)
}
