package codec

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
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
		zr, err := stdgzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err
		}
		r = zr
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

// refSnappy: "\x82SNAPPY\x00" + two int32s, then (int32 length, block)*;
// anything else is one raw block.
func refSnappy(src []byte, limit int) ([]byte, error) {
	blocks := [][]byte{src}
	if len(src) >= 8 && string(src[:8]) == "\x82SNAPPY\x00" {
		if len(src) < 16 {
			return nil, errors.New("short header")
		}
		blocks = nil
		rest := src[16:]
		for len(rest) > 0 {
			if len(rest) < 4 {
				return nil, errors.New("short length")
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
