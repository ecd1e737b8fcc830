package crc32c

// foldKind names a CRC-32C folding kernel (fold_amd64.s).
type foldKind uint8

const (
	foldNone   foldKind = iota // hash/crc32 (SSE4.2 on amd64), copy.go's fused loop
	fold256                    // VPCLMULQDQ on 256-bit registers
	fold512                    // VPCLMULQDQ on 512-bit registers
	fold512mix                 // fold512 beside four CRC32 instruction streams (mixed rounds)
)

func (k foldKind) String() string {
	switch k {
	case fold256:
		return "fold256"
	case fold512:
		return "fold512"
	case fold512mix:
		return "fold512mix"
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

// The rounds of fold512mix. Where a carry-less multiply issues once every
// two cycles whatever the register width, as measured on AMD Zen 5, the
// 512-bit kernel is bound by its multiplies at 16 bytes a cycle and the
// CRC32 instruction's units stand idle; fold512mix gives them four streams
// of their own. From mixMin bytes on, crcFold512 and crcFoldCopy512 cut the
// input into rounds of up to mixIters steps; a round of m steps is four
// streams of mixChunk·m bytes followed by 256·m bytes of folding, and each
// step folds 256 bytes (eight multiplies, sixteen cycles) while it feeds
// mixChunk bytes of every stream to the CRC32 instruction (five words a
// stream, three cycles apart: fifteen cycles). The design note of
// fold_amd64.s says how a round's streams join the folded bytes.
const (
	mixIters = 8
	mixChunk = 40
	mixStep  = 256 + 4*mixChunk // bytes of a step
	mixRound = mixIters * mixStep

	// mixMin is the length, counted after the kernels' alignment prologue,
	// from which they run mixed rounds: three steps, the first multiple of
	// mixStep at or above foldAlignMin, from which the prologue runs (the
	// rounds then keep its alignment). Against fold512 alone on AMD EPYC
	// (BenchmarkCRCLengths, unaligned source, results/codec.md): 1664 bytes
	// 38.5 against 39.2 ns, 2496 bytes 49.1 against 67.4 ns, 3327 bytes 59.0
	// against 86.9 ns.
	mixMin = 3 * mixStep

	// mixCopyMax is the length past which crcFoldCopy512 keeps to its plain
	// rounds: from 64 KiB on the copy is bound by L2 and both run at the
	// same speed, and at 1 MiB, L3-bound, the mixed rounds' five read
	// streams are 10 % slower (results/codec.md).
	mixCopyMax = 512 << 10
)

// The assembly writes these numbers out: five words a stream and step, the
// quotient CX/mixStep as ((CX>>5)·79)>>10 under mixRound (TestMixSteps).
// Whole rounds keep the 64-byte alignment the kernels start from.
const (
	_ = uint(mixChunk-40) + uint(40-mixChunk)
	_ = uint(mixStep-416) + uint(416-mixStep)
	_ = uint(mixRound%64) + uint(-(mixRound % 64))
	_ = uint(mixMin - foldAlignMin)
)
