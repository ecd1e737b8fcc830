package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Design note: compressed records (DefaultRecordBatch#recordInputStream and
// the codecs of org.apache.kafka.common.compress).
//
// Every byte after the 61-byte header is one stream of the batch's codec:
//
//	gzip    a gzip stream (RFC 1952), read as Java's GZIPInputStream reads
//	        it, concatenated members and ignored tails included (gzipjava.go)
//	snappy  Kafka's SnappyOutputStream framing from snappy-java ("xerial"):
//	          8-byte magic 82 'S' 'N' 'A' 'P' 'P' 'Y' 00, int32 version,
//	          int32 compatible version, then chunks of [int32 length][snappy block];
//	        or, as some clients (sarama, franz-go) write it, one raw snappy block.
//	        Readers accept both, with SnappyInputStream's rules (unsnappy).
//	lz4     one LZ4 frame (Kafka's Lz4BlockOutputStream), read as
//	        Kafka's Lz4BlockInputStream reads it (lz4frame.go)
//	zstd    a zstd frame
//
// Decompression is bounded: the caller passes limit, the most decompressed
// bytes it accepts, and a stream that would produce more fails with
// ErrDecompressionLimit after at most limit+1 bytes were written. Output
// buffers grow by doubling from a size guessed from the input and never past
// limit+1, so no length in the input sizes an allocation. The decompressors'
// own state is bounded by constants and pooled: the zstd window is capped at
// MaxZstdWindow, the lz4 block scratch at the 4 MiB largest block size.

// ErrBadCompression reports a compressed stream its codec rejects. It
// matches ErrCorrupt.
var ErrBadCompression = corrupt("codec: corrupt compressed records")

// MaxZstdWindow is the largest zstd window Decompress accepts (8 MiB, more
// than any Kafka producer level uses).
const MaxZstdWindow = 8 << 20

var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderSize = 16 // magic, version, compatible version

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

// readCapped reads r to EOF into dst[:0] (see appendReadCapped).
func readCapped(dst []byte, r io.Reader, hint, limit int) ([]byte, error) {
	return appendReadCapped(dst[:0], r, hint, limit)
}

func badCompression(err error) error {
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrBadCompression, err)
}

// hint guesses the decompressed size from the compressed size, capped by limit.
func hint(n, limit int) int { return min(4*n+64, limit+1) }

type zstdState struct {
	src bytes.Reader
	d   *zstd.Decoder
}

var zstdPool = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(MaxZstdWindow), zstd.WithDecoderMaxMemory(MaxZstdWindow))
	if err != nil {
		panic(err) // options are constant
	}
	return &zstdState{d: d}
}}

func unzstd(dst, src []byte, limit int) ([]byte, error) {
	s := zstdPool.Get().(*zstdState)
	defer zstdPool.Put(s)
	s.src.Reset(src)
	if err := s.d.Reset(&s.src); err != nil {
		return dst[:0], badCompression(err)
	}
	return readCapped(dst, s.d, hint(len(src), limit), limit)
}

// unsnappy decodes the xerial framing or, without its magic, one raw block,
// as snappy-java's SnappyInputStream (Kafka's reader) does: a stream shorter
// than the 16-byte header, or whose first 8 bytes are not the magic, is one
// raw block; a header whose version is below 1 is refused; and the chunks
// end where fewer than 4 bytes are left (a 1-3 byte tail is no error, since
// the stream reads a cut length as its end). Each block's decoded length is
// read from its preamble and checked against limit before any byte is
// written.
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	if len(src) < xerialHeaderSize || !bytes.HasPrefix(src, xerialMagic) {
		return snappyBlock(dst, src, limit)
	}
	if v := int32(be.Uint32(src[8:])); v < 1 {
		return dst, fmt.Errorf("%w: xerial snappy version %d", ErrBadCompression, v)
	}
	src = src[xerialHeaderSize:]
	for len(src) >= 4 {
		n := be.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst, fmt.Errorf("%w: xerial snappy chunk overruns", ErrBadCompression)
		}
		var err error
		if dst, err = snappyBlock(dst, src[:n], limit); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// snappyBlock appends the decoding of one snappy block to dst.
func snappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return dst, badCompression(err)
	}
	if n > limit-len(dst) {
		return dst, ErrDecompressionLimit
	}
	if cap(dst)-len(dst) < n {
		nb := make([]byte, len(dst), len(dst)+max(n, min(2*cap(dst), limit-len(dst))))
		copy(nb, dst)
		dst = nb
	}
	out, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return dst, badCompression(err)
	}
	if len(out) != n {
		return dst, fmt.Errorf("%w: snappy block length", ErrBadCompression)
	}
	return dst[:len(dst)+n], nil
}

// Compress appends raw, a records section, compressed with c and framed as
// Kafka's producers write it: gzip a gzip member; snappy the xerial framing
// with 32 KiB chunks; lz4 an LZ4 frame with 64 KiB blocks; zstd one frame.
// It is the builder's (AppendBatch) and LogValidator's rebuild's compressor.
// Errors: ErrUnsupportedCodec for CompressionNone or an unknown codec, or
// the compressor's. Safe for concurrent use; allocates the gzip and lz4
// writers' state per call and grows dst.
func Compress(dst, raw []byte, c Compression) ([]byte, error) {
	w := &appendWriter{b: dst}
	switch c {
	case CompressionGzip:
		zw := gzip.NewWriter(w)
		if _, err := zw.Write(raw); err != nil {
			return dst, err
		}
		if err := zw.Close(); err != nil {
			return dst, err
		}
		return w.b, nil
	case CompressionSnappy:
		out := append(dst, xerialMagic...)
		out = be.AppendUint32(out, 1) // version
		out = be.AppendUint32(out, 1) // minimum compatible version
		for len(raw) > 0 {
			chunk := raw[:min(len(raw), 32<<10)]
			raw = raw[len(chunk):]
			n := len(out)
			out = be.AppendUint32(out, 0)
			out = slices.Grow(out, snappy.MaxEncodedLen(len(chunk)))
			block := snappy.Encode(out[len(out):cap(out)], chunk)
			be.PutUint32(out[n:], uint32(len(block)))
			out = out[:len(out)+len(block)]
		}
		return out, nil
	case CompressionLZ4:
		zw := lz4.NewWriter(w)
		if err := zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			return dst, err
		}
		if _, err := zw.Write(raw); err != nil {
			return dst, err
		}
		if err := zw.Close(); err != nil {
			return dst, err
		}
		return w.b, nil
	case CompressionZstd:
		return zstdEncoder().EncodeAll(raw, dst), nil
	}
	return dst, ErrUnsupportedCodec
}

// appendWriter is an io.Writer appending to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
var zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // constant options
	}
	return e
})

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
