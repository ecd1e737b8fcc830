//go:build !purego

package codec

import "testing"

// setFold forces kernel k for Checksum and ChecksumCopy until restore.
func setFold(k foldKind) (restore func()) {
	saved := foldKernel
	foldKernel = k
	return func() { foldKernel = saved }
}

// foldConst is k(D) of crcfold_amd64.s's design note: the pair of registers
// (x^(D+31) mod P, x^(D-33) mod P) that folds a 128-bit lane over D bits.
func foldConst(d uint64) [2]uint64 {
	return [2]uint64{uint64(xPowMod(d + 31)), uint64(xPowMod(d - 33))}
}

// TestFoldConstants recomputes the kernels' table from the polynomial and
// compares it with foldK<> entry by entry.
func TestFoldConstants(t *testing.T) {
	var want [14]uint64
	for _, e := range []struct {
		at   int
		bits uint64
	}{{0, 2048}, {2, 512}, {4, 384}, {6, 256}, {8, 128}, {12, 1024}} {
		k := foldConst(e.bits)
		want[e.at], want[e.at+1] = k[0], k[1]
	}
	// want[10], want[11]: the zero constant of the last lane.
	got := foldTable()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("foldK<>+%d = %#x, want %#x", 8*i, got[i], want[i])
		}
	}
}
