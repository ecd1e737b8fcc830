package crc32c

// CRCKernel names the CRC-32C code Checksum and ChecksumCopy dispatch to on
// this CPU, so that a report can say which one its figures measured:
// "fold512mix", "fold512" or "fold256" (VPCLMULQDQ folding, the first with
// CRC32 instruction streams beside it, fold_amd64.s) from the lengths
// that use it, with the SSE4.2 CRC32 instruction and the PCLMULQDQ
// fused copy below; "sse42" (CRC32 instruction, PCLMULQDQ fused copy); or
// "hash/crc32" where no kernel of this package runs (another GOARCH, the
// purego tag, a CPU without SSE4.2 and PCLMULQDQ).
func Kernel() string {
	switch {
	case foldKernel != foldNone:
		return foldKernel.String() + "+sse42"
	case crcAsm:
		return "sse42"
	}
	return "hash/crc32"
}
