package codec

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

func TestVectorARecord(t *testing.T) {
	b := Batch(testhex.Unhex(t, vectorA))
	it := b.Records()
	r, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	if r.Key != nil || string(r.Value) != "hi" || r.Headers.Len() != 0 || r.OffsetDelta != 0 || r.TimestampDelta != 0 {
		t.Fatalf("record %+v", r)
	}
	if _, err := it.Next(); err != io.EOF {
		t.Fatalf("after last: %v", err)
	}
	if _, err := it.Next(); err != io.EOF {
		t.Fatalf("sticky EOF: %v", err)
	}
}

func TestVarints(t *testing.T) {
	for _, v := range []int32{0, 1, -1, 63, -64, 64, 8191, -8192, math.MaxInt32, math.MinInt32} {
		enc := appendVarint32(nil, v)
		got, n := readVarint32(enc)
		if got != v || n != len(enc) || n != sizeVarint32(v) {
			t.Errorf("varint %d: %x -> %d (%d bytes)", v, enc, got, n)
		}
	}
	for _, v := range []int64{0, -1, 1 << 40, math.MaxInt64, math.MinInt64} {
		enc := appendVarint64(nil, v)
		got, n := readVarint64(enc)
		if got != v || n != len(enc) || n != sizeVarint64(v) {
			t.Errorf("varlong %d: %x -> %d (%d bytes)", v, enc, got, n)
		}
	}
	for _, tc := range []struct {
		in   []byte
		v    int32
		n    int
		name string
	}{
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80}, 0, -1, "5th byte continues"},
		{[]byte{0x80, 0x80, 0x80, 0x80}, 0, 0, "cut"},
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0x7f}, math.MaxInt32, 5, "spare high bits of the 5th byte dropped"},
		{[]byte{0x80, 0x00}, 0, 2, "overlong zero"},
	} {
		v, n := readVarint32(tc.in)
		if n != tc.n || (n > 0 && v != tc.v) {
			t.Errorf("%s: %x -> %d, %d", tc.name, tc.in, v, n)
		}
	}
	ten := []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}
	if _, n := readVarint64(ten); n != -1 {
		t.Errorf("10th byte continues: %d", n)
	}
}

// recordErrCases are record sections (count, bytes) each breaking one rule of
// DefaultRecord#readFrom or of the DefaultRecordBatch record iterator.
var recordErrCases = []struct {
	name  string
	count int32
	hex   string
	err   error
}{
	{"negative count", -1, "10 00 00 00 01 04 6869 00", ErrRecordsCount},
	{"count beyond records: premature EOF", 2, "10 00 00 00 01 04 6869 00", ErrRecordTruncated},
	{"leftover bytes after last record", 1, "10 00 00 00 01 04 6869 00 | ff", ErrRecordsLeftover},
	{"length beyond buffer", 1, "12 00 00 00 01 04 6869 00", ErrRecordTruncated},
	{"negative length", 1, "01 00 00 00 01 04 6869 00", ErrRecordLength},
	{"length longer than fields (consumed != length)", 1, "12 00 00 00 01 04 6869 00 00", ErrRecordLength},
	{"length shorter than fields", 1, "0e 00 00 00 01 04 6869 00", ErrRecordLength},
	{"value beyond body", 1, "10 00 00 00 01 06 6869 00", ErrRecordLength},
	{"negative header count", 1, "10 00 00 00 01 04 6869 01", ErrHeaderCount},
	{"header count > remaining", 1, "12 00 00 00 01 04 6869 04 00", ErrHeaderCount},
	{"negative header key length", 1, "14 00 00 00 01 04 6869 02 01 00", ErrHeaderKeyLength},
	{"6-byte offsetDelta varint", 1, "1a 00 00 8080808080 00 01 04 6869 00", ErrBadVarint},
	{"11-byte timestampDelta varlong", 1, "24 00 80808080808080808080 00 00 01 04 6869 00", ErrBadVarint},
	{"record length varint never ends", 1, "ff ff", ErrRecordTruncated},
	{"empty body", 1, "00", ErrRecordLength},
}

func TestRecordErrors(t *testing.T) {
	for _, tc := range recordErrCases {
		recs := testhex.Unhex(t, tc.hex)
		_, err := walkAll(NewRecordIter(recs, tc.count))
		if !errors.Is(err, tc.err) || !errors.Is(err, ErrBadRecord) || !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.err)
		}
		if _, rerr := refWalk(recs, tc.count); rerr == nil {
			t.Errorf("%s: the reference accepts it", tc.name)
		}
	}
	// count 0 yields nothing and does not look at the bytes.
	if recs, err := walkAll(NewRecordIter([]byte{0xff, 0xff}, 0)); err != nil || len(recs) != 0 {
		t.Errorf("count 0: %v %v", recs, err)
	}
}

func TestRecordHeadersAndNulls(t *testing.T) {
	recs := []Record{
		{Key: []byte{}, Value: nil, Headers: MakeHeaders(Header{Key: []byte("a"), Value: nil}, Header{Key: []byte("bc"), Value: []byte{}})},
		{Attributes: 3, TimestampDelta: -5, OffsetDelta: 1, Key: []byte("k"), Value: []byte("v"),
			Headers: MakeHeaders(Header{Key: []byte("h"), Value: []byte("x")})},
	}
	raw, err := AppendBatch(nil, BatchHeader{BaseTimestamp: 10, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, recs, CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	got, err := walkAll(Batch(raw).Records())
	if err != nil || !reflect.DeepEqual(got, recs) {
		t.Fatalf("round trip\n got %+v\nwant %+v (%v)", got, recs, err)
	}
	if err := compareWalks(raw[HeaderSize:], 2); err != nil {
		t.Fatal(err)
	}
	if b := Batch(raw); b.MaxTimestamp() != 10 || b.LastOffsetDelta() != 1 {
		t.Fatalf("computed maxTimestamp %d lastOffsetDelta %d", b.MaxTimestamp(), b.LastOffsetDelta())
	}
	var hs []Header
	for h := range got[0].Headers.All() {
		hs = append(hs, h)
	}
	if len(hs) != 2 || string(hs[0].Key) != "a" || hs[0].Value != nil || hs[1].Value == nil || len(hs[1].Value) != 0 {
		t.Fatalf("headers %+v", hs)
	}
	// Decoded slices are capped: appending never writes into the batch.
	before := bytes.Clone(raw)
	_ = append(got[1].Key, 'X')
	if !bytes.Equal(before, raw) {
		t.Fatal("append to a decoded key wrote into the batch")
	}
}

// randomRecords builds n records with a mix of null, empty and filled fields.
func randomRecords(rng *rand.Rand, n, valueSize int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		r := &recs[i]
		r.OffsetDelta = int32(i)
		r.TimestampDelta = int64(rng.IntN(5000))
		if rng.IntN(4) != 0 {
			r.Key = make([]byte, rng.IntN(20))
			fill(rng, r.Key)
		}
		if rng.IntN(8) != 0 {
			r.Value = make([]byte, rng.IntN(valueSize+1))
			fill(rng, r.Value)
		}
		var hs []Header
		for range rng.IntN(3) {
			h := Header{Key: []byte("hdr"), Value: make([]byte, rng.IntN(8))}
			fill(rng, h.Value)
			hs = append(hs, h)
		}
		if len(hs) > 0 {
			r.Headers = MakeHeaders(hs...)
		}
	}
	return recs
}

func fill(rng *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

// TestBuilderRoundTripVsKmsg builds batches, decodes them with our code and
// with kmsg, and rebuilds them from what was decoded.
func TestBuilderRoundTripVsKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 40; iter++ {
		recs := randomRecords(rng, rng.IntN(50), 300)
		h := BatchHeader{
			BaseOffset: rng.Int64N(1 << 40), PartitionLeaderEpoch: rng.Int32(), BaseTimestamp: 1700000000000,
			ProducerID: rng.Int64N(1 << 20), ProducerEpoch: int16(rng.IntN(100)), BaseSequence: rng.Int32N(1 << 30),
			Attributes: Attributes(rng.IntN(2)) * AttrTransactional,
		}
		raw, err := AppendBatch(nil, h, recs, CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBatch(raw)
		if err != nil || b.VerifyCRC() != nil {
			t.Fatalf("built batch: %v %v", err, b.VerifyCRC())
		}
		if err := sameHeaderAsKmsg(b); err != nil {
			t.Fatal(err)
		}
		if err := compareWalks(b[HeaderSize:], b.RecordsCount()); err != nil {
			t.Fatal(err)
		}
		got, err := walkAll(b.Records())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			recs = nil
		}
		if !reflect.DeepEqual(got, recs) {
			t.Fatalf("decode(encode(x)) != x")
		}
		again, err := AppendBatch(nil, b.Header(), got, b.Compression())
		if err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("encode(decode(bytes)) != bytes: %v", err)
		}
	}
}

func TestAppendBatchErrors(t *testing.T) {
	dst := []byte("keep")
	out, err := AppendBatch(dst, BatchHeader{}, nil, Compression(5))
	if !errors.Is(err, ErrUnsupportedCodec) || string(out) != "keep" {
		t.Fatalf("codec 5: %q %v", out, err)
	}
	// An empty batch keeps the caller's lastOffsetDelta (compaction).
	raw, err := AppendBatch(nil, BatchHeader{LastOffsetDelta: 7, BaseTimestamp: -1, MaxTimestamp: 99}, nil, CompressionZstd)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if b.LastOffsetDelta() != 7 || b.RecordsCount() != 0 || len(b) != HeaderSize || b.MaxTimestamp() != 99 ||
		b.Compression() != CompressionZstd {
		t.Fatalf("empty batch %x", raw)
	}
	if recs, err := walkAll(b.Records()); err != nil || len(recs) != 0 {
		t.Fatalf("empty compressed batch: %v %v", recs, err)
	}
}

// walkBatch is the uncompressed record walk the allocation test and the
// benchmarks time.
func walkBatch(b Batch) (n int, err error) {
	it := b.Records()
	var r Record
	for {
		err := it.Read(&r)
		if err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		n += len(r.Value)
		for h := range r.Headers.All() {
			n += len(h.Value)
		}
	}
}

func TestRecordWalkAllocs(t *testing.T) {
	raw, err := AppendBatch(nil, BatchHeader{ProducerID: 1}, randomRecords(rand.New(rand.NewPCG(3, 4)), 129, 200), CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := walkBatch(b); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("record walk: %v allocs", n)
	}
}
