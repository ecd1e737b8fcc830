package appendpath

import (
	"errors"
	"strconv"

	"github.com/mirrorpath/mirrorpath/psm"
)

// Append errors, as Kafka names them on the wire. They are *psm.KafkaError
// values, so the producer-state errors that Add returns (OUT_OF_ORDER_SEQUENCE_NUMBER,
// INVALID_PRODUCER_EPOCH, …) come back unchanged beside them. Classify with
// errors.Is.
var (
	// ErrInvalidRecord: a CLIENT batch breaks a LogValidator rule (§1.8(f)):
	// not exactly one batch, baseOffset ≠ 0, recordsCount ≠ lastOffsetDelta+1,
	// recordsCount ≤ 0, a control batch, a PID without a sequence.
	ErrInvalidRecord = psm.ErrInvalidRecord
	// ErrCorruptMessage: framing or CRC failure (CorruptRecordException).
	ErrCorruptMessage = psm.ErrCorruptMessage
	// ErrMessageTooLarge: a batch above Config.MaxMessageBytes (leader origins only).
	ErrMessageTooLarge = &psm.KafkaError{Code: 10, Name: "MESSAGE_TOO_LARGE"}
	// ErrOffsetOutOfRange: Read below the log start offset.
	ErrOffsetOutOfRange = &psm.KafkaError{Code: 1, Name: "OFFSET_OUT_OF_RANGE"}
	// ErrOffsetsOutOfOrder: a REPLICATION append whose offsets do not increase
	// (Kafka's UnexpectedAppendOffsetException / OffsetsOutOfOrderException,
	// which reach the wire as UNKNOWN_SERVER_ERROR).
	ErrOffsetsOutOfOrder = &psm.KafkaError{Code: -1, Name: "UNKNOWN_SERVER_ERROR"}
	// ErrReadOnlyTopic: a CLIENT or COORDINATOR append to a partition that is
	// MIRRORING, STOPPING or FAILED (KIP-1279's ReadOnlyTopicException; the
	// code is not assigned in the Kafka snapshot the spec follows).
	ErrReadOnlyTopic = &psm.KafkaError{Code: 1001, Name: "READ_ONLY_TOPIC"}
	// ErrNotMirroring: a mirrored append to a partition that is not MIRRORING
	// (the fetcher was removed by STOPPING).
	ErrNotMirroring = &psm.KafkaError{Code: 1002, Name: "NOT_MIRRORING"}
	// ErrMirrorFailed: a mirrored append to a partition in FAILED.
	ErrMirrorFailed = &psm.KafkaError{Code: 1003, Name: "MIRROR_PARTITION_FAILED"}
	// ErrUnmappablePID: the strategy cannot map a source PID (bitfield with
	// policy reject and PID ≥ 2^31). The chunk is not appended and the
	// partition moves to FAILED.
	ErrUnmappablePID = &psm.KafkaError{Code: 1004, Name: "UNMAPPABLE_PRODUCER_ID"}
)

// Errors that are not append results.
var (
	// ErrState: an operation not allowed in the partition's mirror state.
	ErrState = errors.New("appendpath: operation not allowed in this mirror state")
	// ErrFault: a STOPPING step failed because a fault hook said so.
	ErrFault = errors.New("appendpath: injected fault")
	// ErrClosed: the partition was closed.
	ErrClosed = errors.New("appendpath: partition closed")
)

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
