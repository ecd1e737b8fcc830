package codec

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mirrorpath/mirrorpath/internal/compress"
	"github.com/mirrorpath/mirrorpath/internal/compress/gzip"
	"github.com/mirrorpath/mirrorpath/internal/compress/lz4"
	"github.com/mirrorpath/mirrorpath/internal/compress/snappy"
	"github.com/mirrorpath/mirrorpath/internal/compress/zstd"
)

// Design note: compressed records (DefaultRecordBatch#recordInputStream and
// the codecs of org.apache.kafka.common.compress).
//
// Every byte after the 61-byte header is one stream of the batch's codec:
//
//	gzip    a gzip stream (RFC 1952), read as Java's GZIPInputStream reads
//	        it, concatenated members and ignored tails included
//	        (internal/compress/gzip)
//	snappy  Kafka's SnappyOutputStream framing from snappy-java ("xerial"),
//	        or one raw snappy block as some clients write it, read with
//	        SnappyInputStream's rules (internal/compress/snappy)
//	lz4     one LZ4 frame (Kafka's Lz4BlockOutputStream), read as
//	        Kafka's Lz4BlockInputStream reads it (internal/compress/lz4)
//	zstd    a zstd frame (internal/compress/zstd)
//
// Decompression is bounded: the caller passes limit, the most decompressed
// bytes it accepts, and a stream that would produce more fails with
// ErrDecompressionLimit after at most limit+1 bytes were written. Output
// buffers grow by doubling from a size guessed from the input and never past
// limit+1, so no length in the input sizes an allocation. The decompressors'
// own state is bounded by constants and pooled: the zstd window is capped at
// MaxZstdWindow, the lz4 block scratch at the 4 MiB largest block size.

// ErrBadCompression reports a compressed stream its codec rejects. It
// matches ErrCorruption.
var ErrBadCompression = corrupt("codec: corrupt compressed records")

// MaxZstdWindow is the largest zstd window Decompress accepts (8 MiB, more
// than any Kafka producer level uses).
const MaxZstdWindow = zstd.MaxWindow

// Decompress decompresses the records section of b, a batch with a codec,
// into dst's storage (its contents are overwritten; capacity reused) and
// returns the decompressed bytes, ready for NewRecordIter(out,
// b.RecordsCount()). For an uncompressed batch it returns the records
// section itself, aliasing b. Errors: ErrUnsupportedCodec, ErrBadCompression,
// ErrDecompressionLimit when more than limit bytes would come out. Safe for
// concurrent use; allocates only to grow dst (and, rarely, to fill a pool).
func Decompress(dst []byte, b Batch, limit int) ([]byte, error) {
	src := b[HeaderSize:]
	limit = min(max(limit, 0), math.MaxInt-1) // limit+1 must not overflow
	switch b.Compression() {
	case CompressionNone:
		return src, nil
	case CompressionGzip:
		return gunzip(dst, src, limit)
	case CompressionSnappy:
		return unsnappy(dst, src, limit)
	case CompressionLZ4:
		return unlz4(dst, src, limit)
	case CompressionZstd:
		return unzstd(dst, src, limit)
	}
	return dst[:0], ErrUnsupportedCodec
}

// OpenRecords returns an iterator over b's records, decompressing them into
// buf's storage first when b has a codec (see Decompress). The returned
// buffer is buf, possibly grown, for the caller to reuse. A recordsCount of 0
// yields nothing without decompressing, as in Kafka.
func (b Batch) OpenRecords(buf []byte, limit int) (RecordIter, []byte, error) {
	n := b.RecordsCount()
	if n <= 0 || b.Compression() == CompressionNone {
		return b.Records(), buf, nil
	}
	out, err := Decompress(buf, b, limit)
	if err != nil {
		return RecordIter{err: err}, out, err
	}
	return NewRecordIter(out, n).In(b), out, nil
}

// decompressErr is a codec package's error as Decompress reports it:
// ErrDecompressionLimit past the limit, else ErrBadCompression with the
// codec's reason.
func decompressErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, compress.ErrLimit):
		return ErrDecompressionLimit
	}
	return fmt.Errorf("%w: %v", ErrBadCompression, err)
}

func gunzip(dst, src []byte, limit int) ([]byte, error) {
	out, err := gzip.Decode(dst, src, limit)
	return out, decompressErr(err)
}

func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	out, err := snappy.Decode(dst, src, limit)
	return out, decompressErr(err)
}

func unlz4(dst, src []byte, limit int) ([]byte, error) {
	out, err := lz4.Decode(dst, src, limit)
	return out, decompressErr(err)
}

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	out, err := zstd.Decode(dst, src, limit)
	return out, decompressErr(err)
}

// Compress appends raw, a records section, compressed with c and framed as
// Kafka's producers write it: gzip a gzip member; snappy the xerial framing
// with 32 KiB chunks; lz4 an LZ4 frame with 64 KiB blocks; zstd one frame.
// It is the builder's (AppendBatch) and LogValidator's rebuild's compressor.
// Errors: ErrUnsupportedCodec for CompressionNone or an unknown codec, or
// the compressor's. Safe for concurrent use; allocates the gzip and lz4
// writers' state per call and grows dst.
func Compress(dst, raw []byte, c Compression) ([]byte, error) {
	switch c {
	case CompressionGzip:
		return gzip.Encode(dst, raw)
	case CompressionSnappy:
		return snappy.Encode(dst, raw), nil
	case CompressionLZ4:
		return lz4.Encode(dst, raw)
	case CompressionZstd:
		return zstd.Encode(dst, raw), nil
	}
	return dst, ErrUnsupportedCodec
}

// Check validates b as a consumer with check.crcs and a full record read
// would (DefaultRecordBatch#ensureValid, then the record iterator): the CRC, a known codec, every
// record (decompressed into buf's storage, bounded by limit), and for a
// control batch with records the first record's key and, for ABORT, COMMIT
// and MIRROR_PID_RESET, its value. It returns buf, maybe
// grown, for reuse. O(len(b)) plus decompression; no allocation for an
// uncompressed batch.
func (b Batch) Check(buf []byte, limit int) ([]byte, error) {
	if err := b.VerifyCRC(); err != nil {
		return buf, err
	}
	if !b.Compression().Valid() {
		return buf, ErrUnsupportedCodec
	}
	it, buf, err := b.OpenRecords(buf, limit)
	if err != nil {
		return buf, err
	}
	first := true
	for {
		r, err := it.Next()
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if first && b.IsControl() {
			c, err := ParseControlRecord(b, r)
			if err == nil {
				err = c.checkValue()
			}
			if err != nil {
				return buf, err
			}
		}
		first = false
	}
}

// ErrLZ4ContentChecksum reports an LZ4 frame whose content checksum does not
// match its decompressed bytes: Kafka's reader does not compare it, so
// Decompress accepts such a frame; VerifyLZ4ContentChecksum is for stricter
// readers.
var ErrLZ4ContentChecksum = corrupt("codec: lz4 content checksum mismatch")

// VerifyLZ4ContentChecksum checks the content checksum of b's LZ4 frame, if
// it has one, against out, what Decompress returned for b. Nil for a batch
// of another codec, a frame without the checksum, or a match;
// ErrLZ4ContentChecksum for a mismatch, ErrBadCompression for a frame that
// does not parse. O(len(out)).
func VerifyLZ4ContentChecksum(b Batch, out []byte) error {
	if b.Compression() != CompressionLZ4 {
		return nil
	}
	switch err := lz4.VerifyContentChecksum(b[HeaderSize:], out); {
	case err == nil:
		return nil
	case errors.Is(err, lz4.ErrContentChecksum):
		return ErrLZ4ContentChecksum
	}
	return ErrBadCompression
}

// IgnoredTail is the number of bytes after b's compressed stream that
// Decompress, reading as Kafka does, never decodes: after an LZ4 frame's end
// (and content checksum), after the last gzip member the JDK reads, or a 1-3
// byte xerial snappy tail. 0 for other codecs, for a stream without such
// bytes, and when the stream does not decode. It decompresses a gzip batch
// again (into a new buffer of at most limit bytes); for stricter readers.
func IgnoredTail(b Batch, limit int) int {
	src := b[HeaderSize:]
	switch b.Compression() {
	case CompressionLZ4:
		return lz4.Tail(src)
	case CompressionGzip:
		_, end, err := gzip.DecodeEnd(nil, src, limit)
		if err != nil {
			return 0
		}
		return len(src) - end
	case CompressionSnappy:
		return snappy.Tail(src)
	}
	return 0
}
