//go:build !purego

package codec

import "golang.org/x/sys/cpu"

// fusedCRC: the CRC32 instruction (SSE4.2) and carry-less multiply are there.
var fusedCRC = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ

// crcCopy3 copies 3k bytes from src to dst and returns the raw CRC-32C
// register after them, started from reg: three k-byte streams joined with
// the multipliers k1 = x^(8k-33) and k2 = x^(16k-33) mod P. k is a positive
// multiple of 32.
//
//go:noescape
func crcCopy3(reg uint32, dst, src *byte, k int, k1, k2 uint64) uint32

// crcCopy1 copies n > 0 bytes from src to dst and returns the raw CRC-32C
// register after them, started from reg.
//
//go:noescape
func crcCopy1(reg uint32, dst, src *byte, n int) uint32
