package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/mirrorpath/mirrorpath/corpus"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchView is a read view of one whole batch; it aliases the file bytes.
type batchView []byte

func (b batchView) baseOffset() int64 {
	return int64(binary.BigEndian.Uint64(b[corpus.OffBaseOffset:]))
}
func (b batchView) leaderEpoch() int32 {
	return int32(binary.BigEndian.Uint32(b[corpus.OffLeaderEpoch:]))
}
func (b batchView) attributes() uint16 { return binary.BigEndian.Uint16(b[corpus.OffAttributes:]) }
func (b batchView) lastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[corpus.OffLastOffsetDelta:]))
}
func (b batchView) producerID() int64 {
	return int64(binary.BigEndian.Uint64(b[corpus.OffProducerID:]))
}
func (b batchView) producerEpoch() int16 {
	return int16(binary.BigEndian.Uint16(b[corpus.OffProducerEpoch:]))
}
func (b batchView) baseSequence() int32 {
	return int32(binary.BigEndian.Uint32(b[corpus.OffBaseSequence:]))
}
func (b batchView) recordsCount() int32 {
	return int32(binary.BigEndian.Uint32(b[corpus.OffRecordsCount:]))
}
func (b batchView) codec() codec       { return codec(b.attributes() & 7) }
func (b batchView) control() bool      { return b.attributes()&0x20 != 0 }
func (b batchView) payload() []byte    { return b[corpus.HeaderSize:] }
func (b batchView) computeCRC() uint32 { return crc32.Checksum(b[corpus.OffAttributes:], castagnoli) }

// updateCRC recomputes and stores the CRC after an edit inside [21, end).
func (b batchView) updateCRC() { binary.BigEndian.PutUint32(b[corpus.OffCRC:], b.computeCRC()) }

var errPartial = errors.New("trailing partial batch")

// split cuts a segment into whole batches by the log framing (12-byte prefix, then batchLength bytes). It
// returns the batches found before the first framing problem, and that problem (errPartial for a short tail).
func split(seg []byte) ([]batchView, error) {
	var out []batchView
	for pos := 0; pos < len(seg); {
		rest := seg[pos:]
		if len(rest) < corpus.LogOverhead {
			return out, fmt.Errorf("at %d: %w", pos, errPartial)
		}
		n := int(int32(binary.BigEndian.Uint32(rest[corpus.OffBatchLength:])))
		if n < corpus.HeaderSize-corpus.LogOverhead {
			return out, fmt.Errorf("at %d: batchLength %d below %d", pos, n, corpus.HeaderSize-corpus.LogOverhead)
		}
		if len(rest) < corpus.LogOverhead+n {
			return out, fmt.Errorf("at %d: %w", pos, errPartial)
		}
		out = append(out, batchView(rest[:corpus.LogOverhead+n]))
		pos += corpus.LogOverhead + n
	}
	return out, nil
}
