package psm

import (
	"errors"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Append errors. Add returns the kafkaerr codes themselves, bare, so that
// the error path does not allocate: UNKNOWN_SERVER_ERROR for a control type
// other than COMMIT/ABORT (IllegalArgumentException); CORRUPT_MESSAGE for a
// batch that does not frame; OUT_OF_ORDER_SEQUENCE_NUMBER for a sequence gap,
// a wrong first sequence after an epoch bump, a partial or old duplicate, or a
// sequence above the verification entry's lowest; INVALID_PRODUCER_EPOCH for an
// epoch below the stored one (CLIENT, COORDINATOR); INVALID_TXN_STATE for
// non-transactional data while a transaction is open, or a transactional batch
// that misses its verification; TRANSACTION_COORDINATOR_FENCED for a marker
// whose coordinator epoch is below the stored one; INVALID_RECORD for an
// undecodable control record (BatchOf). The Reasons below wrap one code each.
// Classify with errors.Is.
var (
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

// ErrUnknownName reports a HasProducerIDRule, BarrierApply, Release or
// TxnVersion name that is not one of the names this package prints.
var ErrUnknownName = errors.New("psm: unknown name")

// ErrCorruptSnapshot is the marker every snapshot defect matches
// (CorruptSnapshotException): the caller deletes the file and falls back to
// the next older snapshot.
var ErrCorruptSnapshot = codec.NewCorruption("psm: corrupt producer snapshot")

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
func (e *snapshotError) Is(t error) bool { return t == ErrCorruptSnapshot || t == codec.ErrCorruption }
