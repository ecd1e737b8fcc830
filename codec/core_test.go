package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

// Vector A: an idempotent data batch with one record, written out by hand from
// the DefaultRecordBatch layout (docs/format.md).
const vectorA = `
0000000000000000  # 0-7    baseOffset 0
0000003a          # 8-11   batchLength 58
ffffffff          # 12-15  partitionLeaderEpoch -1
02                # 16     magic 2
0d9eeea7          # 17-20  crc
0000              # 21-22  attributes: none, CreateTime
00000000          # 23-26  lastOffsetDelta 0
0000018bcfe56800  # 27-34  baseTimestamp 1700000000000
0000018bcfe56800  # 35-42  maxTimestamp
00000000000003e8  # 43-50  producerId 1000
0000              # 51-52  producerEpoch 0
00000000          # 53-56  baseSequence 0
00000001          # 57-60  recordsCount 1
10 00 00 00 01 04 6869 00  # record: len 8, attr, tsΔ 0, offΔ 0, key null, value "hi", 0 headers
`

// Vector B: a COMMIT marker, coordinatorEpoch 5, built the same way.
const vectorB = `
0000000000000000 00000042 ffffffff 02 fc84b034  # baseOffset, batchLength 66, PLE -1, magic, crc
0030              # attributes: transactional | control
00000000 0000018bcfe56800 0000018bcfe56800
00000000000003e8 0000 ffffffff 00000001  # pid 1000, epoch 0, baseSequence -1, 1 record
20 00 00 00 08 00000001 0c 0000 00000005 00  # record: key (v0, COMMIT), value (v0, coordinatorEpoch 5)
`

func TestChecksumCheckValues(t *testing.T) {
	if got := Checksum([]byte("123456789")); got != 0xE3069283 {
		t.Fatalf("check value: got %#x", got)
	}
	if got := Checksum([]byte("Some String")); got != 608512271 {
		t.Fatalf("Kafka's Crc32CTest value: got %d", got)
	}
}

func TestVectorA(t *testing.T) {
	raw := testhex.Unhex(t, vectorA)
	b, err := ParseBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.VerifyCRC(); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want int64
	}{
		{"baseOffset", b.BaseOffset(), 0},
		{"batchLength", int64(b.BatchLength()), 58},
		{"size", int64(b.Size()), 70},
		{"partitionLeaderEpoch", int64(b.PartitionLeaderEpoch()), -1},
		{"magic", int64(b.Magic()), 2},
		{"crc", int64(b.CRC()), 0x0d9eeea7},
		{"attributes", int64(b.Attributes()), 0},
		{"lastOffsetDelta", int64(b.LastOffsetDelta()), 0},
		{"baseTimestamp", b.BaseTimestamp(), 1700000000000},
		{"maxTimestamp", b.MaxTimestamp(), 1700000000000},
		{"producerId", b.ProducerID(), 1000},
		{"producerEpoch", int64(b.ProducerEpoch()), 0},
		{"baseSequence", int64(b.BaseSequence()), 0},
		{"lastSequence", int64(b.LastSequence()), 0},
		{"recordsCount", int64(b.RecordsCount()), 1},
		{"lastOffset", b.LastOffset(), 0},
		{"nextOffset", b.NextOffset(), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if b.IsControl() || b.IsTransactional() || b.Compression() != CompressionNone || b.Attributes().TimestampType() != "CreateTime" {
		t.Errorf("attribute bits misread: %#x", b.Attributes())
	}
}

func TestVectorBOutsideCRCFieldsAreFree(t *testing.T) {
	b, err := ParseBatch(testhex.Unhex(t, vectorB))
	if err != nil {
		t.Fatal(err)
	}
	if b.CRC() != 0xfc84b034 || b.VerifyCRC() != nil {
		t.Fatalf("vector B CRC %#x invalid", b.CRC())
	}
	if !b.IsControl() || !b.IsTransactional() || b.LastSequence() != -1 {
		t.Fatalf("vector B header misread")
	}
	b.SetBaseOffset(100)
	b.SetPartitionLeaderEpoch(7)
	if b.VerifyCRC() != nil || b.CRC() != 0xfc84b034 {
		t.Fatal("rewriting baseOffset/PLE must leave the CRC valid and unchanged")
	}
	if b.BaseOffset() != 100 || b.PartitionLeaderEpoch() != 7 {
		t.Fatal("setters did not write")
	}
	b.SetLastOffset(200)
	if b.BaseOffset() != 200 || b.LastOffsetDelta() != 0 {
		t.Fatal("SetLastOffset")
	}
}

func TestCoveredSettersKeepCRC(t *testing.T) {
	b, _ := ParseBatch(testhex.Unhex(t, vectorA))
	for _, set := range []struct {
		name  string
		apply func()
		check func() bool
	}{
		{"producerId", func() { b.SetProducerID(-7) }, func() bool { return b.ProducerID() == -7 }},
		{"producerIdRecompute", func() { b.SetProducerIDRecompute(math.MinInt64) }, func() bool { return b.ProducerID() == math.MinInt64 }},
		{"producerEpoch", func() { b.SetProducerEpoch(3) }, func() bool { return b.ProducerEpoch() == 3 }},
		{"baseSequence", func() { b.SetBaseSequence(math.MaxInt32) }, func() bool { return b.BaseSequence() == math.MaxInt32 }},
		{"attributes", func() { b.SetAttributes(AttrLogAppendTime) }, func() bool { return b.Attributes().LogAppendTime() }},
		{"maxTimestamp", func() { b.SetMaxTimestamp(42) }, func() bool { return b.MaxTimestamp() == 42 }},
	} {
		set.apply()
		if !set.check() {
			t.Errorf("%s: value not written", set.name)
		}
		if err := b.VerifyCRC(); err != nil {
			t.Errorf("%s: CRC not kept: %v", set.name, err)
		}
	}
}

// TestWordSettersEqualRecompute holds the 8-byte setters (SetProducerID,
// SetMaxTimestamp), which patch from the field's two values as words, to
// writing the field and recomputing the CRC, over batch lengths on both
// sides of every table byte of the trailing length. On amd64 it runs again
// without the CRC instructions (internal/crc32c's TestWithoutCRCInstructions
// covers the word patch there).
func TestWordSettersEqualRecompute(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{HeaderSize, HeaderSize + 1, 100, 306, 307, 1024, 16 * 1024, 65587, 65588, 1 << 20} {
		b := Batch(make([]byte, n))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b.UpdateCRC()
		for _, set := range []struct {
			name string
			off  int
			set  func(Batch, uint64)
		}{
			{"SetProducerID", OffProducerID, func(b Batch, v uint64) { b.SetProducerID(int64(v)) }},
			{"SetMaxTimestamp", OffMaxTimestamp, func(b Batch, v uint64) { b.SetMaxTimestamp(int64(v)) }},
		} {
			for range 4 {
				v := rng.Uint64()
				want := slices.Clone(b)
				binary.BigEndian.PutUint64(want[set.off:], v)
				want.UpdateCRC()
				set.set(b, v)
				if !bytes.Equal(b, want) {
					t.Fatalf("%s(%#x) on %d bytes: CRC %#x, recompute %#x", set.name, v, n, b.CRC(), want.CRC())
				}
			}
		}
	}
}

func TestPatchKeepsWrongCRCWrong(t *testing.T) {
	b, _ := ParseBatch(testhex.Unhex(t, vectorA))
	b[len(b)-2] ^= 0x40 // corrupt a payload byte
	if b.VerifyCRC() == nil {
		t.Fatal("corruption not detected")
	}
	b.SetProducerID(12345)
	if !errors.Is(b.VerifyCRC(), ErrCRC) {
		t.Fatal("a patch must not repair a wrong CRC")
	}
}

func TestSequenceVectors(t *testing.T) {
	for _, c := range []struct {
		f          string
		s, n, want int32
	}{
		{"inc", 5, 5, 10}, {"inc", math.MaxInt32, 1, 0}, {"inc", math.MaxInt32 - 5, 10, 4},
		{"dec", 5, 5, 0}, {"dec", 0, 1, math.MaxInt32},
	} {
		got := IncrementSequence(c.s, c.n)
		if c.f == "dec" {
			got = DecrementSequence(c.s, c.n)
		}
		if got != c.want {
			t.Errorf("%s(%d,%d) = %d, want %d", c.f, c.s, c.n, got, c.want)
		}
	}
}

func TestParseBatchRejects(t *testing.T) {
	good := testhex.Unhex(t, vectorA)
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"short", good[:16], ErrTruncated},
		{"cut", good[:69], ErrTruncated},
		{"long", append(bytes.Clone(good), 0), ErrBadLength},
		{"lengthBelowHeader", mut(func(b []byte) []byte { be.PutUint32(b[8:], 48); return b }), ErrBadLength},
		{"negativeLength", mut(func(b []byte) []byte { be.PutUint32(b[8:], 0x80000000); return b }), ErrBadLength},
		{"magic1", mut(func(b []byte) []byte { b[16] = 1; return b }), ErrBadMagic},
	}
	for _, c := range cases {
		if _, err := ParseBatch(c.in); !errors.Is(err, c.want) || !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestFraming(t *testing.T) {
	a, bb := testhex.Unhex(t, vectorA), testhex.Unhex(t, vectorB)
	seg := append(append(bytes.Clone(a), bb...), a[:30]...)
	r := NewReader(seg, 1000)
	b1, p1, err := r.Next()
	if err != nil || p1 != 1000 || len(b1) != len(a) {
		t.Fatalf("first: %v %d %d", err, p1, len(b1))
	}
	b2, p2, err := r.Next()
	if err != nil || p2 != 1070 || !b2.IsControl() {
		t.Fatalf("second: %v %d", err, p2)
	}
	_, p3, err := r.Next()
	var fe *FormatError
	if !errors.Is(err, ErrPartial) || !errors.As(err, &fe) || fe.Pos != 1148 || p3 != 1148 {
		t.Fatalf("trailing partial: %v at %d", err, p3)
	}
	if errors.Is(err, ErrCorruption) {
		t.Fatal("a partial batch is not corruption")
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}

	// A CRC error is reported and the walk continues.
	bad := append(bytes.Clone(a), a...)
	bad[65] ^= 1
	r = NewReader(bad, 0)
	if _, _, err := r.Next(); !errors.Is(err, ErrCRC) || !strings.Contains(err.Error(), "position 0") {
		t.Fatalf("crc: %v", err)
	}
	if _, pos, err := r.Next(); err != nil || pos != 70 {
		t.Fatalf("continue after CRC error: %v %d", err, pos)
	}

	// Framing errors stop the walk and carry the position.
	bad = append(bytes.Clone(a), a...)
	bad[70+16] = 7
	r = NewReader(bad, 0)
	r.Next()
	if _, _, err := r.Next(); !errors.Is(err, ErrBadMagic) || !errors.As(err, &fe) || fe.Pos != 70 || fe.Field != "magic" {
		t.Fatalf("bad magic: %v", err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatal("walk must stop after a framing error")
	}
	for _, n := range []int{1, 11, 12, 16} {
		if _, _, err := Next(a[:n]); !errors.Is(err, ErrPartial) {
			t.Errorf("Next(%d bytes) = %v, want ErrPartial", n, err)
		}
	}
	short := bytes.Clone(a)
	be.PutUint32(short[8:], 13)
	if _, _, err := Next(short); !errors.Is(err, ErrBadLength) {
		t.Errorf("batchLength 13: %v", err)
	}
}

func TestCoreAllocs(t *testing.T) {
	raw := testhex.Unhex(t, vectorA)
	big := make([]byte, 16*1024)
	copy(big, raw)
	be.PutUint32(big[8:], uint32(len(big)-12))
	bb := Batch(big)
	bb.UpdateCRC()
	pid := int64(0)
	for name, f := range map[string]func(){
		"ParseBatch": func() { _, _ = ParseBatch(big) },
		"VerifyCRC":  func() { _ = bb.VerifyCRC() },
		"Patch":      func() { pid++; bb.SetProducerID(pid) },
		"Next":       func() { _, _, _ = Next(big) },
		"BadCRC":     func() { _ = Batch(raw).VerifyCRC() },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}
