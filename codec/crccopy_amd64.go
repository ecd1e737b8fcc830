//go:build !purego

package codec

import "golang.org/x/sys/cpu"

// fusedCRC: the CRC32 instruction is there (SSE4.2).
var fusedCRC = cpu.X86.HasSSE42

// crcCopy3 copies 3k bytes from src to dst and returns the raw CRC-32C
// registers of the three k-byte streams src[0:k], src[k:2k] and src[2k:3k],
// started from a, b and c. k is a positive multiple of 32.
//
//go:noescape
func crcCopy3(a, b, c uint32, dst, src *byte, k int) (ra, rb, rc uint32)

// crcCopy1 copies n > 0 bytes from src to dst and returns the raw CRC-32C
// register after them, started from reg.
//
//go:noescape
func crcCopy1(reg uint32, dst, src *byte, n int) uint32
