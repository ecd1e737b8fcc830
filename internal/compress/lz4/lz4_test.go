package lz4

import (
	"bytes"
	"errors"
	"testing"

	plz4 "github.com/pierrec/lz4/v4"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// lz4Frame builds one frame by hand: flg, bd, the blocks as given (each
// with its size word), the end mark, then tail.
func lz4Frame(flg, bd byte, contentSize []byte, blocks [][]byte, tail []byte) []byte {
	f := le.AppendUint32(nil, frameMagic)
	f = append(f, flg, bd)
	f = append(f, contentSize...)
	f = append(f, byte(XXH32(f[4:])>>8))
	for _, b := range blocks {
		f = append(f, b...)
	}
	f = le.AppendUint32(f, 0)
	return append(f, tail...)
}

func storedBlock(p []byte, withSum bool) []byte {
	b := le.AppendUint32(nil, uint32(len(p))|storedBit)
	b = append(b, p...)
	if withSum {
		b = le.AppendUint32(b, XXH32(p))
	}
	return b
}

// TestKafkaLZ4Framing walks the frame descriptor and block rules of Kafka's
// Lz4BlockInputStream one by one.
func TestKafkaLZ4Framing(t *testing.T) {
	hello := []byte("hello, frame")
	ok := func(f []byte) bool {
		out, err := Decode(nil, f, 1<<20)
		if errors.Is(err, compress.ErrLimit) {
			t.Fatalf("a frame under the limit: %v", err)
		}
		return err == nil && bytes.Equal(out, hello)
	}
	cases := []struct {
		name string
		f    []byte
		want bool
	}{
		{"plain", lz4Frame(0x60, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil), true},
		{"block checksum", lz4Frame(0x70, 0x40, nil, [][]byte{storedBlock(hello, true)}, nil), true},
		{"content size skipped", lz4Frame(0x68, 0x40, []byte{99, 0, 0, 0, 0, 0, 0, 0}, [][]byte{storedBlock(hello, false)}, nil), true},
		{"content checksum present, unverified", lz4Frame(0x64, 0x70, nil, [][]byte{storedBlock(hello, false)}, []byte{1, 2, 3, 4}), true},
		{"content checksum cut", lz4Frame(0x64, 0x70, nil, [][]byte{storedBlock(hello, false)}, []byte{1, 2, 3}), false},
		{"trailing bytes ignored", lz4Frame(0x60, 0x40, nil, [][]byte{storedBlock(hello, false)}, []byte("zz")), true},
		{"dependent blocks", lz4Frame(0x40, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil), false},
		{"reserved FLG bit", lz4Frame(0x61, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil), false},
		{"version 0", lz4Frame(0x20, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil), false},
		{"BD code 3", lz4Frame(0x60, 0x30, nil, [][]byte{storedBlock(hello, false)}, nil), false},
		{"BD reserved bit", lz4Frame(0x60, 0xC0, nil, [][]byte{storedBlock(hello, false)}, nil), false},
		{"bad block checksum", lz4Frame(0x70, 0x40, nil, [][]byte{append(storedBlock(hello, false), 0, 0, 0, 0)}, nil), false},
		{"no end mark", lz4Frame(0x60, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil)[:7+4+len(hello)], false},
		{"empty", nil, false},
	}
	for _, c := range cases {
		if got := ok(c.f); got != c.want {
			t.Errorf("%s: accepted %v, Kafka %v", c.name, got, c.want)
		}
	}
	bad := lz4Frame(0x60, 0x40, nil, [][]byte{storedBlock(hello, false)}, nil)
	bad[6] ^= 1 // header checksum byte
	if ok(bad) {
		t.Error("bad descriptor checksum accepted")
	}
	big := lz4Frame(0x60, 0x40, nil, [][]byte{storedBlock(make([]byte, 64<<10+1), false)}, nil)
	if _, err := Decode(nil, big, 1<<20); err == nil || errors.Is(err, compress.ErrLimit) {
		t.Errorf("block over the 64 KiB maximum: %v", err)
	}
}

// TestKafkaLZ4LibraryFrames: frames pierrec/lz4's writer produces with
// every option Kafka accepts decode to what went in, block checksums and
// content checksums included (this also checks XXH32 against the library).
func TestKafkaLZ4LibraryFrames(t *testing.T) {
	raw := bytes.Repeat([]byte("kafka lz4 frame "), 20000) // 320 KB: several blocks
	for _, opts := range [][]plz4.Option{
		{plz4.BlockSizeOption(plz4.Block64Kb)},
		{plz4.BlockSizeOption(plz4.Block256Kb), plz4.BlockChecksumOption(true)},
		{plz4.BlockSizeOption(plz4.Block4Mb), plz4.ChecksumOption(false), plz4.SizeOption(uint64(len(raw)))},
		{plz4.BlockSizeOption(plz4.Block1Mb), plz4.CompressionLevelOption(plz4.Level9), plz4.BlockChecksumOption(true)},
	} {
		var buf bytes.Buffer
		w := plz4.NewWriter(&buf)
		if err := w.Apply(opts...); err != nil {
			t.Fatal(err)
		}
		w.Write(raw)
		w.Close()
		out, err := Decode(nil, buf.Bytes(), 1<<20)
		if err != nil || !bytes.Equal(out, raw) {
			t.Fatalf("%d options: %v, %d bytes", len(opts), err, len(out))
		}
	}
}

func TestXXH32Vectors(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02CC5D05,
		"a":   0x550D7456,
		"abc": 0x32D153FF,
		"Nobody inspects the spammish repetition": 0xE2293B2F,
	} {
		if got := XXH32([]byte(in)); got != want {
			t.Errorf("XXH32(%q) = %#08x, want %#08x", in, got, want)
		}
	}
}

// FuzzDecode: what Encode wrote decodes to what went in, whatever follows
// the frame (Kafka's reader never looks past the end mark), and Tail counts
// what follows; any input decodes within the limit or fails, and where
// Decode accepts a frame its content checksum, when present, is either
// right or reported by VerifyContentChecksum as ErrContentChecksum.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("hello, lz4"), []byte{}, uint16(100))
	f.Add(bytes.Repeat([]byte("abc"), 3000), []byte("tail"), uint16(65535))
	f.Fuzz(func(t *testing.T, raw, tail []byte, limit uint16) {
		enc, err := Encode(nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		src := append(enc, tail...)
		out, err := Decode(nil, src, int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
		if len(raw) <= int(limit) && (err != nil || !bytes.Equal(out, raw)) {
			t.Fatalf("round trip with a %d-byte tail: %v", len(tail), err)
		}
		if err == nil {
			if err := VerifyContentChecksum(src, out); err != nil {
				t.Fatalf("content checksum of an encoded frame: %v", err)
			}
			if n := Tail(src); n != len(tail) {
				t.Fatalf("Tail %d, the tail is %d bytes", n, len(tail))
			}
		}
		out, err = Decode(nil, raw, int(limit))
		if len(out) > int(limit)+1 {
			t.Fatalf("%d bytes out past the limit %d", len(out), limit)
		}
		if err == nil {
			if err := VerifyContentChecksum(raw, out); err != nil && !errors.Is(err, ErrContentChecksum) && !errors.Is(err, ErrFrame) {
				t.Fatalf("VerifyContentChecksum: unclassified %v", err)
			}
		}
	})
}
