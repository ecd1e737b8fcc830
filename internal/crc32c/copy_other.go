//go:build !amd64 || purego

package crc32c

import "unsafe"

// crcAsm: no kernels here; ChecksumCopy is Checksum then copy and Patch
// uses its tables.
const crcAsm = false

// The package never calls the kernels where crcAsm is false; these keep it
// building, say what the kernels compute, and let TestPatch8 and the
// ChecksumCopy tests run here too.
func crcCopy3(reg uint32, dst, src *byte, k int, k1, k2 uint64) uint32 {
	d, s := unsafe.Slice(dst, 3*k), unsafe.Slice(src, 3*k)
	copy(d, s)
	return rawCRC(reg, s)
}

func crcCopy1(reg uint32, dst, src *byte, n int) uint32 {
	d, s := unsafe.Slice(dst, n), unsafe.Slice(src, n)
	copy(d, s)
	return rawCRC(reg, s)
}

func patch8(crc uint32, delta uint64, c0, c1, c2, c3 uint32) uint32 {
	return patch8Go(crc, delta, c0, c1, c2, c3)
}
