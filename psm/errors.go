package psm

import (
	"errors"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Append errors: the Kafka wire codes (package kafkaerr) that Add returns,
// bare, so that the error path does not allocate. They are the kafkaerr
// values themselves; classify with errors.Is.
var (
	// ErrUnknownServerError: a control type other than COMMIT/ABORT
	// (IllegalArgumentException).
	ErrUnknownServerError = kafkaerr.UnknownServerError
	// ErrCorruptMessage: a batch that does not frame.
	ErrCorruptMessage = kafkaerr.CorruptMessage
	// ErrOutOfOrderSequence: sequence gap, wrong first sequence after an epoch
	// bump, partial or old duplicate, or a sequence above the verification
	// entry's lowest sequence.
	ErrOutOfOrderSequence = kafkaerr.OutOfOrderSequenceNumber
	// ErrInvalidProducerEpoch: epoch below the stored one (CLIENT, COORDINATOR).
	ErrInvalidProducerEpoch = kafkaerr.InvalidProducerEpoch
	// ErrInvalidTxnState: non-transactional data while a transaction is open,
	// or a transactional batch that misses its verification.
	ErrInvalidTxnState = kafkaerr.InvalidTxnState
	// ErrTransactionCoordinatorFenced: marker coordinator epoch below the stored one.
	ErrTransactionCoordinatorFenced = kafkaerr.TransactionCoordinatorFenced
	// ErrInvalidRecord: an undecodable control record (BatchOf).
	ErrInvalidRecord = kafkaerr.InvalidRecord
	// ErrDuplicateCRCMismatch (Options.DedupCRC): a CLIENT batch with the
	// epoch and first and last sequence of a cached batch but another CRC, so
	// not a retry of it. OUT_OF_ORDER_SEQUENCE_NUMBER: every client surfaces
	// it as an error and none takes it for an acknowledgement
	// (DUPLICATE_SEQUENCE_NUMBER is treated as success by the Java producer
	// and franz-go), and an idempotent producer recovers by bumping its epoch.
	ErrDuplicateCRCMismatch error = kafkaerr.NewReason(kafkaerr.OutOfOrderSequenceNumber,
		"psm: batch repeats a cached batch's epoch and sequences with another CRC")
	// ErrMarkerWithoutTxnVersion (Kafka4): a COMMIT or ABORT marker from
	// COORDINATOR or CLIENT whose Batch.TxnVersion is TVUnknown. Kafka
	// throws IllegalArgumentException ("transactionVersion must be
	// explicitly specified", ProducerAppendInfo#appendEndTxnMarker), which
	// the produce path answers with UNKNOWN_SERVER_ERROR.
	ErrMarkerWithoutTxnVersion error = kafkaerr.NewReason(kafkaerr.UnknownServerError,
		"psm: COORDINATOR marker states no transaction version")
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

type snapshotError struct{ msg string }

func corruptSnapshot(msg string) error   { return &snapshotError{msg} }
func (e *snapshotError) Error() string   { return e.msg }
func (e *snapshotError) Is(t error) bool { return t == ErrCorruptSnapshot }
