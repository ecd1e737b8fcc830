//go:build !purego

package crc32c

import "golang.org/x/sys/cpu"

// crcAsm: the CRC32 instruction (SSE4.2) and carry-less multiply are there:
// ChecksumCopy fuses, Patch multiplies.
var crcAsm = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ

// crcCopy3 copies 3k bytes from src to dst and returns the raw CRC-32C
// register after them, started from reg: three k-byte streams joined with
// the multipliers k1 = x^(8k-33) and k2 = x^(16k-33) mod P. k is a positive
// multiple of 32.
//
//go:noescape
func crcCopy3(reg uint32, dst, src *byte, k int, k1, k2 uint64) uint32

// crc3 is crcCopy3 without the copy: the raw CRC-32C register after the 3k
// bytes at p, started from reg (Checksum without a folding kernel).
//
//go:noescape
func crc3(reg uint32, p *byte, k int, k1, k2 uint64) uint32

// crcCopy1 copies n > 0 bytes from src to dst and returns the raw CRC-32C
// register after them, started from reg.
//
//go:noescape
func crcCopy1(reg uint32, dst, src *byte, n int) uint32

// patch8 returns crc ^ zext_n(raw(0, delta)), delta being 8 bytes read little
// endian, given zextConsts(n): the CRC change of an 8-byte field that changed
// by delta with n bytes after it. Three register products, then one more.
//
//go:noescape
func patch8(crc uint32, delta uint64, c0, c1, c2, c3 uint32) uint32
