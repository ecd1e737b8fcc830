package codec

// foldKind names a CRC-32C folding kernel (crcfold_amd64.s).
type foldKind uint8

const (
	foldNone foldKind = iota // hash/crc32 (SSE4.2 on amd64), crccopy.go's fused loop
	fold256                  // VPCLMULQDQ on 256-bit registers
	fold512                  // VPCLMULQDQ on 512-bit registers
)

func (k foldKind) String() string {
	switch k {
	case fold256:
		return "fold256"
	case fold512:
		return "fold512"
	}
	return "sse42"
}

// foldMin is the length from which Checksum folds with the 512-bit kernel
// (one accumulator up to 256 bytes, four from there); below it the CRC32
// instruction's loop is as fast (BenchmarkCRCLengths).
const foldMin = 64

// foldMin256 is the length from which Checksum folds with the 256-bit
// kernel, and foldCopyMin that from which ChecksumCopy folds with either:
// four full registers of input.
const (
	foldMin256  = 256
	foldCopyMin = 256
)

// foldAlignMin is the length from which the 512-bit kernels first bring
// their source (Checksum) or destination (ChecksumCopy) to a 64-byte
// boundary with the CRC32 instruction (up to 63 bytes, a few ns), so that
// their vector loads or stores do not split cache lines; it must leave at
// least foldMin256 bytes.
const foldAlignMin = 1024

const _ = uint(foldAlignMin - foldMin256 - 63) // foldAlignMin leaves foldMin256 bytes

// foldCopy is foldCRC that also copies src to dst (equal lengths, no
// overlap); own is ChecksumCopyCold's prefetch for ownership, which only
// the 512-bit kernel has.
func foldCopy(reg uint32, dst, src []byte, own bool) uint32 {
	if foldKernel == fold256 {
		return crcFoldCopy256(reg, &dst[0], &src[0], len(src))
	}
	return crcFoldCopy512(reg, &dst[0], &src[0], len(src), own)
}
