package pid

import (
	"math/big"
	"testing"
)

// Regions are persisted (in PIDs written to logs and in the salt
// registry), so a fold must never change: FoldMix and FoldXOR of known
// cluster ids are pinned, and FoldMix agrees with an independent
// computation in arbitrary-precision arithmetic of its definition
// (murmur3's fmix64 of lsb, msb times the 64-bit golden ratio XOR that,
// fmix64 again, the two 32-bit halves XORed).
func TestFoldRegionsPinned(t *testing.T) {
	for _, c := range []struct {
		id       [16]byte
		mix, xor uint32
	}{
		{[16]byte{}, 0x00000000, 0x00000000},
		{[16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0xfa9e4f19, 0x00000000},
		{[16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 0xa63d9893, 0x08080808},
		{[16]byte{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 0x052bf530, 0x08080818},
		{[16]byte{7: 1}, 0x380b481b, 0x00000001},
		{[16]byte{15: 1}, 0xf6455121, 0x00000001},
	} {
		if got := FoldMix(c.id); got != c.mix {
			t.Errorf("FoldMix(%x) = %#08x, want %#08x", c.id, got, c.mix)
		}
		if got := FoldXOR(c.id); got != c.xor {
			t.Errorf("FoldXOR(%x) = %#08x, want %#08x", c.id, got, c.xor)
		}
		if got, want := FoldMix(c.id), refFoldMix(c.id); got != want {
			t.Errorf("FoldMix(%x) = %#08x, the definition gives %#08x", c.id, got, want)
		}
	}
	for i := range 256 {
		var id [16]byte
		for j := range id {
			id[j] = byte(i*31 + j*17 + i*j)
		}
		if got, want := FoldMix(id), refFoldMix(id); got != want {
			t.Fatalf("FoldMix(%x) = %#08x, the definition gives %#08x", id, got, want)
		}
	}
}

// refFoldMix computes FoldMix with math/big, modulo 2^64 by hand.
func refFoldMix(id [16]byte) uint32 {
	mod := new(big.Int).Lsh(big.NewInt(1), 64)
	word := func(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
	mul := func(a *big.Int, k string) *big.Int {
		m, _ := new(big.Int).SetString(k, 16)
		return new(big.Int).Mod(new(big.Int).Mul(a, m), mod)
	}
	xorShift := func(a *big.Int, s uint) *big.Int { return new(big.Int).Xor(a, new(big.Int).Rsh(a, s)) }
	fmix := func(h *big.Int) *big.Int {
		h = xorShift(h, 33)
		h = mul(h, "ff51afd7ed558ccd")
		h = xorShift(h, 33)
		h = mul(h, "c4ceb9fe1a85ec53")
		return xorShift(h, 33)
	}
	h := fmix(new(big.Int).Xor(mul(word(id[:8]), "9e3779b97f4a7c15"), fmix(word(id[8:]))))
	lo := new(big.Int).And(h, big.NewInt(0xffffffff))
	hi := new(big.Int).Rsh(h, 32)
	return uint32(new(big.Int).Xor(lo, hi).Uint64())
}

// nameOf and marshalName at the first value past each table: a name, not
// a panic, and an error.
func TestEnumNamesPastTheTable(t *testing.T) {
	for _, c := range []struct {
		v       interface{ String() string }
		marshal func() ([]byte, error)
		want    string
	}{
		{Strategy(len(strategies.Names)), Strategy(len(strategies.Names)).MarshalText, "strategy("},
		{CRCFix(len(crcFixes.Names)), CRCFix(len(crcFixes.Names)).MarshalText, "crc-fix("},
		{Policy(len(policies.Names)), Policy(len(policies.Names)).MarshalText, "policy("},
		{Fold(len(folds.Names)), Fold(len(folds.Names)).MarshalText, "fold("},
	} {
		if got := c.v.String(); len(got) < len(c.want) || got[:len(c.want)] != c.want {
			t.Errorf("String() = %q, want %q…", got, c.want)
		}
		if b, err := c.marshal(); err == nil {
			t.Errorf("%s: MarshalText = %q, want an error", c.want, b)
		}
	}
	// The last value of each table is named.
	for _, c := range []struct{ got, want string }{
		{Strategy(len(strategies.Names) - 1).String(), strategies.Names[len(strategies.Names)-1]},
		{CRCFix(len(crcFixes.Names) - 1).String(), crcFixes.Names[len(crcFixes.Names)-1]},
		{Policy(len(policies.Names) - 1).String(), policies.Names[len(policies.Names)-1]},
		{Fold(len(folds.Names) - 1).String(), folds.Names[len(folds.Names)-1]},
	} {
		if c.got != c.want {
			t.Errorf("String() = %q, want %q", c.got, c.want)
		}
	}
	if b, err := Fold(len(folds.Names) - 1).MarshalText(); err != nil || string(b) != folds.Names[len(folds.Names)-1] {
		t.Errorf("MarshalText of the last fold = %q, %v", b, err)
	}
}
