package gzip

import (
	"bytes"
	"errors"
	"io"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// TestEncodeDecode: one member round-trips, a second member is read after
// it (concatenated members), and the limit holds.
func TestEncodeDecode(t *testing.T) {
	raw := bytes.Repeat([]byte("gzip member "), 3000)
	one, err := Encode(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	two, _ := Encode(bytes.Clone(one), []byte("second"))
	for name, c := range map[string]struct {
		src  []byte
		want []byte
	}{"one member": {one, raw}, "two members": {two, append(bytes.Clone(raw), "second"...)}} {
		out, end, err := DecodeEnd(nil, c.src, 1<<20)
		if err != nil || !bytes.Equal(out, c.want) || end != len(c.src) {
			t.Fatalf("%s: %v, %d bytes, end %d of %d", name, err, len(out), end, len(c.src))
		}
	}
	if _, err := Decode(nil, one, len(raw)-1); !errors.Is(err, compress.ErrLimit) {
		t.Fatalf("one byte under the limit: %v", err)
	}
}

// FuzzDecode holds Decode to klauspost/compress's gzip reader on single
// members with nothing after them (where the JDK's and RFC 1952's readers
// agree): what the library reads without error, Decode reads the same,
// within the limit.
func FuzzDecode(f *testing.F) {
	m, _ := Encode(nil, []byte("hello, gzip"))
	f.Add(m, uint16(100))
	f.Add(m[:len(m)-1], uint16(100))
	f.Fuzz(func(t *testing.T, src []byte, limit uint16) {
		out, err := Decode(nil, src, int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
		br := bytes.NewReader(src)
		r, rerr := kgzip.NewReader(br)
		if rerr != nil {
			return
		}
		r.Multistream(false)
		want, rerr := io.ReadAll(io.LimitReader(r, 1<<16))
		if rerr != nil || r.Close() != nil || br.Len() != 0 || len(want) > int(limit) {
			return
		}
		if err != nil || !bytes.Equal(out, want) {
			t.Fatalf("library reads %d bytes, Decode %d (%v)", len(want), len(out), err)
		}
	})
}
