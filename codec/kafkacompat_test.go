package codec

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
)

// Batches on which our decoder once disagreed with Kafka's own record
// classes, each with what Kafka's DefaultRecordBatch returns for it. The CRC
// of each is valid, so only decompression and record reading decide.

// kafkaVerdict is what Kafka's reader makes of a batch: the record values in
// order, or failure.
type kafkaVerdict struct {
	values []string
	fails  bool
}

func checkKafkaVerdict(t *testing.T, name, batchHex string, want kafkaVerdict) {
	t.Helper()
	raw, err := hex.DecodeString(batchHex)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBatch(raw)
	if err != nil {
		t.Fatalf("%s: framing: %v", name, err)
	}
	if err := b.VerifyCRC(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	it, _, err := b.OpenRecords(nil, 1<<20)
	var got []string
	for err == nil {
		var r Record
		if err = it.Read(&r); err == nil {
			got = append(got, string(r.Value))
		}
	}
	if err == io.EOF {
		err = nil
	}
	switch {
	case want.fails && err == nil:
		t.Errorf("%s: Kafka fails the batch, we read %q", name, got)
	case want.fails && !errors.Is(err, ErrCorruption):
		t.Errorf("%s: want a corruption error, got %v", name, err)
	case !want.fails && err != nil:
		t.Errorf("%s: Kafka reads %q, we fail: %v", name, want.values, err)
	case !want.fails && !slices.Equal(got, want.values):
		t.Errorf("%s: Kafka reads %q, we read %q", name, want.values, got)
	}
	if _, cerr := b.Check(nil, 1<<20); (cerr != nil) != want.fails {
		t.Errorf("%s: Check: %v, Kafka fails: %v", name, cerr, want.fails)
	}
}

// TestKafkaLZ4ContentChecksumIgnored: Kafka's Lz4BlockInputStream reads the
// content checksum after the end mark without comparing it.
func TestKafkaLZ4ContentChecksumIgnored(t *testing.T) {
	checkKafkaVerdict(t, "wrong content checksum",
		"00000000000000000000004c00000000022bccd23f00030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d186440a7080000800e0000000102610000000000964098e9",
		kafkaVerdict{values: []string{"a"}})
}

// TestKafkaLZ4OneFrame: Kafka reads one frame; bytes after its end mark are
// never looked at, so records in a second frame do not exist for it.
func TestKafkaLZ4OneFrame(t *testing.T) {
	checkKafkaVerdict(t, "garbage after the end mark",
		"0000000000000000000000490000000002bd0d9ab100030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d18604082080000800e000000010261000000000000",
		kafkaVerdict{values: []string{"a"}})
	checkKafkaVerdict(t, "second record in a second frame",
		"00000000000000000000005f00000000026edd922c00030000000100000000000000000000000000000000ffffffffffffffffffffffffffff0000000204224d18604082080000800e000000010261000000000004224d18604082080000800e0000020102620000000000",
		kafkaVerdict{fails: true})
}

// TestKafkaGzipTail: Java's GZIPInputStream ignores what follows a member
// unless it reads as a further member's header; Go's gzip reader demands
// that every following byte be a member.
func TestKafkaGzipTail(t *testing.T) {
	checkKafkaVerdict(t, "short tail that starts like a gzip header",
		"000000000000000000000052000000000274a9965900010000000000000000000000000000000000000000ffffffffffffffffffffffffffff000000011f8b08000000000002ffe263606060644a6400040000ffffb62476b70800000000",
		kafkaVerdict{values: []string{"a"}})
}

func gzipMember(t *testing.T, p []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(p)
	w.Close()
	return buf.Bytes()
}

// TestKafkaGzipMembers walks GZIPInputStream's member rules; each case's
// expected outcome is reasoned from the JDK's code, and the literal
// simulation refJavaGzip must agree with it too.
func TestKafkaGzipMembers(t *testing.T) {
	hello, world := []byte("hello "), []byte("world")
	m1, m2 := gzipMember(t, hello), gzipMember(t, world)
	rng := rand.New(rand.NewPCG(3, 4))
	noise := make([]byte, 20000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	big := gzipMember(t, noise) // > 8 KiB compressed: the JDK's buffer refills
	hdr := m2[:10]
	// edge: a member whose deflate data ends fewer than 18 bytes before one
	// of the JDK's 8 KiB reads ends, so a 10-byte tail is partly unread and
	// available() > 0 makes the JDK parse it.
	var edge []byte
	var edgeN int
	for n := 16000; n < 20000 && edge == nil; n++ {
		m := gzipMember(t, noise[:n])
		end := len(m) - 8
		fetched := 10 + (end-10+8191)/8192*8192
		if fetched-end >= 0 && fetched-end < 18 {
			edge, edgeN = m, n
		}
	}
	if edge == nil {
		t.Fatal("no member ends next to an 8 KiB boundary")
	}
	reserved := bytes.Clone(m1)
	reserved[3] |= 0xe0
	cases := []struct {
		name string
		src  []byte
		want []byte // nil: fails
	}{
		{"one member", m1, hello},
		{"two members", cat(m1, m2), cat(hello, world)},
		{"reserved FLG bits are not checked", reserved, hello},
		{"garbage tail of 18 bytes", cat(m1, bytes.Repeat([]byte{7}, 18)), hello},
		{"garbage tail of 40 bytes", cat(m1, bytes.Repeat([]byte{7}, 40)), hello},
		{"bare header tail, all buffered: never parsed", cat(m1, hdr), hello},
		{"header and a bad member", cat(m1, hdr, bytes.Repeat([]byte{0}, 40)), nil},
		{"header with bad data past the JDK buffer", cat(big, hdr, make([]byte, 9000)), nil},
		{"cut second member", cat(m1, m2[:len(m2)-3], bytes.Repeat([]byte{0xff}, 20)), nil},
		{"bad trailer", cat(m1[:len(m1)-1], []byte{m1[len(m1)-1] ^ 1}), nil},
		{"cut trailer", m1[:len(m1)-2], nil},
		{"big member then garbage", cat(big, bytes.Repeat([]byte{9}, 100)), noise},
		{"bare header tail past the JDK buffer: parsed", cat(edge, hdr), nil},
		{"same member, garbage tail past the JDK buffer", cat(edge, bytes.Repeat([]byte{9}, 10)), noise[:edgeN]},
	}
	for _, c := range cases {
		got, err := gunzip(nil, c.src, 1<<20)
		ref, rerr := refJavaGzip(c.src, 1<<20)
		switch {
		case c.want == nil && err == nil:
			t.Errorf("%s: Kafka fails, we read %d bytes", c.name, len(got))
		case c.want == nil && !errors.Is(err, ErrCorruption):
			t.Errorf("%s: unclassified %v", c.name, err)
		case c.want != nil && (err != nil || !bytes.Equal(got, c.want)):
			t.Errorf("%s: Kafka reads %d bytes, we %d (%v)", c.name, len(c.want), len(got), err)
		}
		if (rerr == nil) != (c.want != nil) || (c.want != nil && !bytes.Equal(ref, c.want)) {
			t.Errorf("%s: the reference disagrees (%v)", c.name, rerr)
		}
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestKafkaSnappyTail: snappy-java's SnappyInputStream reads a chunk length
// cut short by the end of the stream as the end; 1-3 bytes after the last
// chunk are ignored.
func TestKafkaSnappyTail(t *testing.T) {
	checkKafkaVerdict(t, "two bytes after the last chunk",
		"00000000000000000000005000000000029b7a72d100020000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000182534e415050590000000001000000010000000a081c0e0000000102610000",
		kafkaVerdict{values: []string{"a"}})
	xerial := append(bytes.Clone(xerialMagic), 0, 0, 0, 1, 0, 0, 0, 1)
	blk := snappy.Encode(nil, []byte("abc"))
	chunk := append(be.AppendUint32(nil, uint32(len(blk))), blk...)
	for _, c := range []struct {
		name string
		src  []byte
		want string // "" with fails
		fail bool
	}{
		{"header only", xerial, "", false},
		{"one byte tail", cat(xerial, chunk, []byte{0}), "abc", false},
		{"three byte tail", cat(xerial, chunk, []byte{0, 0, 1}), "abc", false},
		{"four byte tail is a length", cat(xerial, chunk, []byte{0, 0, 0, 1}), "", true},
		{"version 0", cat(xerial[:8], []byte{0, 0, 0, 0, 0, 0, 0, 1}, chunk), "", true},
		{"negative version", cat(xerial[:8], []byte{0x80, 0, 0, 0, 0, 0, 0, 1}, chunk), "", true},
		{"magic, cut header: one raw block", xerial[:12], "", true},
		{"not the magic: one raw block", blk, "abc", false},
	} {
		out, err := unsnappy(nil, c.src, 1<<20)
		if c.fail != (err != nil) || (!c.fail && string(out) != c.want) {
			t.Errorf("%s: got %q, %v", c.name, out, err)
		}
	}
}

func TestVerifyLZ4ContentChecksum(t *testing.T) {
	good, err := AppendBatch(nil, BatchHeader{}, []Record{{Value: []byte("a")}}, CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	bad, _ := hex.DecodeString("00000000000000000000004c00000000022bccd23f00030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d186440a7080000800e0000000102610000000000964098e9")
	for _, c := range []struct {
		b    []byte
		want error
	}{{good, nil}, {bad, ErrLZ4ContentChecksum}} {
		out, err := Decompress(nil, Batch(c.b), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifyLZ4ContentChecksum(Batch(c.b), out); err != c.want {
			t.Errorf("got %v, want %v", err, c.want)
		}
	}
}

// TestKafkaZstdHuffmanDifference pins a known difference: the zstd frame in
// testdata (from libzstd's encoder, one bit flipped in its Huffman-coded
// literals) is decoded by libzstd 1.5.4, the decoder zstd-jni wraps for
// Kafka, and refused by klauspost/compress, which we use. We refuse it; see
// docs/kafka-differences.md. When the zstd command-line tool is installed the
// test also confirms that libzstd still accepts the frame.
func TestKafkaZstdHuffmanDifference(t *testing.T) {
	frame, err := os.ReadFile("testdata/zstd-huffman-libzstd-accepts.zst")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := AppendBatch(nil, BatchHeader{}, nil, CompressionNone)
	b := Batch(append(h, frame...))
	be.PutUint32(b[OffRecordsCount:], 1)
	be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
	b.SetAttributes(Attributes(CompressionZstd))
	if _, err := Decompress(nil, b, 1<<20); !errors.Is(err, ErrBadCompression) {
		t.Fatalf("klauspost/compress now gives %v: the difference is gone, update docs/kafka-differences.md", err)
	}
	if path, err := exec.LookPath("zstd"); err == nil {
		cmd := exec.Command(path, "-d", "-c", "-q")
		cmd.Stdin = bytes.NewReader(frame)
		if out, err := cmd.Output(); err != nil || len(out) != 2294 {
			t.Errorf("libzstd (%s) no longer decodes the frame to 2294 bytes: %d, %v", path, len(out), err)
		}
	} else {
		t.Log("zstd tool not installed: libzstd's side not re-checked")
	}
}

// TestIgnoredTail: the bytes Kafka's readers leave unread, counted on the
// issue's batches, and none on what the builder writes.
func TestIgnoredTail(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want int
	}{
		{"0000000000000000000000490000000002bd0d9ab100030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d18604082080000800e000000010261000000000000", 1},
		{"00000000000000000000005f00000000026edd922c00030000000100000000000000000000000000000000ffffffffffffffffffffffffffff0000000204224d18604082080000800e000000010261000000000004224d18604082080000800e0000020102620000000000", 23},
		{"000000000000000000000052000000000274a9965900010000000000000000000000000000000000000000ffffffffffffffffffffffffffff000000011f8b08000000000002ffe263606060644a6400040000ffffb62476b70800000000", 1},
		{"00000000000000000000005000000000029b7a72d100020000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000182534e415050590000000001000000010000000a081c0e0000000102610000", 1},
	} {
		raw, _ := hex.DecodeString(c.hex)
		if got := IgnoredTail(Batch(raw), 1<<20); got != c.want {
			t.Errorf("%v batch: tail %d, want %d", Batch(raw).Compression(), got, c.want)
		}
	}
	for _, codec := range allCodecs {
		raw, err := AppendBatch(nil, BatchHeader{}, []Record{{Value: []byte("abc")}}, codec)
		if err != nil {
			t.Fatal(err)
		}
		if got := IgnoredTail(Batch(raw), 1<<20); got != 0 {
			t.Errorf("%v from the builder: tail %d", codec, got)
		}
	}
}

// TestKafkaGzipModelAgainstSimulation: random member sequences and tails,
// members large enough for the JDK's 8 KiB buffer to refill at every
// alignment, decoded by gunzip and by the literal buffer simulation
// refJavaGzip; they must agree on every one.
func TestKafkaGzipModelAgainstSimulation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	noise := make([]byte, 40000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	hdr := gzipMember(t, nil)[:10]
	for i := range 200 {
		var src []byte
		for range 1 + rng.IntN(3) {
			n := rng.IntN(30000)
			if rng.IntN(2) == 0 {
				src = append(src, gzipMember(t, noise[:n])...) // stored blocks: size ~ n
			} else {
				src = append(src, gzipMember(t, bytes.Repeat([]byte("ab"), n))...)
			}
		}
		switch rng.IntN(4) {
		case 1:
			src = append(src, noise[:rng.IntN(40)]...)
		case 2:
			src = append(src, hdr...)
		case 3:
			src = append(src, hdr...)
			src = append(src, noise[:rng.IntN(9000)]...)
		}
		got, err := gunzip(nil, src, 1<<22)
		want, rerr := refJavaGzip(src, 1<<22)
		if (err == nil) != (rerr == nil) || !bytes.Equal(got, want) && err == nil {
			t.Fatalf("case %d (%d bytes): ours %d bytes, %v; simulation %d bytes, %v", i, len(src), len(got), err, len(want), rerr)
		}
	}
}
