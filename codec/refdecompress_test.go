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
// streaming reader, and a snappy xerial reader written separately here.
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
		r = lz4.NewReader(bytes.NewReader(src))
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
