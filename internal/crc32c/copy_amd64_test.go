//go:build !purego

package crc32c

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// TestWithoutCRCInstructions runs ChecksumCopy and Patch as an amd64 CPU
// without SSE4.2, PCLMULQDQ or VPCLMULQDQ would: the two-pass and table paths, held to
// the same references as the kernels, the word patch (codec's SetProducerID
// and SetMaxTimestamp) included.
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
	got := Patch(crc, bytes.Clone(old), nw, len(src)-108)
	copy(src[100:], nw)
	if want := Checksum(src); got != want {
		t.Fatalf("patch %#x, recompute %#x", got, want)
	}
	for _, n := range []int{8, 9, 307, 65588, 1 << 20} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i*13 + i>>8)
		}
		crc := Checksum(msg)
		oldWord, newWord := binary.BigEndian.Uint64(msg), uint64(0x8000_0000_0000_0005)+uint64(n)
		binary.BigEndian.PutUint64(msg, newWord)
		if got, want := PatchWord(crc, oldWord, newWord, n-8), Checksum(msg); got != want {
			t.Fatalf("len %d: word patch %#x, recompute %#x", n, got, want)
		}
	}
}
