// Package crc32c computes the CRC-32C (Castagnoli) Kafka's record batches
// carry: Checksum, ChecksumCopy (the CRC computed in the pass that copies the
// bytes), and Patch, the CRC after a fixed-width field changes, in time
// independent of the message length.
//
// On amd64 the kernels are assembly: the SSE4.2 CRC32 instruction in three
// streams joined by carry-less multiplies (copy.go, mul.go), and, where the
// CPU has VPCLMULQDQ and AVX-512, folding kernels on 256- and 512-bit
// registers (fold.go, fold_amd64.s), chosen once at start-up from the CPU's
// features (Kernel names the choice). Elsewhere, and under the purego build
// tag, hash/crc32 computes the CRC and Patch uses tables; every kernel is
// held to hash/crc32 by the tests and fuzz targets of this package.
//
// Nothing here allocates after the first call of each entry point (which
// builds its constant tables once).
package crc32c
