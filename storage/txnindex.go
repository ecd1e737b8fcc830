package storage

import (
	"encoding/binary"

	"github.com/mirrorpath/mirrorpath/codec"
)

// AbortedTxnSize is the size of one .txnindex entry.
const AbortedTxnSize = 34

// AbortedTxn is one transaction-index entry (Kafka's AbortedTxn): written for
// every aborted transaction into the segment that holds its ABORT marker,
// with the last stable offset computed when it completed
// (ProducerStateManager#lastStableOffset). Fetch reads them to tell a
// read_committed consumer which records to drop
// (TransactionIndex#collectAbortedTxns).
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// Transaction-index entry defects (ParseAbortedTxn); both match
// codec.ErrCorruption.
var (
	ErrTxnIndexTruncated = codec.NewCorruption("storage: txn index entry truncated")
	ErrTxnIndexVersion   = codec.NewCorruption("storage: txn index entry version is not 0")
)

// AppendTo appends the 34-byte big-endian index entry (version int16 = 0,
// producerId, firstOffset, lastOffset, lastStableOffset) to dst.
func (t AbortedTxn) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}

// ParseAbortedTxn decodes one index entry from the first AbortedTxnSize bytes
// of src. Version is read as an int16 and must be 0.
func ParseAbortedTxn(src []byte) (AbortedTxn, error) {
	if len(src) < AbortedTxnSize {
		return AbortedTxn{}, ErrTxnIndexTruncated
	}
	if binary.BigEndian.Uint16(src) != 0 {
		return AbortedTxn{}, ErrTxnIndexVersion
	}
	return AbortedTxn{
		ProducerID:       int64(binary.BigEndian.Uint64(src[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(src[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(src[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(src[26:])),
	}, nil
}
