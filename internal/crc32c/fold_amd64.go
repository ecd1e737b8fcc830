//go:build !purego

package crc32c

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Checksum returns the CRC-32C (Castagnoli) of b: reflected polynomial
// 0x82F63B78, initial register and final XOR 0xFFFFFFFF, as Kafka's Crc32C.
// From foldMin bytes on, where the CPU has them, by the folding kernels of
// fold_amd64.s; below, by the CRC32 instruction; one call either way (it
// inlines into its callers, the choice is made in crc32cUpdate).
func Checksum(b []byte) uint32 { return ^crc32cUpdate(^uint32(0), unsafe.SliceData(b), len(b)) }

// crc32cUpdate is the raw CRC-32C register after the n bytes at p, from reg.
//
//go:noescape
func crc32cUpdate(reg uint32, p *byte, n int) uint32

// crc32cStd is crc32cUpdate where no folding kernel applies and the CRC32
// instruction's one-stream loop is not used: from crc3Min bytes on, with
// SSE4.2 and PCLMULQDQ, ChecksumCopy's three-stream loop without the copy
// (rawChecksum3); else hash/crc32.
//
//lint:ignore U1000 crc32cUpdate jumps to it.
func crc32cStd(reg uint32, p *byte, n int) uint32 {
	if crcAsm && n >= crc3Min {
		return rawChecksum3(reg, unsafe.Slice(p, n))
	}
	return rawCRC(reg, unsafe.Slice(p, n))
}

// crc3Min is the length from which crc32cStd runs three streams: that at
// which crc32cUpdate stops running its own one-stream loop (foldMin256).
// hash/crc32 runs one stream up to 503 bytes and joins its three with
// table lookups (results/codec.md).
const crc3Min = foldMin256

// rawChecksum3 is rawChecksumCopy's loop without the copy: rounds of three
// fusedLong-byte streams (crc3) while they fit, then one round of three
// streams as long as crc3Steps allows, then crc32cUpdate's one-stream loop
// for the rest (under 3·fusedStep bytes). One long round rather than
// ChecksumCopy's rounds of at most fusedSteps: the first stream of a round
// waits for the join that ends the round before it. len(b) ≥ 3·fusedStep.
func rawChecksum3(reg uint32, b []byte) uint32 {
	crc3Once.Do(crc3Consts)
	for len(b) >= 3*fusedLong {
		reg = crc3(reg, &b[0], fusedLong, crc3LongJoin.k1, crc3LongJoin.k2)
		b = b[3*fusedLong:]
	}
	if j := min(len(b)/(3*fusedStep), crc3Steps); j > 0 {
		k, c := fusedStep*j, &crc3Joins[j]
		reg = crc3(reg, &b[0], k, c.k1, c.k2)
		b = b[3*k:]
	}
	if len(b) == 0 {
		return reg
	}
	return crc32cUpdate(reg, &b[0], len(b)) // under foldMin256: its own loop
}

// crc3Steps bounds rawChecksum3's round after its fusedLong rounds: streams
// of up to fusedStep·crc3Steps = fusedLong bytes, all that is left under
// 3·fusedLong.
const crc3Steps = fusedLong / fusedStep

var (
	crc3Once     sync.Once
	crc3LongJoin joinConsts
	crc3Joins    [crc3Steps + 1]joinConsts // [j] for fusedStep·j bytes; [0] unused
)

func crc3Consts() {
	crc3LongJoin = joinFor(fusedLong)
	for j := 1; j <= crc3Steps; j++ {
		crc3Joins[j] = joinFor(fusedStep * j)
	}
}

// foldKernel is the folding kernel Checksum and ChecksumCopy use from
// foldMin bytes on (fold_amd64.s): where AVX-512 and VPCLMULQDQ are
// there, the 512-bit one, with mixed rounds (fold512mix) on AMD's CPUs,
// else none (the SSE4.2 paths). The 256-bit kernel is selectable (tests,
// benchmarks) but not chosen: on the CPUs that have its instructions and
// AVX-512 it is never the faster (results/codec.md).
var foldKernel = bestFold(isAMD())

// bestFold chooses the kernel. On AMD Zen 5 a carry-less multiply issues
// once every two cycles at any width while the CRC32 instruction issues
// more than twice a cycle, so fold512mix, which keeps both busy, is the
// faster from mixMin bytes on; on Intel's AVX-512 CPUs the multiplies
// issue every cycle and fold512 alone is measured (results/codec.md).
func bestFold(amd bool) foldKind {
	switch {
	case !foldSupported(fold512):
		return foldNone
	case amd:
		return fold512mix
	}
	return fold512
}

// isAMD reports whether CPUID's vendor string is "AuthenticAMD".
func isAMD() bool {
	_, b, c, d := cpuid(0, 0)
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163 // "Auth" "enti" "cAMD"
}

// cpuid runs the CPUID instruction.
func cpuid(leaf, sub uint32) (a, b, c, d uint32)

// foldSupported reports whether this CPU runs kernel k.
func foldSupported(k foldKind) bool {
	switch k {
	case foldNone:
		return true
	case fold256:
		// x/sys/cpu reports VPCLMULQDQ only where the OS enables AVX-512
		// state; the kernel itself needs only AVX2 and VPCLMULQDQ.
		return cpu.X86.HasSSE42 && cpu.X86.HasAVX2 && cpu.X86.HasAVX512VPCLMULQDQ
	case fold512, fold512mix:
		return cpu.X86.HasSSE42 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ
	}
	return false
}

// foldTable returns the kernels' constant table foldK<>, for the test that
// recomputes it.
func foldTable() *[14]uint64

// mixTable returns the mixed rounds' constant table mixK<>.
func mixTable() *[64]uint64

// crcFold512 returns the raw CRC-32C register after the n ≥ 64 bytes at p,
// started from reg; from mixMin bytes on, in mixed rounds where foldKernel
// is fold512mix.
//
//lint:ignore U1000 crc32cUpdate jumps to it.
//go:noescape
func crcFold512(reg uint32, p *byte, n int) uint32

// crcFoldCopy512 is crcFold512 over src that also copies the n ≥ 256 bytes
// to dst (no overlap); with own it requests the destination's lines for
// ownership ahead of its stores (ChecksumCopyCold).
//
//go:noescape
func crcFoldCopy512(reg uint32, dst, src *byte, n int, own bool) uint32

// crcFold256 is crcFold512 on 256-bit registers, n ≥ 128.
//
//lint:ignore U1000 crc32cUpdate jumps to it.
//go:noescape
func crcFold256(reg uint32, p *byte, n int) uint32

// crcFoldCopy256 is crcFoldCopy512 on 256-bit registers, n ≥ 128.
//
//go:noescape
func crcFoldCopy256(reg uint32, dst, src *byte, n int) uint32
