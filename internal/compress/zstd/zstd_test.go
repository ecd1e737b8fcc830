package zstd

import (
	"bytes"
	"errors"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// FuzzDecode holds Decode to klauspost/compress's DecodeAll with the same
// window cap: equal output where both accept, and within the limit always.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(nil, []byte("hello, zstd")), uint16(100))
	f.Add(Encode(nil, bytes.Repeat([]byte("ab"), 5000)), uint16(9999))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, uint16(10))
	ref, err := kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderMaxWindow(MaxWindow), kzstd.WithDecoderMaxMemory(MaxWindow))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte, limit uint16) {
		out, err := Decode(nil, src, int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
		want, refErr := ref.DecodeAll(src, nil)
		switch {
		case err == nil && refErr != nil:
			t.Fatalf("accepted what the library refuses (%v)", refErr)
		case err == nil && !bytes.Equal(out, want):
			t.Fatalf("decoded %d bytes, the library %d", len(out), len(want))
		case errors.Is(err, compress.ErrLimit) && refErr == nil && len(want) <= int(limit):
			t.Fatalf("limit error on %d bytes under the limit %d", len(want), limit)
		}
	})
}
