package snappy

import (
	"bytes"
	"errors"
	"testing"

	ksnappy "github.com/klauspost/compress/snappy"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// TestEncodeChunks: Encode's framing is the xerial header and 32 KiB chunks,
// and Decode reads it back; the same bytes as one raw block decode too.
func TestEncodeChunks(t *testing.T) {
	raw := bytes.Repeat([]byte("xerial snappy "), 5000) // 70 KB: three chunks
	enc := Encode(nil, raw)
	if !bytes.HasPrefix(enc, Magic) || be.Uint32(enc[8:]) != 1 || be.Uint32(enc[12:]) != 1 {
		t.Fatalf("header % x", enc[:headerSize])
	}
	chunks := 0
	for rest := enc[headerSize:]; len(rest) > 0; chunks++ {
		rest = rest[4+be.Uint32(rest):]
	}
	if chunks != 3 {
		t.Fatalf("%d chunks, want 3", chunks)
	}
	for name, src := range map[string][]byte{"xerial": enc, "raw block": ksnappy.Encode(nil, raw)} {
		out, err := Decode(nil, src, len(raw))
		if err != nil || !bytes.Equal(out, raw) {
			t.Fatalf("%s: %v, %d bytes", name, err, len(out))
		}
		if _, err := Decode(nil, src, len(raw)-1); !errors.Is(err, compress.ErrLimit) {
			t.Fatalf("%s one byte under: %v", name, err)
		}
	}
}

// FuzzDecode: any input decodes within the limit or fails, never panics;
// what Encode wrote decodes to what went in, whatever Tail counts.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello"), []byte{}, uint16(100))
	f.Add(bytes.Repeat([]byte{1}, 40000), []byte{0, 1}, uint16(65535))
	f.Fuzz(func(t *testing.T, raw, tail []byte, limit uint16) {
		out, err := Decode(nil, append(Encode(nil, raw), tail...), int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
		if len(tail) < 4 && len(raw) <= int(limit) && (err != nil || !bytes.Equal(out, raw)) {
			t.Fatalf("round trip with a %d-byte tail: %v", len(tail), err)
		}
		if len(tail) < 4 && Tail(append(Encode(nil, raw), tail...)) != len(tail) {
			t.Fatalf("Tail does not count the %d-byte tail", len(tail))
		}
		out, _ = Decode(nil, raw, int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
	})
}
