package crc32c

import (
	"math/rand/v2"
	"testing"
)

// TestMulModAlgebra: the register arithmetic behind the joins and the patch.
func TestMulModAlgebra(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	if got := mulMod(xInv33, xPowMod(33)); got != one {
		t.Fatalf("x^-33·x^33 = %#x", got)
	}
	for range 1000 {
		a, b := r.Uint32(), r.Uint32()
		if mulMod(a, b) != mulMod(b, a) || mulMod(a, one) != a {
			t.Fatalf("mulMod(%#x, %#x) not commutative or 1 not neutral", a, b)
		}
		if got := mulx33(a, primed(b)); got != mulMod(a, b) {
			t.Fatalf("mulx33(a, b') = %#x, want a·b = %#x", got, mulMod(a, b))
		}
		// Advancing over n zero bytes is multiplying by x^(8n).
		n := uint64(r.IntN(5000))
		if got, want := mulMod(a, xPowMod(8*n)), zeroExtend(a, n); got != want {
			t.Fatalf("a·x^(8·%d) = %#x, zeroExtend %#x", n, got, want)
		}
	}
}

// TestPatch8: the instruction version and the pure-Go arithmetic both give
// crc ^ zext_n(raw(0, delta)) for lengths across every byte of n.
func TestPatch8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ns := []uint32{0, 1, 7, 255, 256, 16330, 1<<20 - 51, 1<<24 + 3, 1<<32 - 1}
	for range 200 {
		ns = append(ns, r.Uint32()>>r.IntN(32))
	}
	for _, n := range ns {
		crc, delta := r.Uint32(), r.Uint64()
		var d [8]byte
		for i := range d {
			d[i] = byte(delta >> (8 * i))
		}
		want := crc ^ zeroExtend(rawCRC(0, d[:]), uint64(n))
		c0, c1, c2, c3 := zextConsts(n)
		if got := patch8Go(crc, delta, c0, c1, c2, c3); got != want {
			t.Fatalf("n %d: patch8Go %#x, want %#x", n, got, want)
		}
		if got := patch8(crc, delta, c0, c1, c2, c3); got != want {
			t.Fatalf("n %d: patch8 %#x, want %#x", n, got, want)
		}
	}
}
