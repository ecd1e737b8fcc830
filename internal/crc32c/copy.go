package crc32c

import (
	"sync"
	"unsafe"
)

// Design note: CRC and copy in one pass.
//
// Appending a batch reads its bytes twice: once for the CRC-32C check and once
// to copy them into the log. ChecksumCopy does both in one pass: each word is
// loaded once, fed to the CRC instruction and stored. On amd64 the CRC32
// instruction has a latency of 3 cycles and a throughput of 1, so, as
// hash/crc32 does, the bytes are cut into three adjacent streams of k bytes
// whose registers a, b, c advance side by side (a from the running register,
// b and c from zero); the copy's loads and stores go to other ports and hide
// behind the CRC chains. The three are then joined with the CRC's linearity:
//
//	raw(r, A‖B‖C) = zext_2k(a) ^ zext_k(b) ^ c
//
// where zext_n advances a register over n zero bytes, i.e. multiplies it by
// x^(8n) modulo the CRC polynomial P. hash/crc32 does that with byte tables;
// here it is one carry-less multiply (PCLMULQDQ) by a constant and one CRC32
// of the product (mul.go). Tables would be cold: the copy sweeps the L1
// cache between two joins. Whatever is too short for three streams goes
// through a one-stream loop of 8-byte words, then 4, 2 and 1 bytes.
//
// From foldCopyMin bytes on, on CPUs with VPCLMULQDQ, the folding kernels of
// fold_amd64.s replace all of this: they store every vector they load.

// Stream lengths of the three-way loop: fusedLong (hash/crc32's) while the
// bytes last, then one or more rounds of fusedStep·j bytes per stream (j ≤
// fusedSteps) for the rest; both multiples of the kernel's 32-byte step.
// What is left under 2·3·fusedStep bytes goes through the one-stream loop.
const (
	fusedLong  = 1344
	fusedStep  = 32
	fusedSteps = 6
)

// joinConsts are the multipliers of a three-way round of k bytes per stream:
// (x^(8k))' and (x^(16k))', primed as mul.go says (x^(8k-33) and
// x^(16k-33) mod P).
type joinConsts struct{ k1, k2 uint64 }

var (
	fusedOnce      sync.Once
	fusedLongJoin  joinConsts
	fusedStepJoins [fusedSteps + 1]joinConsts // [j] for fusedStep·j bytes; [0] unused
)

func joinFor(k int) joinConsts {
	return joinConsts{uint64(primed(xPowMod(uint64(8 * k)))), uint64(primed(xPowMod(uint64(16 * k))))}
}

func fusedConsts() {
	fusedLongJoin = joinFor(fusedLong)
	for j := 1; j <= fusedSteps; j++ {
		fusedStepJoins[j] = joinFor(fusedStep * j)
	}
}

// ChecksumCopy copies src into dst and returns Checksum(src), reading each
// byte of src once where the hardware allows (amd64 with SSE4.2 and
// PCLMULQDQ, and the folding kernels where VPCLMULQDQ is there); elsewhere
// it is Checksum then copy. dst must be at least
// len(src) bytes long (it panics otherwise, as a slice expression would); if
// dst and src overlap the result is that of Checksum(src) followed by
// copy(dst, src). No allocation; O(len(src)).
func ChecksumCopy(dst, src []byte) uint32 { return checksumCopy(dst, src, false) }

// ChecksumCopyFuses reports whether ChecksumCopy and ChecksumCopyCold compute
// the CRC in the copy's pass on this CPU and build (amd64 with SSE4.2 and
// PCLMULQDQ, without the purego tag). Where they do not, they are Checksum
// then copy, and a caller gains nothing by arranging its copy around them.
func ChecksumCopyFuses() bool { return crcAsm }

// ChecksumCopyCold is ChecksumCopy for a destination that is not in L1,
// such as the next bytes of a log: the 512-bit folding kernel asks for each
// destination line for ownership (PREFETCHW) 1 KiB ahead of its store, so
// the line's read from L2 or L3 overlaps the folding instead of holding the
// store up. Into a log-sized ring that takes 5-10 % off a 16 KiB batch on
// Intel Xeon; into a buffer already in L1 the prefetches are wasted work and
// ChecksumCopy is the faster (BenchmarkChecksumCopyRing and
// BenchmarkCRCKernel, results/codec.md). The result and the bytes
// written are ChecksumCopy's; only the 512-bit kernel's plain rounds
// prefetch (not fold512mix's mixed rounds, which gain nothing by it on the
// AMD CPUs that run them), the other paths are ChecksumCopy's.
func ChecksumCopyCold(dst, src []byte) uint32 { return checksumCopy(dst, src, true) }

func checksumCopy(dst, src []byte, own bool) uint32 {
	dst = dst[:len(src)]
	if len(src) >= foldCopyMin && foldKernel != foldNone && !overlaps(dst, src) {
		return ^foldCopy(^uint32(0), dst, src, own)
	}
	if !crcAsm || len(src) == 0 || overlaps(dst, src) {
		c := Checksum(src)
		copy(dst, src)
		return c
	}
	return ^rawChecksumCopy(^uint32(0), dst, src)
}

// rawChecksumCopy is ChecksumCopy on a raw register (no inversions); len(dst)
// == len(src) > 0 and they do not overlap.
func rawChecksumCopy(reg uint32, dst, src []byte) uint32 {
	if len(src) >= 2*3*fusedStep {
		fusedOnce.Do(fusedConsts)
		for len(src) >= 3*fusedLong {
			reg = crcCopy3(reg, &dst[0], &src[0], fusedLong, fusedLongJoin.k1, fusedLongJoin.k2)
			dst, src = dst[3*fusedLong:], src[3*fusedLong:]
		}
		for len(src) >= 2*3*fusedStep {
			j := min(len(src)/(3*fusedStep), fusedSteps)
			k, c := fusedStep*j, &fusedStepJoins[j]
			reg = crcCopy3(reg, &dst[0], &src[0], k, c.k1, c.k2)
			dst, src = dst[3*k:], src[3*k:]
		}
		if len(src) == 0 {
			return reg
		}
	}
	return crcCopy1(reg, &dst[0], &src[0], len(src))
}

// overlaps reports whether two non-empty slices share memory.
func overlaps(a, b []byte) bool {
	a0, a1 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[len(a)-1]))
	b0, b1 := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))
	return a0 <= b1 && b0 <= a1
}
