//go:build !purego

package codec

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// TestWithoutCRCInstructions runs ChecksumCopy and PatchCRC as an amd64 CPU
// without SSE4.2, PCLMULQDQ or VPCLMULQDQ would: the two-pass and table paths, held to
// the same references as the kernels.
func TestWithoutCRCInstructions(t *testing.T) {
	saved := crcAsm
	crcAsm = false
	defer func() { crcAsm = saved }()
	defer setFold(foldNone)()
	if ChecksumCopyFuses() {
		t.Fatal("ChecksumCopyFuses without the CRC instructions")
	}
	src := make([]byte, 9000)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	dst := make([]byte, len(src))
	for _, n := range []int{0, 1, 100, 1024, 4031, 4032, 9000} {
		want := crc32.Checksum(src[:n], stdCastagnoli)
		if got := Checksum(src[:n]); got != want {
			t.Fatalf("len %d: Checksum %#x, want %#x", n, got, want)
		}
		if got := ChecksumCopy(dst[:n], src[:n]); got != want || !bytes.Equal(dst[:n], src[:n]) {
			t.Fatalf("len %d: crc %#x, want %#x (or the copy differs)", n, got, want)
		}
	}
	old, nw := src[100:108], []byte{1, 2, 3, 4, 5, 6, 7, 8}
	crc := Checksum(src)
	got := PatchCRC(crc, bytes.Clone(old), nw, len(src)-108)
	copy(src[100:], nw)
	if want := Checksum(src); got != want {
		t.Fatalf("patch %#x, recompute %#x", got, want)
	}
	TestWordSettersEqualRecompute(t)
}
