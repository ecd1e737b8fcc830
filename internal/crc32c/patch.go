package crc32c

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
	"sync"
)

// Design note: patching the CRC in O(1).
//
// CRC-32C is affine over GF(2): for two messages A and B of equal length,
// crc(A) ^ crc(B) = raw(A ^ B), where raw is the CRC with a zero initial
// register and no final XOR. When a field of m bytes changes from old to new
// and k bytes follow it, A ^ B is zero except for delta = old ^ new, so
//
//	crc(new) = crc(old) ^ zext_k(raw(delta))
//
// where zext_k advances a CRC register over k zero bytes. zext_k is a linear
// map on 32-bit registers; we write k in base 16 (k = Σ d_j·16^j) and keep,
// for every nibble position j and digit d, the map "advance over d·16^j zero
// bytes" as four 256-entry byte-sliced tables (a 32×32 matrix applied with four
// lookups). A patch then costs one 8-byte raw CRC plus at most eight table
// applications (five for batches under 1 MiB), whatever the batch length.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// castagnoli8 is the slicing-by-8 form of the CRC-32C table: entry [k][v]
// is the register after byte v followed by k zero bytes, from register 0.
var castagnoli8 = func() (t [8][256]uint32) {
	for v := range 256 {
		r := uint32(v)
		for range 8 {
			r = r>>1 ^ 0x82f63b78&-(r&1)
		}
		t[0][v] = r
	}
	for k := 1; k < 8; k++ {
		for v := range 256 {
			p := t[k-1][v]
			t[k][v] = p>>8 ^ t[0][byte(p)]
		}
	}
	return t
}()

// rawCRC returns the CRC register after b starting from register reg, with no
// initial or final inversion.
func rawCRC(reg uint32, b []byte) uint32 { return ^crc32.Update(^reg, castagnoli, b) }

// zeroOp advances a CRC register over a fixed number of zero bytes.
type zeroOp [4][256]uint32

func (t *zeroOp) apply(r uint32) uint32 {
	return t[0][r&0xff] ^ t[1][(r>>8)&0xff] ^ t[2][(r>>16)&0xff] ^ t[3][r>>24]
}

// fromColumns expands the images of the 32 basis registers into byte tables.
func (t *zeroOp) fromColumns(col *[32]uint32) {
	for byteIdx := 0; byteIdx < 4; byteIdx++ {
		tab := &t[byteIdx]
		tab[0] = 0
		for v := 1; v < 256; v++ {
			low := v & -v
			bit := 0
			for 1<<bit != low {
				bit++
			}
			tab[v] = tab[v&^low] ^ col[byteIdx*8+bit]
		}
	}
}

const zeroDigits = 8 // nibble positions: batches up to 2^32 bytes

var (
	zeroOpsOnce sync.Once
	zeroOps     *[zeroDigits][16]zeroOp // [j][d] advances over d·16^j zero bytes; d == 0 unused
)

func buildZeroOps() {
	ops := new([zeroDigits][16]zeroOp)
	// unit: the columns of "advance over 16^j bytes", starting with one byte.
	var unit [32]uint32
	for i := range unit {
		unit[i] = rawCRC(1<<i, []byte{0})
	}
	for j := 0; j < zeroDigits; j++ {
		// multiples: columns of d·16^j for d = 1..15.
		cur := unit
		ops[j][1].fromColumns(&cur)
		for d := 2; d < 16; d++ {
			for i := range cur {
				cur[i] = ops[j][1].apply(cur[i])
			}
			ops[j][d].fromColumns(&cur)
		}
		// 16·16^j = 15·16^j followed by 16^j.
		for i := range cur {
			cur[i] = ops[j][1].apply(cur[i])
		}
		unit = cur
	}
	zeroOps = ops
}

// zeroExtend advances register r over n zero bytes in O(log16 n).
func zeroExtend(r uint32, n uint64) uint32 {
	zeroOpsOnce.Do(buildZeroOps)
	ops := zeroOps
	for j := 0; n != 0 && j < zeroDigits; j++ {
		if d := n & 15; d != 0 {
			r = ops[j][d].apply(r)
		}
		n >>= 4
	}
	if n != 0 { // beyond 2^32 bytes: fall back to repeated 2^28-byte steps
		for ; n != 0; n-- {
			for k := 0; k < 16; k++ {
				r = ops[zeroDigits-1][15].apply(r)
				r = ops[zeroDigits-1][1].apply(r)
			}
		}
	}
	return r
}

// PatchWord is Patch of an 8-byte big-endian field that held old and
// now holds new, the values passed as words.
func PatchWord(crc uint32, old, new uint64, trailing int) uint32 {
	if crcAsm && uint64(trailing) < 1<<32 {
		// Patch's delta: the field's bytes read little endian.
		c0, c1, c2, c3 := zextConsts(uint32(trailing))
		return patch8(crc, bits.ReverseBytes64(old^new), c0, c1, c2, c3)
	}
	var o, n [8]byte
	binary.BigEndian.PutUint64(o[:], old)
	binary.BigEndian.PutUint64(n[:], new)
	return Patch(crc, o[:], n[:], trailing)
}

// Patch returns the CRC-32C of a message after a field that held old now
// holds new, given crc, the CRC of the message before the change, and
// trailing, the number of message bytes after the field. old and new must have
// equal length. The cost does
// not depend on trailing beyond O(log16 trailing) table lookups; no allocation.
// A crc that was wrong before stays wrong by the same error afterwards.
func Patch(crc uint32, old, new []byte, trailing int) uint32 {
	if len(old) != len(new) {
		panic("crc32c: Patch with fields of different length")
	}
	if len(old) == 8 && crcAsm && uint64(trailing) < 1<<32 {
		// Two carry-less multiplies deep, no table lookup on the chain
		// (mul.go); the tables below miss the cache after a large copy.
		delta := binary.LittleEndian.Uint64(old) ^ binary.LittleEndian.Uint64(new)
		c0, c1, c2, c3 := zextConsts(uint32(trailing))
		return patch8(crc, delta, c0, c1, c2, c3)
	}
	var d uint32
	if len(old) == 8 {
		// An 8-byte field (producerId): slicing-by-8, eight independent
		// lookups. Byte at a time is a chain of eight dependent loads
		// (~15 ns more), a call into the hardware CRC costs more still.
		lo := binary.LittleEndian.Uint32(old) ^ binary.LittleEndian.Uint32(new)
		t := &castagnoli8
		d = t[7][byte(lo)] ^ t[6][byte(lo>>8)] ^ t[5][byte(lo>>16)] ^ t[4][lo>>24] ^
			t[3][old[4]^new[4]] ^ t[2][old[5]^new[5]] ^ t[1][old[6]^new[6]] ^ t[0][old[7]^new[7]]
	} else {
		// Byte at a time over the few delta bytes: cheaper than a call into
		// the vectorised CRC, and nothing escapes.
		for i := range old {
			d = castagnoli[byte(d)^old[i]^new[i]] ^ d>>8
		}
	}
	return crc ^ zeroExtend(d, uint64(trailing))
}

// patchSlow is the reference for Patch: it advances over the trailing
// zero bytes one byte at a time. O(trailing); for tests and fuzzing.
func patchSlow(crc uint32, old, new []byte, trailing int) uint32 {
	var d uint32
	for i := range old {
		d = rawCRC(d, []byte{old[i] ^ new[i]})
	}
	var zero [256]byte
	for trailing > 0 {
		n := min(trailing, len(zero))
		d = rawCRC(d, zero[:n])
		trailing -= n
	}
	return crc ^ d
}
