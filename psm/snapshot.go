package psm

import (
	"encoding/binary"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Producer snapshot file, ProducerSnapshot v1 (ProducerStateManager.writeSnapshot
// and readSnapshot, storage/src/main/resources/message/ProducerSnapshot.json).
// Big-endian, non-flexible:
//
//	offset  width  field
//	     0      2  version = 1
//	     2      4  crc: CRC-32C of bytes [6, EOF)
//	     6      4  entry count
//	    10   46·n  entries:
//	               +0  8 producerId
//	               +8  2 producerEpoch
//	              +10  4 lastSequence           (-1: no batch)
//	              +14  8 lastOffset             (< 0: no batch)
//	              +22  4 offsetDelta
//	              +26  8 timestamp              (the entry's lastTimestamp)
//	              +34  4 coordinatorEpoch
//	              +38  8 currentTxnFirstOffset  (< 0: no open transaction)
//
// Only the newest cached batch is kept, so after a reload only that batch can
// be deduplicated. Bytes after the last entry are covered by the CRC and
// ignored, as Kafka's generated reader does.
const (
	snapOffVersion    = 0
	snapOffCRC        = snapOffVersion + 2
	snapOffCount      = snapOffCRC + 4
	snapOffEntries    = snapOffCount + 4 // 10
	snapCRCStart      = snapOffCount     // PRODUCER_ENTRIES_OFFSET = 6
	snapshotVersion   = 1
	snapshotEntrySize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8 // 46
)

var be = binary.BigEndian

func appendSnapshotHeader(dst []byte, n int) []byte {
	dst = be.AppendUint16(dst, snapshotVersion)
	dst = be.AppendUint32(dst, 0) // CRC, filled by finishSnapshot
	return be.AppendUint32(dst, uint32(n))
}

func appendSnapshotEntry(dst []byte, e *ProducerInfo) []byte {
	lastOffset, offsetDelta := int64(-1), int32(0)
	if e.NumBatches > 0 {
		m := e.Batches[e.NumBatches-1]
		lastOffset, offsetDelta = m.LastOffset, m.OffsetDelta
	}
	dst = be.AppendUint64(dst, uint64(e.ProducerID))
	dst = be.AppendUint16(dst, uint16(e.Epoch))
	dst = be.AppendUint32(dst, uint32(e.LastSeq()))
	dst = be.AppendUint64(dst, uint64(lastOffset))
	dst = be.AppendUint32(dst, uint32(offsetDelta))
	dst = be.AppendUint64(dst, uint64(e.LastTimestamp))
	dst = be.AppendUint32(dst, uint32(e.CoordinatorEpoch))
	return be.AppendUint64(dst, uint64(e.TxnFirstOffset))
}

// finishSnapshot stores the CRC of the snapshot that starts at dst[start].
func finishSnapshot(dst []byte, start int) []byte {
	be.PutUint32(dst[start+snapOffCRC:], codec.Checksum(dst[start+snapCRCStart:]))
	return dst
}

// checkSnapshot validates a whole snapshot file and returns its entry count.
// It reads only src; nothing is allocated.
func checkSnapshot(src []byte) (int, error) {
	if len(src) < snapOffEntries {
		return 0, ErrSnapshotTruncated
	}
	if v := int16(be.Uint16(src[snapOffVersion:])); v != snapshotVersion {
		return 0, ErrSnapshotVersion
	}
	if be.Uint32(src[snapOffCRC:]) != codec.Checksum(src[snapCRCStart:]) {
		return 0, ErrSnapshotCRC
	}
	n := int64(int32(be.Uint32(src[snapOffCount:])))
	if n < 0 {
		return 0, ErrSnapshotCount
	}
	if n > int64(len(src)-snapOffEntries)/snapshotEntrySize {
		return 0, ErrSnapshotTruncated
	}
	return int(n), nil
}

// snapshotEntry decodes entry i of a snapshot that checkSnapshot accepted.
func snapshotEntry(src []byte, i int) ProducerInfo {
	b := src[snapOffEntries+i*snapshotEntrySize:]
	in := ProducerInfo{
		ProducerID:       int64(be.Uint64(b[0:])),
		Epoch:            int16(be.Uint16(b[8:])),
		LastTimestamp:    int64(be.Uint64(b[26:])),
		CoordinatorEpoch: int32(be.Uint32(b[34:])),
		TxnFirstOffset:   int64(be.Uint64(b[38:])),
	}
	if in.TxnFirstOffset < 0 {
		in.TxnFirstOffset = -1
	}
	if lastOffset := int64(be.Uint64(b[14:])); lastOffset >= 0 {
		in.NumBatches = 1
		in.Batches[0] = BatchMetadata{LastSeq: int32(be.Uint32(b[10:])), LastOffset: lastOffset,
			OffsetDelta: int32(be.Uint32(b[22:])), Timestamp: in.LastTimestamp}
	}
	return in
}

// DecodeSnapshot checks a snapshot file and returns its entries, as they would
// be loaded before expiration. The result is sized by the entry count, which
// checkSnapshot has bounded by len(src).
func DecodeSnapshot(src []byte) ([]ProducerInfo, error) {
	n, err := checkSnapshot(src)
	if err != nil {
		return nil, err
	}
	out := make([]ProducerInfo, n)
	for i := range out {
		out[i] = snapshotEntry(src, i)
	}
	return out, nil
}
