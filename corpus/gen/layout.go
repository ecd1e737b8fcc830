package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record batch v2 header offsets (kafka-reference.md §1.1). Kept local: the generator must not depend on
// mirrorpath's codec package, whose decoders the corpus exists to test.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordsCount    = 57
	headerSize         = 61
	logOverhead        = 12
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchView is a read view of one whole batch; it aliases the file bytes.
type batchView []byte

func (b batchView) baseOffset() int64  { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }
func (b batchView) batchLength() int32 { return int32(binary.BigEndian.Uint32(b[offBatchLength:])) }
func (b batchView) leaderEpoch() int32 { return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:])) }
func (b batchView) magic() int8        { return int8(b[offMagic]) }
func (b batchView) crc() uint32        { return binary.BigEndian.Uint32(b[offCRC:]) }
func (b batchView) attributes() uint16 { return binary.BigEndian.Uint16(b[offAttributes:]) }
func (b batchView) lastOffsetDelta() int32 {
	return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:]))
}
func (b batchView) baseTimestamp() int64 { return int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])) }
func (b batchView) maxTimestamp() int64  { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }
func (b batchView) producerID() int64    { return int64(binary.BigEndian.Uint64(b[offProducerID:])) }
func (b batchView) producerEpoch() int16 { return int16(binary.BigEndian.Uint16(b[offProducerEpoch:])) }
func (b batchView) baseSequence() int32  { return int32(binary.BigEndian.Uint32(b[offBaseSequence:])) }
func (b batchView) recordsCount() int32  { return int32(binary.BigEndian.Uint32(b[offRecordsCount:])) }
func (b batchView) codec() codec         { return codec(b.attributes() & 7) }
func (b batchView) control() bool        { return b.attributes()&0x20 != 0 }
func (b batchView) payload() []byte      { return b[headerSize:] }
func (b batchView) computeCRC() uint32   { return crc32.Checksum(b[offAttributes:], castagnoli) }

// updateCRC recomputes and stores the CRC after an edit inside [21, end).
func (b batchView) updateCRC() { binary.BigEndian.PutUint32(b[offCRC:], b.computeCRC()) }

var errPartial = errors.New("trailing partial batch")

// split cuts a segment into whole batches by the log framing (12-byte prefix, then batchLength bytes). It
// returns the batches found before the first framing problem, and that problem (errPartial for a short tail).
func split(seg []byte) ([]batchView, error) {
	var out []batchView
	for pos := 0; pos < len(seg); {
		rest := seg[pos:]
		if len(rest) < logOverhead {
			return out, fmt.Errorf("at %d: %w", pos, errPartial)
		}
		n := int(int32(binary.BigEndian.Uint32(rest[offBatchLength:])))
		if n < headerSize-logOverhead {
			return out, fmt.Errorf("at %d: batchLength %d below %d", pos, n, headerSize-logOverhead)
		}
		if len(rest) < logOverhead+n {
			return out, fmt.Errorf("at %d: %w", pos, errPartial)
		}
		out = append(out, batchView(rest[:logOverhead+n]))
		pos += logOverhead + n
	}
	return out, nil
}
