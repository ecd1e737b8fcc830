package codec

import (
	"sync"
	"unsafe"
)

// Design note: CRC and copy in one pass.
//
// Appending a batch reads its bytes twice: once for the CRC-32C check and once
// to copy them into the log. ChecksumCopy does both in one pass: each word is
// loaded once, fed to the CRC instruction and stored. On amd64 the CRC32
// instruction has a latency of 3 cycles and a throughput of 1, so, as
// hash/crc32 does, the bytes are cut into three adjacent streams of k bytes
// whose registers advance side by side; the copy's loads and stores go to
// other ports and hide behind the CRC chain. The three registers are then
// joined with the CRC's linearity:
//
//	raw(r, A‖B‖C) = zext_k(zext_k(raw(r, A)) ^ raw(0, B)) ^ raw(0, C)
//
// where zext_k advances a register over k zero bytes: a fixed linear map,
// applied with four byte-table lookups (zeroOp). Whatever is too short for
// three streams goes through a one-stream loop of 8-byte words, then bytes.

// Stream lengths of the three-way loop: fusedLong (hash/crc32's) while the
// bytes last, then one or more rounds of fusedStep·j bytes per stream (j ≤
// fusedSteps) for the rest; both multiples of the kernel's 32-byte step.
// What is left under 2·3·fusedStep bytes goes through the one-stream loop: a
// three-way round of one step costs more in the joining lookups than it
// saves (about 1 ns more at 100 bytes).
const (
	fusedLong  = 1344
	fusedStep  = 32
	fusedSteps = 6
)

var (
	fusedOnce   sync.Once
	fusedLongOp zeroOp
	fusedStepOp [fusedSteps + 1]zeroOp // [j] advances over fusedStep·j bytes; [0] unused
)

// fusedTables builds the zext maps of the stream lengths from the images of
// the 32 basis registers.
func fusedTables() {
	var zeros [fusedLong]byte
	build := func(op *zeroOp, k int) {
		var col [32]uint32
		for bit := range col {
			col[bit] = rawCRC(1<<bit, zeros[:k])
		}
		op.fromColumns(&col)
	}
	build(&fusedLongOp, fusedLong)
	for j := 1; j <= fusedSteps; j++ {
		build(&fusedStepOp[j], fusedStep*j)
	}
}

// ChecksumCopy copies src into dst and returns Checksum(src), reading each
// byte of src once where the hardware allows (amd64 with SSE4.2); elsewhere it
// is Checksum then copy. dst must be at least len(src) bytes long (it panics
// otherwise, as a slice expression would); if dst and src overlap the result
// is that of Checksum(src) followed by copy(dst, src). No allocation.
func ChecksumCopy(dst, src []byte) uint32 {
	dst = dst[:len(src)]
	if !fusedCRC || len(src) == 0 || overlaps(dst, src) {
		c := Checksum(src)
		copy(dst, src)
		return c
	}
	return ^rawChecksumCopy(^uint32(0), dst, src)
}

// rawChecksumCopy is ChecksumCopy on a raw register (no inversions); len(dst)
// == len(src) > 0 and they do not overlap.
func rawChecksumCopy(reg uint32, dst, src []byte) uint32 {
	if len(src) >= 2*3*fusedStep {
		fusedOnce.Do(fusedTables)
		for len(src) >= 3*fusedLong {
			a, b, c := crcCopy3(reg, 0, 0, &dst[0], &src[0], fusedLong)
			reg = fusedLongOp.apply(fusedLongOp.apply(a)^b) ^ c
			dst, src = dst[3*fusedLong:], src[3*fusedLong:]
		}
		for len(src) >= 2*3*fusedStep {
			j := min(len(src)/(3*fusedStep), fusedSteps)
			k, op := fusedStep*j, &fusedStepOp[j]
			a, b, c := crcCopy3(reg, 0, 0, &dst[0], &src[0], k)
			reg = op.apply(op.apply(a)^b) ^ c
			dst, src = dst[3*k:], src[3*k:]
		}
		if len(src) == 0 {
			return reg
		}
	}
	return crcCopy1(reg, &dst[0], &src[0], len(src))
}

// overlaps reports whether two non-empty slices share memory.
func overlaps(a, b []byte) bool {
	a0, a1 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&a[len(a)-1]))
	b0, b1 := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))
	return a0 <= b1 && b0 <= a1
}
