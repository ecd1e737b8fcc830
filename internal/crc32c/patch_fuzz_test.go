package crc32c

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// FuzzPatchCRC checks the O(1) patch against a full recompute by
// hash/crc32: for any message, field position and replacement,
// Patch(crc(old)) == crc(new), and a CRC that was wrong stays wrong by the
// same error; an 8-byte field's patch from its two values as words
// (PatchWord) gives the same.
func FuzzPatchCRC(f *testing.F) {
	f.Add([]byte("123456789abcdefghijklmnop"), uint16(3), uint64(0xdeadbeef), uint8(8), uint32(0))
	f.Add(make([]byte, 4000), uint16(22), uint64(1), uint8(8), uint32(1))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint16(0), uint64(0xff), uint8(1), uint32(0x80000000))
	f.Add(make([]byte, 16400), uint16(22), uint64(1<<63|5<<31|7), uint8(7), uint32(0))
	f.Fuzz(func(t *testing.T, msg []byte, at uint16, val uint64, width uint8, crcErr uint32) {
		w := int(width%8) + 1
		if len(msg) < w {
			return
		}
		off := int(at) % (len(msg) - w + 1)
		var nv [8]byte
		binary.BigEndian.PutUint64(nv[:], val)
		stored := crc32.Checksum(msg, stdCastagnoli) ^ crcErr
		old := bytes.Clone(msg[off : off+w])
		got := Patch(stored, old, nv[:w], len(msg)-off-w)
		copy(msg[off:], nv[:w])
		want := crc32.Checksum(msg, stdCastagnoli) ^ crcErr
		if got != want {
			t.Fatalf("patch %#x, recompute %#x (len %d, off %d, width %d)", got, want, len(msg), off, w)
		}
		if w == 8 { // the word form SetProducerID and SetMaxTimestamp use
			if gw := PatchWord(stored, binary.BigEndian.Uint64(old), val, len(msg)-off-w); gw != want {
				t.Fatalf("word patch %#x, recompute %#x (len %d, off %d)", gw, want, len(msg), off)
			}
		}
	})
}
