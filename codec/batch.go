package codec

import (
	"encoding/binary"

	"github.com/mirrorpath/mirrorpath/internal/crc32c"
	"github.com/mirrorpath/mirrorpath/internal/enum"
)

var be = binary.BigEndian

// Compression is the codec in attribute bits 0-2.
type Compression uint8

const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

// compressions spells each codec as Kafka's CompressionType names it and
// the dump tool prints it; codecs 5-7 are unknown(n).
var compressions = enum.Table[Compression]{Kind: "compression", Unknown: "unknown", Err: ErrUnknownName,
	Names: []string{"none", "gzip", "snappy", "lz4", "zstd"}}

// String returns the codec's name as the dump tool prints it, or unknown(n).
func (c Compression) String() string { return compressions.String(c) }

// Valid reports whether c is one of the five codecs Kafka defines.
func (c Compression) Valid() bool { return compressions.Valid(c) }

// MarshalText implements encoding.TextMarshaler: the codec's name; an
// unknown codec is an error matching ErrUnknownName.
func (c Compression) MarshalText() ([]byte, error) { return compressions.MarshalText(c) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (c *Compression) UnmarshalText(b []byte) error { return compressions.UnmarshalText(c, b) }

// Attributes is the batch attributes field. Only the low byte carries meaning;
// readers ignore bits 8-15.
type Attributes int16

const (
	AttrCompressionMask Attributes = 0x07
	AttrLogAppendTime   Attributes = 0x08
	AttrTransactional   Attributes = 0x10
	AttrControl         Attributes = 0x20
	AttrDeleteHorizon   Attributes = 0x40
)

func (a Attributes) Compression() Compression { return Compression(a & AttrCompressionMask) }
func (a Attributes) LogAppendTime() bool      { return a&AttrLogAppendTime != 0 }
func (a Attributes) Transactional() bool      { return a&AttrTransactional != 0 }
func (a Attributes) Control() bool            { return a&AttrControl != 0 }
func (a Attributes) DeleteHorizon() bool      { return a&AttrDeleteHorizon != 0 }

// TimestampType returns "CreateTime" or "LogAppendTime".
func (a Attributes) TimestampType() string {
	if a.LogAppendTime() {
		return "LogAppendTime"
	}
	return "CreateTime"
}

// Batch is a zero-copy view of one whole v2 record batch: len(b) equals
// LogOverhead + batchLength. Getters read the bytes in place; setters write
// them in place. A Batch is not safe for concurrent mutation.
//
// Getters assume at least HeaderSize bytes, which ParseBatch and the framing
// reader guarantee; calling them on a shorter slice panics like any index.
type Batch []byte

// ParseBatch checks that b holds exactly one v2 batch header-wise: at least
// HeaderSize bytes, a batchLength that matches len(b), and magic 2. It does
// not check the CRC or the records. O(1), no allocation; it returns a bare
// sentinel (ErrTruncated, ErrBadLength, ErrBadMagic).
func ParseBatch(b []byte) (Batch, error) {
	if len(b) < HeaderSizeUpToMagic {
		return nil, ErrTruncated
	}
	n := int32(be.Uint32(b[OffBatchLength:]))
	if n < HeaderSize-LogOverhead || int64(n)+LogOverhead != int64(len(b)) {
		if n >= HeaderSize-LogOverhead && int64(n)+LogOverhead > int64(len(b)) {
			return nil, ErrTruncated
		}
		return nil, ErrBadLength
	}
	if b[OffMagic] != MagicV2 {
		return nil, ErrBadMagic
	}
	return Batch(b), nil
}

func (b Batch) BaseOffset() int64           { return int64(be.Uint64(b[OffBaseOffset:])) }
func (b Batch) BatchLength() int32          { return int32(be.Uint32(b[OffBatchLength:])) }
func (b Batch) PartitionLeaderEpoch() int32 { return int32(be.Uint32(b[OffPartitionLeaderEpoch:])) }
func (b Batch) Magic() int8                 { return int8(b[OffMagic]) }
func (b Batch) CRC() uint32                 { return be.Uint32(b[OffCRC:]) }
func (b Batch) Attributes() Attributes      { return Attributes(be.Uint16(b[OffAttributes:])) }
func (b Batch) LastOffsetDelta() int32      { return int32(be.Uint32(b[OffLastOffsetDelta:])) }
func (b Batch) BaseTimestamp() int64        { return int64(be.Uint64(b[OffBaseTimestamp:])) }
func (b Batch) MaxTimestamp() int64         { return int64(be.Uint64(b[OffMaxTimestamp:])) }
func (b Batch) ProducerID() int64           { return int64(be.Uint64(b[OffProducerID:])) }
func (b Batch) ProducerEpoch() int16        { return int16(be.Uint16(b[OffProducerEpoch:])) }
func (b Batch) BaseSequence() int32         { return int32(be.Uint32(b[OffBaseSequence:])) }
func (b Batch) RecordsCount() int32         { return int32(be.Uint32(b[OffRecordsCount:])) }

// Size is the whole batch length in bytes (LogOverhead + batchLength).
func (b Batch) Size() int { return len(b) }

// LastOffset is baseOffset + lastOffsetDelta.
func (b Batch) LastOffset() int64 { return b.BaseOffset() + int64(b.LastOffsetDelta()) }

// NextOffset is LastOffset + 1.
func (b Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// LastSequence is -1 when baseSequence is -1, else baseSequence advanced by
// lastOffsetDelta with wrap-around (DefaultRecordBatch.lastSequence).
func (b Batch) LastSequence() int32 {
	s := b.BaseSequence()
	if s == NoSequence {
		return NoSequence
	}
	return IncrementSequence(s, b.LastOffsetDelta())
}

func (b Batch) Compression() Compression { return b.Attributes().Compression() }
func (b Batch) IsTransactional() bool    { return b.Attributes().Transactional() }
func (b Batch) IsControl() bool          { return b.Attributes().Control() }

// HasProducerID is Kafka's stock rule: producerId > -1.
func (b Batch) HasProducerID() bool { return b.ProducerID() > NoProducerID }

// Setters outside the CRC range: no CRC work.

func (b Batch) SetBaseOffset(o int64)           { be.PutUint64(b[OffBaseOffset:], uint64(o)) }
func (b Batch) SetPartitionLeaderEpoch(e int32) { be.PutUint32(b[OffPartitionLeaderEpoch:], uint32(e)) }

// SetLastOffset sets baseOffset to o - lastOffsetDelta (DefaultRecordBatch.setLastOffset).
func (b Batch) SetLastOffset(o int64) { b.SetBaseOffset(o - int64(b.LastOffsetDelta())) }

// ComputeCRC returns the CRC-32C of bytes [CRCStart, end). O(len(b)).
func (b Batch) ComputeCRC() uint32 { return Checksum(b[CRCStart:]) }

// VerifyCRC returns ErrCRC when the stored CRC does not match the bytes.
func (b Batch) VerifyCRC() error {
	if b.ComputeCRC() != b.CRC() {
		return ErrCRC
	}
	return nil
}

// UpdateCRC recomputes the CRC over the whole batch and stores it. O(len(b)).
func (b Batch) UpdateCRC() { be.PutUint32(b[OffCRC:], b.ComputeCRC()) }

// patchField writes val (len ≤ 8) at off and patches the stored CRC in O(1).
func (b Batch) patchField(off int, val []byte) {
	old := b[off : off+len(val)]
	crc := PatchCRC(b.CRC(), old, val, len(b)-off-len(val))
	copy(old, val)
	be.PutUint32(b[OffCRC:], crc)
}

// SetProducerID rewrites producerId and patches the CRC in O(1).
func (b Batch) SetProducerID(pid int64) { b.patchWord(OffProducerID, uint64(pid)) }

// patchWord writes the 8-byte field at off and patches the stored CRC in
// O(1): patchField for a word, whose values reach the patch in registers
// and whose two stores are direct, with no slice copy between them.
func (b Batch) patchWord(off int, v uint64) {
	_ = b[HeaderSize-1]
	crc := crc32c.PatchWord(b.CRC(), be.Uint64(b[off:]), v, len(b)-off-8)
	be.PutUint64(b[off:], v)
	be.PutUint32(b[OffCRC:], crc)
}

// SetProducerIDRecompute rewrites producerId and recomputes the CRC over the
// whole batch: the `full` CRC fix. O(len(b)).
func (b Batch) SetProducerIDRecompute(pid int64) {
	be.PutUint64(b[OffProducerID:], uint64(pid))
	b.UpdateCRC()
}

// SetProducerEpoch rewrites producerEpoch and patches the CRC in O(1).
func (b Batch) SetProducerEpoch(e int16) {
	var v [2]byte
	be.PutUint16(v[:], uint16(e))
	b.patchField(OffProducerEpoch, v[:])
}

// SetBaseSequence rewrites baseSequence and patches the CRC in O(1).
func (b Batch) SetBaseSequence(s int32) {
	var v [4]byte
	be.PutUint32(v[:], uint32(s))
	b.patchField(OffBaseSequence, v[:])
}

// SetAttributes rewrites attributes and patches the CRC in O(1).
func (b Batch) SetAttributes(a Attributes) {
	var v [2]byte
	be.PutUint16(v[:], uint16(a))
	b.patchField(OffAttributes, v[:])
}

// SetMaxTimestamp rewrites maxTimestamp and patches the CRC in O(1); it does
// nothing when the value is unchanged (DefaultRecordBatch.setMaxTimestamp).
func (b Batch) SetMaxTimestamp(ts int64) {
	if b.MaxTimestamp() == ts {
		return
	}
	b.patchWord(OffMaxTimestamp, uint64(ts))
}
