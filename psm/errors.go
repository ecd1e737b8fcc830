package psm

import (
	"errors"
	"strconv"
)

// KafkaError is an append error as Kafka puts it on the wire: the code and
// name of org.apache.kafka.common.protocol.Errors. The sentinels below are
// the only values; classify with errors.Is (pointer identity), never by text.
type KafkaError struct {
	Code int16
	Name string
}

func (e *KafkaError) Error() string {
	return "psm: " + e.Name + " (" + strconv.Itoa(int(e.Code)) + ")"
}

// Append errors. Add returns the bare sentinel so that the error path does not
// allocate.
var (
	ErrUnknownServerError = &KafkaError{-1, "UNKNOWN_SERVER_ERROR"} // control type other than COMMIT/ABORT (IllegalArgumentException)
	ErrCorruptMessage     = &KafkaError{2, "CORRUPT_MESSAGE"}
	// ErrOutOfOrderSequence: sequence gap, wrong first sequence after an epoch
	// bump, partial or old duplicate, or a sequence above the verification
	// entry's lowest sequence.
	ErrOutOfOrderSequence = &KafkaError{45, "OUT_OF_ORDER_SEQUENCE_NUMBER"}
	// ErrInvalidProducerEpoch: epoch below the stored one (CLIENT, COORDINATOR).
	ErrInvalidProducerEpoch = &KafkaError{47, "INVALID_PRODUCER_EPOCH"}
	// ErrInvalidTxnState: non-transactional data while a transaction is open,
	// or a transactional batch that misses its verification.
	ErrInvalidTxnState = &KafkaError{48, "INVALID_TXN_STATE"}
	// ErrTransactionCoordinatorFenced: marker coordinator epoch below the stored one.
	ErrTransactionCoordinatorFenced = &KafkaError{52, "TRANSACTION_COORDINATOR_FENCED"}
	// ErrInvalidRecord: an undecodable control record (BatchOf).
	ErrInvalidRecord = &KafkaError{87, "INVALID_RECORD"}
)

// ErrCorruptSnapshot is the marker every snapshot defect matches
// (CorruptSnapshotException): the caller deletes the file and falls back to
// the next older snapshot.
var ErrCorruptSnapshot = errors.New("psm: corrupt producer snapshot")

// Snapshot defects; each matches ErrCorruptSnapshot.
var (
	ErrSnapshotTruncated = corruptSnapshot("psm: snapshot truncated")
	ErrSnapshotVersion   = corruptSnapshot("psm: snapshot version is not 1")
	ErrSnapshotCRC       = corruptSnapshot("psm: snapshot CRC mismatch")
	ErrSnapshotCount     = corruptSnapshot("psm: snapshot entry count out of range")
)

// Transaction-index entry defects (ParseAbortedTxn).
var (
	ErrTxnIndexTruncated = errors.New("psm: txn index entry truncated")
	ErrTxnIndexVersion   = errors.New("psm: txn index entry version is not 0")
)

type snapshotError struct{ msg string }

func corruptSnapshot(msg string) error   { return &snapshotError{msg} }
func (e *snapshotError) Error() string   { return e.msg }
func (e *snapshotError) Is(t error) bool { return t == ErrCorruptSnapshot }
