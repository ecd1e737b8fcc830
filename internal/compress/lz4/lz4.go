// Package lz4 decodes and encodes the records of Kafka's lz4 codec: one LZ4
// frame, read the way Kafka's Lz4BlockInputStream reads it, not as a general
// LZ4 frame reader would:
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
// Encode writes a frame with 64 KiB blocks, as Kafka's producers do.
package lz4

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	plz4 "github.com/pierrec/lz4/v4"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// frameMagic starts an LZ4 frame (little endian).
const frameMagic = 0x184D2204

// storedBit is the block-size word's bit for a block stored, not compressed.
const storedBit = 0x80000000

const (
	lz4FlgVersionMask = 0xC0
	lz4FlgVersion1    = 0x40
	lz4FlgIndependent = 0x20
	lz4FlgBlockSum    = 0x10
	lz4FlgContentSize = 0x08
	lz4FlgContentSum  = 0x04
	lz4FlgReserved    = 0x03
)

var le = binary.LittleEndian

// scratch holds one decoded block when dst cannot take it directly; it
// grows to at most the 4 MiB largest block size.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func frameErr(format string, args ...any) error {
	return fmt.Errorf("lz4: "+format, args...)
}

// Decode decodes the first LZ4 frame of src into dst's storage (see the
// package's rules), failing with compress.ErrLimit past limit bytes.
func Decode(dst, src []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	if len(src) < 6 {
		return dst, frameErr("stream ended prematurely")
	}
	if le.Uint32(src) != frameMagic {
		return dst, frameErr("unsupported magic %#08x", le.Uint32(src))
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&lz4FlgReserved != 0:
		return dst, frameErr("reserved FLG bits set (%#02x)", flg)
	case flg&lz4FlgIndependent == 0:
		return dst, frameErr("dependent blocks are unsupported")
	case flg&lz4FlgVersionMask != lz4FlgVersion1:
		return dst, frameErr("frame version %d is unsupported", flg>>6)
	case bd&0x8F != 0:
		return dst, frameErr("reserved BD bits set (%#02x)", bd)
	case bd>>4 < 4:
		return dst, frameErr("block size code %d outside 4..7", bd>>4)
	}
	maxBlock := 1 << (2*int(bd>>4) + 8)
	p := 6
	if flg&lz4FlgContentSize != 0 {
		if len(src)-p < 8 {
			return dst, frameErr("stream ended prematurely")
		}
		p += 8
	}
	if p >= len(src) {
		return dst, frameErr("stream ended prematurely")
	}
	if byte(XXH32(src[4:p])>>8) != src[p] {
		return dst, frameErr("frame descriptor checksum mismatch")
	}
	p++
	h := compress.Hint(len(src), limit)
	for {
		if len(src)-p < 4 {
			return dst, frameErr("stream ended prematurely")
		}
		n := le.Uint32(src[p:])
		p += 4
		stored := n&storedBit != 0
		n &^= storedBit
		if n == 0 { // end mark
			if flg&lz4FlgContentSum != 0 && len(src)-p < 4 {
				return dst, frameErr("content checksum cut")
			}
			return dst, nil
		}
		if n > uint32(maxBlock) {
			return dst, frameErr("block size %d exceeds the frame's maximum %d", n, maxBlock)
		}
		if uint64(len(src)-p) < uint64(n) {
			return dst, frameErr("stream ended prematurely")
		}
		block := src[p : p+int(n)]
		p += int(n)
		if flg&lz4FlgBlockSum != 0 {
			if len(src)-p < 4 {
				return dst, frameErr("stream ended prematurely")
			}
			if XXH32(block) != le.Uint32(src[p:]) {
				return dst, frameErr("block checksum mismatch")
			}
			p += 4
		}
		var err error
		if stored {
			dst, err = compress.AppendCapped(dst, block, h, limit)
		} else {
			dst, err = decodeBlock(dst, block, maxBlock, h, limit)
		}
		if err != nil {
			return dst, err
		}
	}
}

// lz4Block appends the decoding of one compressed block (at most maxBlock
// bytes) to dst: directly when dst has room for a whole block within limit,
// else through a pooled scratch buffer.
func decodeBlock(dst, block []byte, maxBlock, h, limit int) ([]byte, error) {
	if cap(dst)-len(dst) >= maxBlock && limit-len(dst) >= maxBlock {
		n, err := plz4.UncompressBlock(block, dst[len(dst):len(dst)+maxBlock])
		if err != nil {
			return dst, frameErr("%v", err)
		}
		return dst[:len(dst)+n], nil
	}
	sp := scratch.Get().(*[]byte)
	defer scratch.Put(sp)
	if cap(*sp) < maxBlock {
		*sp = make([]byte, maxBlock)
	}
	n, err := plz4.UncompressBlock(block, (*sp)[:maxBlock])
	if err != nil {
		return dst, frameErr("%v", err)
	}
	return compress.AppendCapped(dst, (*sp)[:n], h, limit)
}

// XXH32 is xxHash32 with seed 0, as the LZ4 frame format uses it for its
// descriptor, block and content checksums.
func XXH32(b []byte) uint32 {
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

// ErrContentChecksum reports a frame whose content checksum does not match
// its decompressed bytes: Kafka's reader does not compare it, so Decode
// accepts such a frame; VerifyContentChecksum is for stricter readers.
var ErrContentChecksum = errors.New("lz4: content checksum mismatch")

// ErrFrame reports a frame VerifyContentChecksum or End cannot walk.
var ErrFrame = errors.New("lz4: malformed frame")

// VerifyContentChecksum checks the content checksum of src's frame, if it
// has one, against out, what Decode returned for src: nil for a frame
// without the checksum or a match, ErrContentChecksum for a mismatch,
// ErrFrame for a frame it cannot walk. O(len(out)).
func VerifyContentChecksum(src, out []byte) error {
	if len(src) < 7 || le.Uint32(src) != frameMagic {
		return ErrFrame
	}
	flg := src[4]
	if flg&lz4FlgContentSum == 0 {
		return nil
	}
	p, err := endMark(src)
	if err != nil {
		return err
	}
	if len(src)-p < 4 {
		return ErrFrame
	}
	if le.Uint32(src[p:]) != XXH32(out) {
		return ErrContentChecksum
	}
	return nil
}

// Tail is the number of bytes after src's frame (its end mark and content
// checksum) that Decode never looks at; 0 for a frame it cannot walk.
func Tail(src []byte) int {
	if len(src) < 7 || le.Uint32(src) != frameMagic {
		return 0
	}
	p, err := endMark(src)
	if err != nil {
		return 0
	}
	if src[4]&lz4FlgContentSum != 0 {
		p += 4
	}
	return max(len(src)-p, 0)
}

// endMark walks the block size words of src's frame, from after its
// descriptor, and returns the position after the end mark.
func endMark(src []byte) (int, error) {
	flg := src[4]
	p := 7
	if flg&lz4FlgContentSize != 0 {
		p += 8
	}
	for {
		if len(src)-p < 4 {
			return 0, ErrFrame
		}
		n := int(le.Uint32(src[p:]) &^ storedBit)
		p += 4
		if n == 0 {
			return p, nil
		}
		p += n
		if flg&lz4FlgBlockSum != 0 {
			p += 4
		}
	}
}

// Encode appends raw compressed as one LZ4 frame with 64 KiB blocks to dst.
func Encode(dst, raw []byte) ([]byte, error) {
	w := &compress.AppendWriter{B: dst}
	zw := plz4.NewWriter(w)
	if err := zw.Apply(plz4.BlockSizeOption(plz4.Block64Kb)); err != nil {
		return dst, err
	}
	if _, err := zw.Write(raw); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return w.B, nil
}
