package appendpath

import (
	"errors"
	"strconv"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Append errors, as Kafka names them on the wire: the kafkaerr codes
// themselves, so the producer-state errors that psm's Add returns come back
// unchanged beside them. INVALID_RECORD: a CLIENT batch breaks a LogValidator
// rule (LogValidator#validateBatch): not exactly one batch, baseOffset ≠ 0,
// recordsCount ≠ lastOffsetDelta+1, recordsCount ≤ 0, a control batch, a PID
// without a sequence (all bare); or, as a *RecordError, a record rule
// (ErrRecordStructure, ErrNullKey, ErrBadCompression, ErrDecompressedTooLarge).
// INVALID_TIMESTAMP: a CLIENT record whose timestamp is outside the topic's
// window, or a batch the producer flagged LogAppendTime
// (LogValidator#validateTimestamp), always a *RecordError. CORRUPT_MESSAGE:
// framing or CRC failure (CorruptRecordException). MESSAGE_TOO_LARGE: a batch
// above Config.MaxMessageBytes (leader origins only). OFFSET_OUT_OF_RANGE: Read
// below the log start offset. READ_ONLY_TOPIC: a CLIENT or COORDINATOR append
// to a partition that is MIRRORING, STOPPING or FAILED (KIP-1279's
// ReadOnlyTopicException). NOT_MIRRORING: a mirrored append to a partition
// that is not MIRRORING (the fetcher was removed by STOPPING).
// MIRROR_PARTITION_FAILED: a mirrored append to a partition in FAILED.
// UNMAPPABLE_PRODUCER_ID: the strategy cannot map a source PID (bitfield with
// policy reject and PID ≥ 2^31; the -1 slot with salts off; no free region);
// the chunk is not appended, the partition moves to FAILED, and the append
// returns the pid package's error, wrapped in this code unless it is
// pid.ErrUnmappable, a Reason that wraps it already. Classify with errors.Is.
var (
	// ErrOffsetsOutOfOrder: a REPLICATION append whose offsets do not increase
	// (Kafka's UnexpectedAppendOffsetException / OffsetsOutOfOrderException,
	// which reach the wire as UNKNOWN_SERVER_ERROR).
	ErrOffsetsOutOfOrder = kafkaerr.NewReason(kafkaerr.UnknownServerError, "appendpath: batch offsets do not increase")
	// ErrOffsetOverflow: a REPLICATION append of a batch whose last offset is
	// math.MaxInt64, after which the log's next offset would not be an int64
	// (Kafka's LogSegmentOffsetOverflowException from
	// LogSegment#ensureOffsetInRange, UNKNOWN_SERVER_ERROR on the wire).
	ErrOffsetOverflow = kafkaerr.NewReason(kafkaerr.UnknownServerError, "appendpath: batch offsets overflow")
)

// Errors that are not append results.
var (
	// ErrState: an operation not allowed in the partition's mirror state.
	ErrState = errors.New("appendpath: operation not allowed in this mirror state")
	// ErrFault: a STOPPING step failed because a fault hook said so.
	ErrFault = errors.New("appendpath: injected fault")
	// ErrPromotionImpossible: a STOPPING promotion check (StopOptions.Promote)
	// found that the partition can never be made writable safely, for
	// instance a PID allocator that cannot advance past the mirrored PIDs.
	// The partition moves to FAILED.
	ErrPromotionImpossible = errors.New("appendpath: promotion impossible")
	// ErrClosed: the partition was closed.
	ErrClosed = errors.New("appendpath: partition closed")
	// ErrInvalidConfig: Open was given a Config it cannot honour (a negative
	// timestamp window, an unknown TimestampType); wrapped with the field.
	ErrInvalidConfig = errors.New("appendpath: invalid Config")
	// ErrUnknownSource: STOPPING needs the source cluster id for the
	// barrier and the partition knows none (UnknownSource retry or fail).
	ErrUnknownSource = errors.New("appendpath: STOPPING barrier: source cluster id unknown")
	// ErrStopStuck: an earlier STOPPING step failed under StepErrorsStuck;
	// the partition stays STOPPING until it reopens.
	ErrStopStuck = errors.New("appendpath: STOPPING stuck after a failed step")
	// ErrNoLeaderEpoch: STOPPING of a partition whose log holds no batch
	// (no leader epoch to record) under StopHazards.HangWhenEmpty.
	ErrNoLeaderEpoch = errors.New("appendpath: STOPPING: no leader epoch yet (empty partition)")
	// ErrTerminal: the partition is FAILED for good (Fail); Stop refuses.
	ErrTerminal = errors.New("appendpath: mirror partition failed for good")
	// ErrSourceMismatch: a mirrored append names another source cluster
	// than the mirror checkpoint (Hazards.FailOnSourceChange); it matches
	// kafkaerr.MirrorPartitionFailed too.
	ErrSourceMismatch = errors.New("appendpath: inconsistent source cluster id")
	// ErrUnknownName: a StopVariant, AbortMarker, StopStep, UnknownSource
	// or StepErrors name that is not one of the names this package prints.
	ErrUnknownName = errors.New("appendpath: unknown name")
)

// The rules of LogValidator a CLIENT batch can break record by record
// (LogValidator#validateRecord, #validateTimestamp): the Reason of a *RecordError. Each is
// only a reason; the Kafka error on the wire is the RecordError's Err.
var (
	// ErrTimestampOutOfRange: CreateTime topic, a record timestamp t ≠ -1 with
	// now−t > Config.TimestampBeforeMaxMs or t−now > Config.TimestampAfterMaxMs.
	// INVALID_TIMESTAMP.
	ErrTimestampOutOfRange = errors.New("appendpath: record timestamp out of range")
	// ErrProducerLogAppendTime: the producer set the LogAppendTime bit on a
	// LogAppendTime topic, or on a CreateTime topic with maxTimestamp -1.
	// INVALID_TIMESTAMP.
	ErrProducerLogAppendTime = errors.New("appendpath: producer set timestamp type LogAppendTime")
	// ErrNullKey: a record without a key on a compacted topic. INVALID_RECORD.
	ErrNullKey = errors.New("appendpath: null key on a compacted topic")
	// ErrRecordStructure: a record that does not decode (codec's record
	// checks) or a recordsCount that does not match the records (fewer or
	// more). INVALID_RECORD; Cause holds codec's error.
	ErrRecordStructure = errors.New("appendpath: invalid record structure")
	// ErrBadCompression: the records of a compressed batch do not decompress
	// (corrupt or truncated stream). INVALID_RECORD; Cause holds codec's error.
	ErrBadCompression = errors.New("appendpath: records do not decompress")
	// ErrDecompressedTooLarge: the records decompress to more than
	// Config.MaxDecompressedBytes. INVALID_RECORD (a limit Kafka lacks; see
	// validate.go for why not CORRUPT_MESSAGE).
	ErrDecompressedTooLarge = errors.New("appendpath: decompressed records exceed MaxDecompressedBytes")
	// ErrUnsupportedCompression: attribute codec bits 5-7. Kafka's
	// CompressionType.forId throws IllegalArgumentException: UNKNOWN_SERVER_ERROR.
	ErrUnsupportedCompression = errors.New("appendpath: unknown compression codec")
	// ErrRebuildNegativeTimestamp: a batch that must be rebuilt holds a
	// record timestamp below -1, which MemoryRecordsBuilder refuses with
	// IllegalArgumentException: UNKNOWN_SERVER_ERROR.
	ErrRebuildNegativeTimestamp = errors.New("appendpath: negative record timestamp in a rebuilt batch")
)

// MaxRecordErrorIndexes is how many record indexes a RecordError keeps.
const MaxRecordErrorIndexes = 8

// RecordError is a CLIENT batch that LogValidator rejects for what its
// records hold (Kafka's RecordValidationException). Err is the error on the
// wire: kafkaerr.InvalidTimestamp when any record broke a timestamp rule, else
// kafkaerr.InvalidRecord (LogValidator#processRecordErrors), or
// kafkaerr.UnknownServerError. Reason is the rule the first record at fault
// broke, Indexes the first MaxRecordErrorIndexes indexes (from 0, ascending)
// of the records at fault, Count how many there were; Cause is codec's error
// for a structure or compression defect. errors.Is matches Err, Reason and
// Cause. A RecordError is allocated per rejected append (one allocation).
type RecordError struct {
	Err     *kafkaerr.Error
	Reason  error
	Cause   error
	Indexes []int32
	Count   int
	idx     [MaxRecordErrorIndexes]int32
}

func (e *RecordError) Error() string {
	s := e.Err.Error() + ": " + e.Reason.Error()
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	if len(e.Indexes) > 0 {
		s += " (record"
		for i, x := range e.Indexes {
			if i > 0 {
				s += ","
			}
			s += " " + strconv.Itoa(int(x))
		}
		if e.Count > len(e.Indexes) {
			s += ", … " + strconv.Itoa(e.Count) + " in all"
		}
		s += ")"
	}
	return s
}

// Unwrap returns Err, Reason and (when set) Cause, for errors.Is and errors.As.
func (e *RecordError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Reason, e.Cause}
	}
	return []error{e.Err, e.Reason}
}

// BatchError says which batch of a multi-batch append failed. Err is the
// sentinel; Index counts batches from 0 and Pos is the byte position of the
// batch in the caller's buffer.
type BatchError struct {
	Index int
	Pos   int
	Err   error
}

func (e *BatchError) Error() string {
	return e.Err.Error() + " at batch " + strconv.Itoa(e.Index) + " (byte " + strconv.Itoa(e.Pos) + ")"
}

func (e *BatchError) Unwrap() error { return e.Err }
