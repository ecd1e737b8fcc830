// Package kafkaerr holds the Kafka wire error codes the append path returns,
// one value per code, in the shape of org.apache.kafka.common.protocol.Errors:
// the code, the name as Kafka spells it and whether a client retries it.
//
// A package that rejects an append for a reason of its own (offsets out of
// order, an unmappable producer ID, …) declares a Reason sentinel that wraps
// one of these codes, so errors.Is matches both the reason and the code:
// every error that reaches the wire as UNKNOWN_SERVER_ERROR matches
// UnknownServerError. Classify with errors.Is or errors.As, never by text.
//
// kafkaerr imports nothing of this module, so every package may use it.
package kafkaerr

import "strconv"

// Error is one Kafka wire error code. The package-level values are the only
// ones; compare them by identity (errors.Is).
type Error struct {
	// Code is the int16 error code on the wire.
	Code int16
	// Name is the code's name as Kafka's Errors enum spells it.
	Name string
	// Retriable is true when Kafka's exception for the code is a
	// RetriableException (the client retries the request).
	Retriable bool
}

// Error prints the name and the code, e.g. "OUT_OF_ORDER_SEQUENCE_NUMBER (45)".
func (e *Error) Error() string {
	return e.Name + " (" + strconv.Itoa(int(e.Code)) + ")"
}

// The codes of org.apache.kafka.common.protocol.Errors that the append path
// returns.
var (
	// UnknownServerError: an unexpected broker-side failure
	// (UnknownServerException, and any exception the broker does not map,
	// such as IllegalArgumentException or OffsetsOutOfOrderException).
	UnknownServerError = &Error{Code: -1, Name: "UNKNOWN_SERVER_ERROR"}
	// OffsetOutOfRange: a fetch offset outside the log (OffsetOutOfRangeException).
	OffsetOutOfRange = &Error{Code: 1, Name: "OFFSET_OUT_OF_RANGE"}
	// CorruptMessage: framing or CRC failure (CorruptRecordException).
	CorruptMessage = &Error{Code: 2, Name: "CORRUPT_MESSAGE", Retriable: true}
	// MessageTooLarge: a batch above max.message.bytes (RecordTooLargeException).
	MessageTooLarge = &Error{Code: 10, Name: "MESSAGE_TOO_LARGE"}
	// InvalidTimestamp: a record timestamp LogValidator refuses
	// (InvalidTimestampException).
	InvalidTimestamp = &Error{Code: 32, Name: "INVALID_TIMESTAMP"}
	// OutOfOrderSequenceNumber: a producer sequence that does not follow the
	// stored one (OutOfOrderSequenceException).
	OutOfOrderSequenceNumber = &Error{Code: 45, Name: "OUT_OF_ORDER_SEQUENCE_NUMBER"}
	// InvalidProducerEpoch: a producer epoch below the stored one
	// (InvalidProducerEpochException).
	InvalidProducerEpoch = &Error{Code: 47, Name: "INVALID_PRODUCER_EPOCH"}
	// InvalidTxnState: a batch that does not fit the producer's transaction
	// state (InvalidTxnStateException).
	InvalidTxnState = &Error{Code: 48, Name: "INVALID_TXN_STATE"}
	// TransactionCoordinatorFenced: a marker's coordinator epoch below the
	// stored one (TransactionCoordinatorFencedException).
	TransactionCoordinatorFenced = &Error{Code: 52, Name: "TRANSACTION_COORDINATOR_FENCED"}
	// InvalidRecord: a record or batch LogValidator refuses
	// (InvalidRecordException).
	InvalidRecord = &Error{Code: 87, Name: "INVALID_RECORD"}
)

// The codes of cluster mirroring (KIP-1279). Kafka has not assigned their
// numbers yet; these are the project's, above every code Kafka uses.
var (
	// ReadOnlyTopic: a produce to a partition that is mirroring, stopping or
	// failed (KIP-1279's ReadOnlyTopicException).
	ReadOnlyTopic = &Error{Code: 1001, Name: "READ_ONLY_TOPIC"}
	// NotMirroring: a mirrored append to a partition that is not mirroring.
	NotMirroring = &Error{Code: 1002, Name: "NOT_MIRRORING"}
	// MirrorPartitionFailed: a mirrored append to a failed mirror partition.
	MirrorPartitionFailed = &Error{Code: 1003, Name: "MIRROR_PARTITION_FAILED"}
	// UnmappableProducerID: the producer-ID strategy cannot map a source
	// producer ID; the mirror partition fails.
	UnmappableProducerID = &Error{Code: 1004, Name: "UNMAPPABLE_PRODUCER_ID"}
)

// Reason is why a package refused an append, carried on the wire as Code.
// Declare one as a package-level sentinel (NewReason) and return it bare:
// errors.Is matches the Reason itself and, through Unwrap, its Code.
type Reason struct {
	// Code is the wire error the reason is reported as.
	Code *Error
	// Text says what was wrong, prefixed with the declaring package's name.
	Text string
}

// NewReason returns a sentinel for text reported on the wire as code.
func NewReason(code *Error, text string) *Reason { return &Reason{Code: code, Text: text} }

// Error prints the reason and then the wire code, e.g.
// "appendpath: batch offsets do not increase: UNKNOWN_SERVER_ERROR (-1)".
func (r *Reason) Error() string { return r.Text + ": " + r.Code.Error() }

// Unwrap returns the wire code.
func (r *Reason) Unwrap() error { return r.Code }
