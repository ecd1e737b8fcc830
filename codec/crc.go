package codec

import "github.com/mirrorpath/mirrorpath/internal/crc32c"

// The CRC-32C a batch carries is computed, fused with the append's copy and
// patched in O(1) by internal/crc32c (its kernels, their dispatch on the
// CPU's features and the pure-Go fallback); these are the entry points the
// other packages use, each one call that inlines into its caller.

// Checksum returns the CRC-32C (Castagnoli) of b: reflected polynomial
// 0x82F63B78, initial register and final XOR 0xFFFFFFFF, as Kafka's Crc32C.
func Checksum(b []byte) uint32 { return crc32c.Checksum(b) }

// ChecksumCopy copies src into dst and returns Checksum(src), reading each
// byte of src once where the hardware allows (crc32c.ChecksumCopy). dst must
// be at least len(src) bytes long (it panics otherwise, as a slice
// expression would). No allocation; O(len(src)).
func ChecksumCopy(dst, src []byte) uint32 { return crc32c.ChecksumCopy(dst, src) }

// ChecksumCopyCold is ChecksumCopy for a destination that is not in L1, such
// as the next bytes of a log (crc32c.ChecksumCopyCold says when it pays).
func ChecksumCopyCold(dst, src []byte) uint32 { return crc32c.ChecksumCopyCold(dst, src) }

// ChecksumCopyFuses reports whether ChecksumCopy and ChecksumCopyCold compute
// the CRC in the copy's pass on this CPU and build; where they do not, they
// are Checksum then copy.
func ChecksumCopyFuses() bool { return crc32c.ChecksumCopyFuses() }

// CRCKernel names the CRC-32C code Checksum and ChecksumCopy run on this CPU
// ("fold512mix+sse42", "fold512+sse42", "fold256+sse42", "sse42" or
// "hash/crc32"; crc32c.Kernel), so that a report can say which one its
// figures measured.
func CRCKernel() string { return crc32c.Kernel() }

// PatchCRC returns the CRC-32C of a message after a field that held old now
// holds new, given crc, the CRC before the change, and trailing, the number
// of message bytes after the field; old and new must have equal length. Its
// cost does not depend on trailing beyond O(log16 trailing) (crc32c.Patch).
// A crc that was wrong before stays wrong by the same error afterwards.
func PatchCRC(crc uint32, old, new []byte, trailing int) uint32 {
	return crc32c.Patch(crc, old, new, trailing)
}
