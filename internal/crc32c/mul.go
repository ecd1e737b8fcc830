package crc32c

import "sync"

// Design note: multiplying CRC registers.
//
// A raw CRC-32C register is a polynomial of degree < 32 over GF(2), reflected:
// bit 31 is the coefficient of x^0, bit 0 that of x^31. Advancing a register
// over n zero bytes (zext_n) multiplies it by x^(8n) modulo P. On amd64 one
// carry-less multiply (PCLMULQDQ) of two registers, read back as a reflected
// 64-bit word, is their product times x, and the CRC32 instruction applied to
// a 64-bit word w from register 0 gives w·x^32 mod P; together
//
//	mulx33(a, b) = CRC32(0, clmul(a, b)) = a·b·x^33 mod P.
//
// So constants are kept "primed", as c' = c·x^-33: mulx33 of two primed
// constants is the primed product, and mulx33(r, c') = r·c. zext_n of a
// register r is then mulx33(r, (x^(8n))'), and (x^(8n))' for any n < 2^32 is
// the mulx33 product of four table entries, one per byte of n. Used by
// ChecksumCopy (its joins) and Patch (the delta of an 8-byte field), where
// the table-driven zext's dependent lookups miss the cache once a large
// batch has been copied.

const castagnoliPoly = 0x82f63b78 // reflected

// mulMod returns a·b mod P for reflected registers (bit by bit; for tables
// and tests).
func mulMod(a, b uint32) uint32 {
	var r uint32
	for i := 31; i >= 0; i-- { // bit i of b is the coefficient of x^(31-i)
		if b>>i&1 != 0 {
			r ^= a
		}
		a = a>>1 ^ castagnoliPoly&-(a&1) // a·x
	}
	return r
}

// one is the register of the polynomial 1.
const one = uint32(1) << 31

// xPowMod returns x^e mod P (square and multiply). zeroExtend(one, n) gives
// x^(8n) too, but through patch.go's 512 KiB of tables, which the kernels'
// constants do not need.
func xPowMod(e uint64) uint32 {
	r, base := one, one>>1 // 1, x
	for ; e != 0; e >>= 1 {
		if e&1 != 0 {
			r = mulMod(r, base)
		}
		base = mulMod(base, base)
	}
	return r
}

// xInv33 is x^-33 mod P: 33 steps of division by x (x is invertible mod P,
// whose x^0 coefficient is 1).
var xInv33 = func() uint32 {
	r := one
	for range 33 {
		b := r >> 31 // r·x^-1: undo r' = r>>1 ^ P·(r&1)
		r = (r^castagnoliPoly&-b)<<1 | b
	}
	return r
}()

// primed returns c·x^-33 mod P.
func primed(c uint32) uint32 { return mulMod(c, xInv33) }

// mulx33 is a·b·x^33 mod P in pure Go: the reference for the instruction
// pair (and the fallback's arithmetic).
func mulx33(a, b uint32) uint32 { return mulMod(mulMod(a, b), xPowMod(33)) }

var (
	zextOnce sync.Once
	zextByte *[4][256]uint32 // [i][v] = (x^(8·v·256^i))'
)

func buildZextByte() {
	t := new([4][256]uint32)
	for i := range 4 {
		step := xPowMod(8 << (8 * i)) // x^(8·256^i)
		p := one
		for v := range 256 {
			t[i][v] = primed(p)
			p = mulMod(p, step)
		}
	}
	zextByte = t
}

// zextConsts returns the four primed constants whose mulx33 product is
// (x^(8n))', for n < 2^32.
func zextConsts(n uint32) (c0, c1, c2, c3 uint32) {
	zextOnce.Do(buildZextByte)
	t := zextByte
	return t[0][byte(n)], t[1][byte(n>>8)], t[2][byte(n>>16)], t[3][n>>24]
}

// patch8Go is patch8's arithmetic in pure Go: crc ^ zext_n(raw(0, delta)),
// with the constants of zextConsts(n).
func patch8Go(crc uint32, delta uint64, c0, c1, c2, c3 uint32) uint32 {
	var d [8]byte
	for i := range d {
		d[i] = byte(delta >> (8 * i))
	}
	k := mulx33(mulx33(c0, c1), mulx33(c2, c3))
	return crc ^ mulx33(rawCRC(0, d[:]), k)
}
