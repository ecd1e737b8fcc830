// Package codec reads, verifies, rewrites and builds Kafka record batches of
// message format v2 (magic 2), the unit that the mirrorpath append path moves.
//
// # Wire format
//
// A batch is a 61-byte header followed by its records. Every integer is
// big-endian two's complement; the CRC is unsigned. The layout follows
// org.apache.kafka.common.record.DefaultRecordBatch:
//
//	offset  width  field                 CRC  notes
//	     0      8  baseOffset             -   assigned by the leader; free to rewrite
//	     8      4  batchLength            -   bytes that follow this field (size - 12)
//	    12      4  partitionLeaderEpoch   -   stamped by the leader; free to rewrite
//	    16      1  magic                  -   2
//	    17      4  crc                    -   CRC-32C (Castagnoli) of bytes [21, size)
//	    21      2  attributes             x   codec 0-2, timestampType 3, txn 4, control 5, deleteHorizon 6
//	    23      4  lastOffsetDelta        x
//	    27      8  baseTimestamp          x
//	    35      8  maxTimestamp           x
//	    43      8  producerId             x   rewritten by the negate and bitfield strategies
//	    51      2  producerEpoch          x
//	    53      4  baseSequence           x
//	    57      4  recordsCount           x   never compressed
//	    61      …  records                x   raw, or one compressed stream
//
// Fields outside the CRC (baseOffset, partitionLeaderEpoch) can be rewritten for
// free. Fields inside it need the CRC fixed: either recomputed over the whole
// batch (O(size)) or patched from the old value with [PatchCRC] in time
// independent of the batch length. [ChecksumCopy] checks a batch's CRC while
// copying it (one pass instead of two, on amd64; [ChecksumCopyFuses] says
// whether it does here), and [ChecksumCopyCold] does the same into memory
// that is not in L1, such as a log's next bytes. These are one-line entry
// points into internal/crc32c, which holds the kernels (assembly, chosen by
// the CPU's features, hash/crc32 elsewhere) and the patch's arithmetic.
//
// # Records
//
// The records section is recordsCount records back to back (record.go has
// the layout), or one compressed stream of them (compress.go). Records walks
// an uncompressed section with RecordIter: no allocation, every check of
// Kafka's DefaultRecord.readFrom and DefaultRecordBatch iterators, values
// aliasing the batch. OpenRecords and Decompress handle codecs with a
// caller-set cap on the decompressed bytes; each codec's stream is read, as
// Kafka's reader of it reads it, by its package under internal/compress. Control batches carry one record
// whose key names its type (control.go): ControlRecord reads the first one,
// which is all producer state and the barrier check need.
//
// # Streams
//
// Next and Reader frame the batches of a buffer; BatchReader frames those of
// an io.Reader (a .log file) one at a time into a reused buffer as large as
// the largest batch, with the same checks and errors, a batchLength above its
// bound (DefaultMaxBatch) being ErrBatchTooLarge rather than an allocation.
//
// # Building
//
// AppendBatch, AppendEndTxnMarker and AppendBarrier append whole batches,
// CRC included, to a caller's slice; decode(encode(x)) == x, and
// AppendBatch(nil, b.Header(), records of b, codec) rebuilds an uncompressed
// batch b byte for byte when b was written canonically (as Kafka and the Go
// clients write).
//
// # Ownership
//
// [Batch] is a view: it aliases the bytes it was made from and never copies.
// Record keys, values and headers alias the batch (uncompressed) or the
// caller's decompression buffer (compressed). Encoders append to a caller's
// slice and return it, in the manner of strconv.AppendInt.
//
// # Errors
//
// Every defect is an error that errors.Is classifies against the sentinels in
// errors.go (ErrTruncated, ErrBadLength, ErrBadMagic, ErrCRC, …). Hot-path
// checks return the bare sentinel so that the error path does not allocate;
// the framing reader wraps it in a *FormatError that carries the byte position.
package codec

// Byte offsets of the v2 header fields, each derived from the one before it.
const (
	OffBaseOffset           = 0
	OffBatchLength          = OffBaseOffset + 8
	OffPartitionLeaderEpoch = OffBatchLength + 4
	OffMagic                = OffPartitionLeaderEpoch + 4
	OffCRC                  = OffMagic + 1
	OffAttributes           = OffCRC + 4
	OffLastOffsetDelta      = OffAttributes + 2
	OffBaseTimestamp        = OffLastOffsetDelta + 4
	OffMaxTimestamp         = OffBaseTimestamp + 8
	OffProducerID           = OffMaxTimestamp + 8
	OffProducerEpoch        = OffProducerID + 8
	OffBaseSequence         = OffProducerEpoch + 2
	OffRecordsCount         = OffBaseSequence + 4
	HeaderSize              = OffRecordsCount + 4 // RECORD_BATCH_OVERHEAD = 61

	// LogOverhead is the framing prefix: baseOffset and batchLength.
	LogOverhead = OffPartitionLeaderEpoch // 12
	// HeaderSizeUpToMagic is what a reader needs before it knows the format.
	HeaderSizeUpToMagic = OffMagic + 1 // 17
	// CRCStart is the first byte the CRC covers.
	CRCStart = OffAttributes // 21
	// MinBatchLength is the smallest batchLength the framing layer accepts
	// (LegacyRecord.RECORD_OVERHEAD_V0); a v2 batch needs HeaderSize-LogOverhead.
	MinBatchLength = 14
	// MagicV2 is the only message format this package decodes.
	MagicV2 = 2
)

// Sentinel values from org.apache.kafka.common.record.RecordBatch.
const (
	NoProducerID           int64 = -1
	NoProducerEpoch        int16 = -1
	NoSequence             int32 = -1
	NoPartitionLeaderEpoch int32 = -1
	NoTimestamp            int64 = -1
)
