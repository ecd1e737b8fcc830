//go:build !purego

package crc32c

import (
	"os"
	"strings"
	"testing"
)

// setFold forces kernel k for Checksum and ChecksumCopy until restore.
func setFold(k foldKind) (restore func()) {
	saved := foldKernel
	foldKernel = k
	return func() { foldKernel = saved }
}

// foldConst is k(D) of fold_amd64.s's design note: the pair of registers
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

// TestMixConstants recomputes mixK<>: for a round of m steps (s = 40m
// stream bytes, v = 256m folded), the fold over the streams and the 256
// bytes before V, k(8·(256 + 4s)), and the join constants (x^(8·Lj))' with
// Lj = (4-j)·s + v - 256 (fold_amd64.s's design note).
func TestMixConstants(t *testing.T) {
	var want [64]uint64
	for m := uint64(1); m <= mixIters; m++ {
		e := want[8*(m-1):][:8]
		s, v := mixChunk*m, 256*m
		k := foldConst(8 * (256 + 4*s))
		e[0], e[1] = k[0], k[1]
		for j := uint64(1); j <= 4; j++ {
			e[1+j] = uint64(primed(xPowMod(8 * ((4-j)*s + v - 256))))
		}
	}
	got := mixTable()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mixK<>+%d = %#x, want %#x", 8*i, got[i], want[i])
		}
	}
}

// TestMixSteps: the assembly's steps for the last round, ((n>>5)·79)>>10,
// are n/mixStep for every n under a whole round.
func TestMixSteps(t *testing.T) {
	for n := 0; n < mixRound; n++ {
		if got := ((n >> 5) * 79) >> 10; got != n/mixStep {
			t.Fatalf("n = %d: %d steps, want %d", n, got, n/mixStep)
		}
	}
}

// TestBestFold: with fold512's features AMD's CPUs run the mixed rounds and
// the others fold512 alone; without them, no folding kernel.
func TestBestFold(t *testing.T) {
	amd, other := bestFold(true), bestFold(false)
	if !foldSupported(fold512) {
		if amd != foldNone || other != foldNone {
			t.Fatalf("no fold512 here, yet bestFold gives %v (AMD) and %v", amd, other)
		}
		return
	}
	if amd != fold512mix || other != fold512 {
		t.Fatalf("bestFold: %v on AMD, %v elsewhere; want fold512mix, fold512", amd, other)
	}
}

// TestIsAMD holds the CPUID vendor check to /proc/cpuinfo's vendor_id where
// Linux gives one.
func TestIsAMD(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo:", err)
	}
	var vendor string
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			vendor = strings.TrimSpace(v)
			break
		}
	}
	if vendor == "" {
		t.Skip("/proc/cpuinfo names no vendor_id")
	}
	if got, want := isAMD(), vendor == "AuthenticAMD"; got != want {
		t.Fatalf("isAMD() = %v, /proc/cpuinfo's vendor_id is %q", got, vendor)
	}
}
