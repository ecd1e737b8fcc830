package crc32c

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPatchEqualsRecompute holds Patch, and its slow reference, to a full
// recompute for fields of 1 to 8 bytes at the front of messages of every
// nibble count of trailing length.
func TestPatchEqualsRecompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 15, 16, 17, 255, 256, 1003, 4096, 16*1024 - 21, 70000, 1 << 20} {
		msg := make([]byte, 8+size)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		crc := Checksum(msg)
		for w := 1; w <= 8; w++ {
			old := bytes.Clone(msg[:w])
			var nw [8]byte
			for i := range nw {
				nw[i] = byte(rng.Uint32())
			}
			patched := Patch(crc, old, nw[:w], len(msg)-w)
			copy(msg, nw[:w])
			want := Checksum(msg)
			if patched != want {
				t.Fatalf("size %d width %d: patch %#x, recompute %#x", size, w, patched, want)
			}
			if slow := patchSlow(crc, old, nw[:w], len(msg)-w); slow != want {
				t.Fatalf("size %d width %d: slow reference %#x, recompute %#x", size, w, slow, want)
			}
			crc = want
		}
	}
}

func TestZeroExtendLarge(t *testing.T) {
	// beyond 2^32 bytes the fast path composes repeated steps; compare the
	// algebra: zext(a+b) == zext_b(zext_a).
	r := uint32(0xdeadbeef)
	n := uint64(1)<<32 + 12345
	if zeroExtend(r, n) != zeroExtend(zeroExtend(r, 1<<32), 12345) {
		t.Fatal("zero extension is not additive beyond 2^32")
	}
}
