//go:build !amd64 || purego

package crc32c

import (
	"hash/crc32"
	"unsafe"
)

// Checksum returns the CRC-32C (Castagnoli) of b: reflected polynomial
// 0x82F63B78, initial register and final XOR 0xFFFFFFFF, as Kafka's Crc32C.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// foldKernel: no folding kernels here; Checksum is hash/crc32's.
const foldKernel = foldNone

func foldSupported(k foldKind) bool { return k == foldNone }

// The package never calls these where foldKernel is foldNone; they keep it
// building and say what the kernels compute.
func crcFoldCopy512(reg uint32, dst, src *byte, n int, _ bool) uint32 {
	return crcFoldCopy256(reg, dst, src, n)
}

func crcFoldCopy256(reg uint32, dst, src *byte, n int) uint32 {
	d, s := unsafe.Slice(dst, n), unsafe.Slice(src, n)
	copy(d, s)
	return rawCRC(reg, s)
}
