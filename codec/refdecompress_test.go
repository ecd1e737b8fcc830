package codec

import (
	"bytes"
	stdflate "compress/flate"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// refDecompress is the reference for FuzzDecompress: at most limit+1 bytes
// out (so a bomb cannot exhaust the fuzzer), through each library's plain
// streaming reader, and readers written separately here for what Kafka reads
// differently from those libraries (snappy xerial framing, the LZ4 frame).
func refDecompress(c Compression, src []byte, limit int) ([]byte, error) {
	var r io.Reader
	switch c {
	case CompressionGzip:
		return refJavaGzip(src, limit)
	case CompressionLZ4:
		return refLZ4(src, limit)
	case CompressionZstd:
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(MaxZstdWindow), zstd.WithDecoderMaxMemory(MaxZstdWindow))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		r = d
	case CompressionSnappy:
		return refSnappy(src, limit)
	default:
		return nil, errors.New("codec")
	}
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}

// refSnappy: "\x82SNAPPY\x00" + int32 version >= 1 + int32, then
// (int32 length, block)* up to a tail of under 4 bytes; anything else,
// including a stream shorter than the 16-byte header, is one raw block.
func refSnappy(src []byte, limit int) ([]byte, error) {
	blocks := [][]byte{src}
	if len(src) >= 16 && string(src[:8]) == "\x82SNAPPY\x00" {
		if int32(binary.BigEndian.Uint32(src[8:])) < 1 {
			return nil, errors.New("version")
		}
		blocks = nil
		rest := src[16:]
		for len(rest) > 0 {
			if len(rest) < 4 {
				break // SnappyInputStream#hasNextChunk: a cut length ends the stream
			}
			n := binary.BigEndian.Uint32(rest)
			if uint64(n) > uint64(len(rest)-4) {
				return nil, errors.New("chunk overrun")
			}
			blocks = append(blocks, rest[4:4+n])
			rest = rest[4+n:]
		}
	}
	var out []byte
	for _, blk := range blocks {
		n, err := snappy.DecodedLen(blk)
		if err != nil {
			return nil, err
		}
		if len(out)+n > limit {
			return make([]byte, limit+1), nil // over the limit: only the length matters
		}
		d, err := snappy.DecodeStrict(nil, blk)
		if err != nil {
			return nil, err
		}
		out = append(out, d...)
	}
	return out, nil
}

// refLZ4 reads one LZ4 frame as Kafka's Lz4BlockInputStream does, written
// as a straight walk over a bytes.Reader; only the block decoder and xxh32
// are shared with the code under test.
func refLZ4(src []byte, limit int) ([]byte, error) {
	r := bytes.NewReader(src)
	var hdr struct {
		Magic   uint32
		FLG, BD uint8
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, err
	}
	if hdr.Magic != 0x184D2204 {
		return nil, errors.New("magic")
	}
	version, indep, blockSum := hdr.FLG>>6, hdr.FLG>>5&1, hdr.FLG>>4&1
	contentSize, contentSum, reserved := hdr.FLG>>3&1, hdr.FLG>>2&1, hdr.FLG&3
	if reserved != 0 || indep != 1 || version != 1 {
		return nil, errors.New("FLG")
	}
	if hdr.BD&0x0F != 0 || hdr.BD&0x80 != 0 || hdr.BD>>4 < 4 {
		return nil, errors.New("BD")
	}
	maxBlock := 1 << (8 + 2*int(hdr.BD>>4))
	desc := []byte{hdr.FLG, hdr.BD}
	if contentSize == 1 {
		var cs [8]byte
		if _, err := io.ReadFull(r, cs[:]); err != nil {
			return nil, err
		}
		desc = append(desc, cs[:]...)
	}
	hc, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	if hc != byte(xxh32(desc)>>8) {
		return nil, errors.New("HC")
	}
	var out []byte
	for {
		var size uint32
		if err := binary.Read(r, binary.LittleEndian, &size); err != nil {
			return nil, err
		}
		if size == 0 || size == 0x80000000 {
			if contentSum == 1 {
				var sum [4]byte
				if _, err := io.ReadFull(r, sum[:]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		n := int(size & 0x7FFFFFFF)
		if n > maxBlock {
			return nil, errors.New("block size")
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, err
		}
		if blockSum == 1 {
			var sum uint32
			if err := binary.Read(r, binary.LittleEndian, &sum); err != nil {
				return nil, err
			}
			if sum != xxh32(data) {
				return nil, errors.New("block checksum")
			}
		}
		if size&0x80000000 == 0 {
			dec := make([]byte, maxBlock)
			k, err := lz4.UncompressBlock(data, dec)
			if err != nil {
				return nil, err
			}
			data = dec[:k]
		}
		if len(out)+len(data) > limit {
			return make([]byte, limit+1), nil // over the limit: only the length matters
		}
		out = append(out, data...)
	}
}

// javaStream simulates GZIPInputStream's input side literally: buf is its
// 8 KiB buffer (window src[lo:hi]), in the underlying stream at position u.
type javaStream struct {
	src       []byte
	u, lo, hi int
}

// ReadByte is the inflater's input: the buffer, refilled by one 8 KiB read.
func (j *javaStream) ReadByte() (byte, error) {
	if j.lo == j.hi {
		n := min(8192, len(j.src)-j.u)
		if n == 0 {
			return 0, io.ErrUnexpectedEOF
		}
		j.lo, j.hi, j.u = j.u, j.u+n, j.u+n
	}
	j.lo++
	return j.src[j.lo-1], nil
}

func (j *javaStream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b, err := j.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = b
	return 1, nil
}

// seqByte reads one byte as the SequenceInputStream over the buffer's rest
// and then the underlying stream does; ok false at EOF.
func (j *javaStream) seqByte() (byte, bool) {
	if j.lo < j.hi {
		j.lo++
		return j.src[j.lo-1], true
	}
	if j.u < len(j.src) {
		j.u++
		return j.src[j.u-1], true
	}
	return 0, false
}

// header reads a member header through next (GZIPInputStream#readHeader).
func refGzipHeader(next func() (byte, bool)) error {
	var hdr []byte
	get := func() (byte, error) {
		b, ok := next()
		if !ok {
			return 0, io.EOF
		}
		hdr = append(hdr, b)
		return b, nil
	}
	for i := 0; i < 10; i++ {
		if _, err := get(); err != nil {
			return err
		}
	}
	if hdr[0] != 0x1f || hdr[1] != 0x8b || hdr[2] != 8 {
		return errors.New("magic or method")
	}
	flg := hdr[3]
	if flg&4 != 0 {
		a, err := get()
		if err != nil {
			return err
		}
		b, err := get()
		if err != nil {
			return err
		}
		for n := int(a) | int(b)<<8; n > 0; n-- {
			if _, err := get(); err != nil {
				return err
			}
		}
	}
	for _, f := range []byte{8, 16} {
		if flg&f != 0 {
			for {
				c, err := get()
				if err != nil {
					return err
				}
				if c == 0 {
					break
				}
			}
		}
	}
	if flg&2 != 0 {
		want := uint16(crc32.ChecksumIEEE(hdr))
		a, ok1 := next()
		b, ok2 := next()
		if !ok1 || !ok2 || uint16(a)|uint16(b)<<8 != want {
			return errors.New("header crc")
		}
	}
	return nil
}

// refJavaGzip decodes src as GZIPInputStream(in, 8192) over Kafka's
// ByteBufferInputStream (available() is the bytes left), with the standard
// library's inflater.
func refJavaGzip(src []byte, limit int) ([]byte, error) {
	j := &javaStream{src: src}
	direct := func() (byte, bool) { // the first header is read from the stream itself
		if j.u < len(src) {
			j.u++
			return src[j.u-1], true
		}
		return 0, false
	}
	if err := refGzipHeader(direct); err != nil {
		return nil, err
	}
	var out []byte
	for {
		member, err := io.ReadAll(io.LimitReader(stdflate.NewReader(j), int64(limit-len(out))+1))
		out = append(out, member...)
		if len(out) > limit {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		remaining := j.hi - j.lo
		var tr [8]byte
		for i := range tr {
			b, ok := j.seqByte()
			if !ok {
				return nil, io.ErrUnexpectedEOF
			}
			tr[i] = b
		}
		if binary.LittleEndian.Uint32(tr[:]) != crc32.ChecksumIEEE(member) || binary.LittleEndian.Uint32(tr[4:]) != uint32(len(member)) {
			return nil, errors.New("trailer")
		}
		if !(len(src)-j.u > 0 || remaining > 26) {
			return out, nil
		}
		if refGzipHeader(j.seqByte) != nil {
			return out, nil
		}
	}
}
