//go:build !amd64 || purego

package codec

import "unsafe"

// fusedCRC: no fused kernel here; ChecksumCopy is Checksum then copy.
const fusedCRC = false

// The kernels are never called where fusedCRC is false; these keep the
// package building and say what they compute.
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
