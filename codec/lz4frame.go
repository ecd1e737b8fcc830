package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// LZ4 records are read the way Kafka's Lz4BlockInputStream reads them, not
// as a general LZ4 frame reader would:
//
//   - exactly one frame: the stream ends at the first end mark, and whatever
//     follows it (another frame, garbage) is never looked at;
//   - the frame descriptor must say version 1, independent blocks, no
//     reserved bits, a block maximum size code of 4..7 (64 KiB..4 MiB); the
//     header checksum byte is verified, a content size field is skipped;
//   - block checksums (xxHash32 of the stored bytes), when flagged, are
//     verified; the content checksum after the end mark, when flagged, must be
//     present but is not verified (Kafka's reader reads it and leaves the
//     comparison unimplemented);
//   - each block is decoded on its own (no dictionary from the previous one),
//     into at most the frame's block maximum size.
//
// The decoding is pierrec/lz4's block decoder; only the framing is ours.

const (
	lz4Magic          = 0x184D2204
	lz4Uncompressed   = 0x80000000 // block-size bit: stored, not compressed
	lz4FlgVersionMask = 0xC0
	lz4FlgVersion1    = 0x40
	lz4FlgIndependent = 0x20
	lz4FlgBlockSum    = 0x10
	lz4FlgContentSize = 0x08
	lz4FlgContentSum  = 0x04
	lz4FlgReserved    = 0x03
)

var le = binary.LittleEndian

// lz4Scratch holds one decoded block when dst cannot take it directly; it
// grows to at most the 4 MiB largest block size.
var lz4Scratch = sync.Pool{New: func() any { return new([]byte) }}

func lz4Err(format string, args ...any) error {
	return fmt.Errorf("%w: lz4: "+format, append([]any{ErrBadCompression}, args...)...)
}

// unlz4 decodes the first LZ4 frame of src into dst's storage (see the rules
// above), failing with ErrDecompressionLimit past limit bytes.
func unlz4(dst, src []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	if len(src) < 6 {
		return dst, lz4Err("stream ended prematurely")
	}
	if le.Uint32(src) != lz4Magic {
		return dst, lz4Err("unsupported magic %#08x", le.Uint32(src))
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&lz4FlgReserved != 0:
		return dst, lz4Err("reserved FLG bits set (%#02x)", flg)
	case flg&lz4FlgIndependent == 0:
		return dst, lz4Err("dependent blocks are unsupported")
	case flg&lz4FlgVersionMask != lz4FlgVersion1:
		return dst, lz4Err("frame version %d is unsupported", flg>>6)
	case bd&0x8F != 0:
		return dst, lz4Err("reserved BD bits set (%#02x)", bd)
	case bd>>4 < 4:
		return dst, lz4Err("block size code %d outside 4..7", bd>>4)
	}
	maxBlock := 1 << (2*int(bd>>4) + 8)
	p := 6
	if flg&lz4FlgContentSize != 0 {
		if len(src)-p < 8 {
			return dst, lz4Err("stream ended prematurely")
		}
		p += 8
	}
	if p >= len(src) {
		return dst, lz4Err("stream ended prematurely")
	}
	if byte(xxh32(src[4:p])>>8) != src[p] {
		return dst, lz4Err("frame descriptor checksum mismatch")
	}
	p++
	h := hint(len(src), limit)
	for {
		if len(src)-p < 4 {
			return dst, lz4Err("stream ended prematurely")
		}
		n := le.Uint32(src[p:])
		p += 4
		stored := n&lz4Uncompressed != 0
		n &^= lz4Uncompressed
		if n == 0 { // end mark
			if flg&lz4FlgContentSum != 0 && len(src)-p < 4 {
				return dst, lz4Err("content checksum cut")
			}
			return dst, nil
		}
		if n > uint32(maxBlock) {
			return dst, lz4Err("block size %d exceeds the frame's maximum %d", n, maxBlock)
		}
		if uint64(len(src)-p) < uint64(n) {
			return dst, lz4Err("stream ended prematurely")
		}
		block := src[p : p+int(n)]
		p += int(n)
		if flg&lz4FlgBlockSum != 0 {
			if len(src)-p < 4 {
				return dst, lz4Err("stream ended prematurely")
			}
			if xxh32(block) != le.Uint32(src[p:]) {
				return dst, lz4Err("block checksum mismatch")
			}
			p += 4
		}
		var err error
		if stored {
			dst, err = appendCapped(dst, block, h, limit)
		} else {
			dst, err = lz4Block(dst, block, maxBlock, h, limit)
		}
		if err != nil {
			return dst, err
		}
	}
}

// lz4Block appends the decoding of one compressed block (at most maxBlock
// bytes) to dst: directly when dst has room for a whole block within limit,
// else through a pooled scratch buffer.
func lz4Block(dst, block []byte, maxBlock, h, limit int) ([]byte, error) {
	if cap(dst)-len(dst) >= maxBlock && limit-len(dst) >= maxBlock {
		n, err := lz4.UncompressBlock(block, dst[len(dst):len(dst)+maxBlock])
		if err != nil {
			return dst, lz4Err("%v", err)
		}
		return dst[:len(dst)+n], nil
	}
	sp := lz4Scratch.Get().(*[]byte)
	defer lz4Scratch.Put(sp)
	if cap(*sp) < maxBlock {
		*sp = make([]byte, maxBlock)
	}
	n, err := lz4.UncompressBlock(block, (*sp)[:maxBlock])
	if err != nil {
		return dst, lz4Err("%v", err)
	}
	return appendCapped(dst, (*sp)[:n], h, limit)
}

// appendCapped appends p to dst, growing it by doubling from hint and never
// past limit+1, and fails with ErrDecompressionLimit once more than limit
// bytes are out.
func appendCapped(dst, p []byte, hint, limit int) ([]byte, error) {
	if len(p) > limit-len(dst) {
		return dst, ErrDecompressionLimit
	}
	if cap(dst)-len(dst) < len(p) {
		want := min(max(2*cap(dst), hint, 512, len(dst)+len(p)), limit+1)
		nb := make([]byte, len(dst), want)
		copy(nb, dst)
		dst = nb
	}
	return append(dst, p...), nil
}

// xxh32 is xxHash32 with seed 0, as the LZ4 frame format uses it.
func xxh32(b []byte) uint32 {
	var p1, p2, p3, p4, p5 uint32 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
	n := len(b)
	var h uint32
	if n >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), -p1
		round := func(v, x uint32) uint32 { return bits.RotateLeft32(v+x*p2, 13) * p1 }
		for len(b) >= 16 {
			v1 = round(v1, le.Uint32(b))
			v2 = round(v2, le.Uint32(b[4:]))
			v3 = round(v3, le.Uint32(b[8:]))
			v4 = round(v4, le.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+le.Uint32(b)*p3, 17) * p4
	}
	for ; len(b) > 0; b = b[1:] {
		h = bits.RotateLeft32(h+uint32(b[0])*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}

// ErrLZ4ContentChecksum reports an LZ4 frame whose content checksum does not
// match its decompressed bytes: Kafka's reader does not compare it (see
// above), so Decompress accepts such a frame; VerifyLZ4ContentChecksum is
// for stricter readers.
var ErrLZ4ContentChecksum = corrupt("codec: lz4 content checksum mismatch")

// VerifyLZ4ContentChecksum checks the content checksum of b's LZ4 frame, if
// it has one, against out, what Decompress returned for b. Nil for a batch
// of another codec, a frame without the checksum, or a match. O(len(out)).
func VerifyLZ4ContentChecksum(b Batch, out []byte) error {
	if b.Compression() != CompressionLZ4 {
		return nil
	}
	src := b[HeaderSize:]
	if len(src) < 7 || le.Uint32(src) != lz4Magic {
		return ErrBadCompression
	}
	flg := src[4]
	if flg&lz4FlgContentSum == 0 {
		return nil
	}
	p := 7
	if flg&lz4FlgContentSize != 0 {
		p += 8
	}
	for {
		if len(src)-p < 4 {
			return ErrBadCompression
		}
		n := int(le.Uint32(src[p:]) &^ lz4Uncompressed)
		p += 4
		if n == 0 {
			break
		}
		p += n
		if flg&lz4FlgBlockSum != 0 {
			p += 4
		}
	}
	if len(src)-p < 4 {
		return ErrBadCompression
	}
	if le.Uint32(src[p:]) != xxh32(out) {
		return ErrLZ4ContentChecksum
	}
	return nil
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
		if len(src) < 7 || le.Uint32(src) != lz4Magic {
			return 0
		}
		flg := src[4]
		p := 7
		if flg&lz4FlgContentSize != 0 {
			p += 8
		}
		for {
			if len(src)-p < 4 {
				return 0
			}
			n := int(le.Uint32(src[p:]) &^ lz4Uncompressed)
			p += 4
			if n == 0 {
				break
			}
			p += n
			if flg&lz4FlgBlockSum != 0 {
				p += 4
			}
		}
		if flg&lz4FlgContentSum != 0 {
			p += 4
		}
		return max(len(src)-p, 0)
	case CompressionGzip:
		_, end, err := gunzipEnd(nil, src, limit)
		if err != nil {
			return 0
		}
		return len(src) - end
	case CompressionSnappy:
		if len(src) < xerialHeaderSize || !bytes.HasPrefix(src, xerialMagic) {
			return 0
		}
		rest := src[xerialHeaderSize:]
		for len(rest) >= 4 {
			n := be.Uint32(rest)
			if uint64(n) > uint64(len(rest)-4) {
				return 0
			}
			rest = rest[4+n:]
		}
		return len(rest)
	}
	return 0
}
