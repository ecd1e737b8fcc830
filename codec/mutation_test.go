package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

// frameOf is total zero bytes with batchLength length and, where the bytes
// reach it, magic.
func frameOf(total int, length uint32, magic byte) []byte {
	b := make([]byte, total)
	be.PutUint32(b[OffBatchLength:], length)
	if total > OffMagic {
		b[OffMagic] = magic
	}
	return b
}

// Next frames in Kafka's order (ByteBufferLogInputStream#nextBatch): fewer
// than the 12-byte prefix is partial; then a batchLength below the minimum
// is corrupt before anything else is read; then fewer than the 17 bytes up
// to magic is partial; then magic; then a length below the v2 header. Each
// case sits on one boundary of those checks.
func TestNextFramingBoundaries(t *testing.T) {
	frame := frameOf
	for _, c := range []struct {
		name string
		in   []byte
		want error
		size int
	}{
		{"the 12-byte prefix alone with a length below the minimum: corrupt, not partial",
			frame(LogOverhead, 0, 0), ErrBadLength, 0},
		{"the minimum length passes its check: the wrong magic is what fails",
			frame(HeaderSizeUpToMagic, MinBatchLength, 1), ErrBadMagic, 0},
		{"17 bytes are enough to read magic",
			frame(HeaderSizeUpToMagic, 100, 1), ErrBadMagic, 0},
		{"a length of exactly the v2 header frames a batch of no record",
			frame(HeaderSize, HeaderSize-LogOverhead, MagicV2), nil, HeaderSize},
		{"one byte short of that header is partial",
			frame(HeaderSize-1, HeaderSize-LogOverhead, MagicV2), ErrPartial, 0},
	} {
		b, _, err := Next(c.in)
		if !errors.Is(err, c.want) || len(b) != c.size {
			t.Errorf("%s: %d bytes, %v; want %d bytes, %v", c.name, len(b), err, c.size, c.want)
		}
	}
}

// DecrementSequence wraps below 0 to MaxInt32 and counts the rest of n from
// there (DefaultRecordBatch.decrementSequence); IncrementSequence undoes it.
func TestDecrementSequenceWrapsByTheRest(t *testing.T) {
	if got := DecrementSequence(2, 5); got != math.MaxInt32-2 {
		t.Fatalf("DecrementSequence(2, 5) = %d, want MaxInt32-2", got)
	}
	if got := IncrementSequence(math.MaxInt32-2, 5); got != 2 {
		t.Fatalf("IncrementSequence(MaxInt32-2, 5) = %d, want 2", got)
	}
}

// ParseBatch tells a batch cut short (ErrTruncated: its length is a v2
// header's or more and runs past the bytes) from a length no v2 batch has
// (ErrBadLength), on each boundary of those checks.
func TestParseBatchTruncatedOrBadLength(t *testing.T) {
	withLength := func(total int, length uint32) []byte { return frameOf(total, length, MagicV2) }
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"the 17 bytes up to magic with a length below the v2 header", withLength(HeaderSizeUpToMagic, 5), ErrBadLength},
		{"a length of exactly the v2 header, one byte missing", withLength(HeaderSize-1, HeaderSize-LogOverhead), ErrTruncated},
		{"a length of exactly the v2 header, whole", withLength(HeaderSize, HeaderSize-LogOverhead), nil},
	} {
		if _, err := ParseBatch(c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// A compressed batch of recordsCount 0 yields no record and is not
// decompressed (DefaultRecordBatch#iterator returns an empty iterator when
// count is 0): a payload that would not decompress is never read.
func TestOpenRecordsOfZeroRecordsSkipsDecompression(t *testing.T) {
	for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		raw, err := AppendBatch(nil, BatchHeader{ProducerID: 7, BaseTimestamp: 1}, nil, c)
		if err != nil {
			t.Fatal(c, err)
		}
		b := Batch(raw)
		if b.RecordsCount() != 0 || b.Compression() != c {
			t.Fatalf("%v: built %d records with %v", c, b.RecordsCount(), b.Compression())
		}
		for i := HeaderSize; i < len(b); i++ {
			b[i] = 0xff // not a stream of any codec
		}
		it, _, err := b.OpenRecords(nil, 1<<20)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		if got, err := walkAll(it); err != nil || len(got) != 0 {
			t.Fatalf("%v: %d records, %v", c, len(got), err)
		}
	}
}

// Check reads the first record of a control batch whatever its codec and
// holds an ABORT or COMMIT value to EndTransactionMarker's schema: a marker
// rebuilt compressed reads as the uncompressed one does, and the same
// marker with its value cut short, or with a negative version, is
// ErrBadControl under every codec.
func TestCheckControlValueUnderEveryCodec(t *testing.T) {
	m := Batch(AppendEndTxnMarker(nil, 5, 2, 7, true, 1700000000000))
	it := m.Records()
	r, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	negative := EndTxnMarker{Version: -1, CoordinatorEpoch: 7}.AppendTo(nil)
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		for _, v := range []struct {
			name  string
			value []byte
			want  error
		}{
			{"the marker's own value", r.Value, nil},
			{"a value cut to 5 bytes", r.Value[:EndTxnMarkerSize-1], ErrBadControl},
			{"a negative version", negative, ErrBadControl},
		} {
			rec := r
			rec.Value = v.value
			b, err := AppendBatch(nil, m.Header(), []Record{rec}, c)
			if err != nil {
				t.Fatal(err)
			}
			if !Batch(b).IsControl() || Batch(b).Compression() != c {
				t.Fatalf("%s: rebuilt batch is control %v, codec %s", c, Batch(b).IsControl(), Batch(b).Compression())
			}
			if _, err := Batch(b).Check(nil, 1<<20); !errors.Is(err, v.want) || (v.want == nil) != (err == nil) {
				t.Errorf("%s, %s: Check = %v, want %v", c, v.name, err, v.want)
			}
		}
	}
}

// AppendBatch appends to what dst holds: a batch built after another in the
// same buffer carries its own batchLength and CRC, so the buffer frames as
// the two batches, each intact, whatever the codec.
func TestAppendBatchAfterAnother(t *testing.T) {
	recs := []Record{{Value: []byte("a")}, {OffsetDelta: 1, Key: []byte("k"), Value: []byte("bc")}}
	codecs := []Compression{CompressionNone, CompressionGzip}
	var buf []byte
	for i, c := range codecs {
		var err error
		if buf, err = AppendBatch(buf, BatchHeader{BaseOffset: int64(10 * i), BaseSequence: -1}, recs, c); err != nil {
			t.Fatal(c, err)
		}
	}
	rest := buf
	for i, c := range codecs {
		b, r, err := Next(rest)
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if err := b.VerifyCRC(); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if b.BaseOffset() != int64(10*i) || b.Compression() != c || b.RecordsCount() != 2 {
			t.Fatalf("batch %d: base offset %d, %v, %d records", i, b.BaseOffset(), b.Compression(), b.RecordsCount())
		}
		rest = r
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes after the two batches", len(rest))
	}
}

// zigzag32 is the unsigned varint code of v's zig-zag encoding.
func zigzag32(v int32) uint32 { return uint32(v)<<1 ^ uint32(v>>31) }

// recordOfBody is body prefixed with its length varint, a record's bytes.
func recordOfBody(body []byte) []byte { return append(appendVarint32(nil, int32(len(body))), body...) }

// varintRecords are records whose every varint field takes each of its
// encoded lengths, from one byte to the longest, on both sides of each
// length's bounds (63/64, 8191/8192 and their negatives), and whose record
// length does the same (bodies around 64, 128 and 8192 bytes).
func varintRecords() []Record {
	var recs []Record
	deltas := []int32{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193, 1 << 20, -1 << 20, math.MaxInt32, math.MinInt32}
	for _, v := range deltas {
		recs = append(recs, Record{TimestampDelta: int64(v)}, Record{OffsetDelta: v})
	}
	recs = append(recs, Record{TimestampDelta: 1 << 40}, Record{TimestampDelta: math.MinInt64})
	sizes := []int{0, 1, 63, 64, 8191, 8192}
	for _, n := range sizes {
		recs = append(recs, Record{Key: make([]byte, n)}, Record{Value: make([]byte, n)})
		hs := make([]Header, n)
		for i := range hs {
			hs[i] = Header{Key: []byte{}}
		}
		if n > 0 {
			recs = append(recs, Record{Headers: MakeHeaders(hs...)},
				Record{Headers: MakeHeaders(Header{Key: make([]byte, n), Value: make([]byte, n)})})
		}
	}
	for _, n := range []int{50, 8170} {
		for k := n; k < n+30; k++ {
			recs = append(recs, Record{Key: make([]byte, k)})
		}
	}
	for k := 110; k < 130; k++ {
		recs = append(recs, Record{Key: make([]byte, k)})
	}
	return recs
}

// Every varint of a record decodes at each of its encoded lengths
// (DefaultRecord.readFrom over ByteUtils.readVarint/readVarlong): the
// record reads back as written, in the bytes it took. Every prefix of it is
// ErrRecordTruncated, and a record whose length says its body ends early,
// at any byte of the body, is ErrRecordLength (a varint cut by the end of
// the body is cut, not too long), or ErrHeaderCount once the count is read
// and more headers are announced than bytes are left; the reference reader
// (Kafka's rules) refuses it too.
func TestRecordFieldsAtEveryVarintLength(t *testing.T) {
	for i, r := range varintRecords() {
		enc := AppendRecord(nil, r)
		got, n, err := ReadRecord(enc)
		if err != nil || n != len(enc) || !reflect.DeepEqual(got, r) {
			t.Fatalf("record %d (%d bytes): read %d bytes, %v\n got %+v\nwant %+v", i, len(enc), n, err, got, r)
		}
		if err := compareWalks(enc, 1); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		near := func(j, n int) bool { return j < 80 || n-j < 80 }
		for j := 0; j < len(enc); j++ {
			if !near(j, len(enc)) {
				continue
			}
			if _, _, err := ReadRecord(enc[:j]); !errors.Is(err, ErrRecordTruncated) {
				t.Fatalf("record %d cut to %d of %d bytes: %v, want ErrRecordTruncated", i, j, len(enc), err)
			}
		}
		body := enc[sizeVarint32(int32(r.bodySize())):]
		headersAt := len(body) - len(r.Headers.raw) // after the header count
		for j := 0; j < len(body); j++ {
			if !near(j, len(body)) {
				continue
			}
			short := recordOfBody(body[:j])
			_, _, err := ReadRecord(short)
			if !errors.Is(err, ErrRecordLength) && !(j >= headersAt && errors.Is(err, ErrHeaderCount)) {
				t.Fatalf("record %d with its body cut to %d of %d bytes: %v, want ErrRecordLength", i, j, len(body), err)
			}
			if err := compareWalks(short, 1); err != nil {
				t.Fatalf("record %d with its body cut to %d of %d bytes: %v", i, j, len(body), err)
			}
		}
	}
}

// A negative record length is refused (ErrRecordLength; DefaultRecord
// .readFrom fails when the fields do not take exactly the length), in each
// encoded length, even where the bytes after it hold a valid record of the
// length's magnitude: each length here is -(L^1)-1, whose zig-zag code with
// the sign bit dropped reads L, the body's length.
func TestRecordNegativeLengthRefused(t *testing.T) {
	for _, k := range []int{0, 10, 56, 63, 64, 100, 8000} {
		body := AppendRecord(nil, Record{Key: make([]byte, k)})
		body = body[sizeVarint32(int32(len(body)-1)):] // drop its length
		if _, _, err := ReadRecord(recordOfBody(body)); err != nil {
			t.Fatalf("key %d: the body alone does not read: %v", k, err)
		}
		l := int32(len(body))
		u := uint32(l^1)<<1 | 1
		rec := append(appendUvarint32(nil, u), body...)
		if _, _, err := ReadRecord(rec); !errors.Is(err, ErrRecordLength) {
			t.Errorf("length %d (%d bytes of varint) before a %d-byte body: %v, want ErrRecordLength",
				-(l^1)-1, sizeUvarint32(u), l, err)
		}
	}
}

// A negative key or value length is null, whatever its magnitude and
// encoded length (DefaultRecord.readFrom reads the bytes only when the size
// is >= 0); a negative header count is ErrHeaderCount even when as many
// headers as its magnitude follow.
func TestRecordNegativeFieldLengths(t *testing.T) {
	for _, l := range []int32{-1, -2, -64, -65, -8192, -8193, -1 << 20} {
		for _, field := range []string{"key", "value"} {
			body := []byte{0, 0, 0} // attributes, timestampDelta, offsetDelta
			if field == "key" {
				body = append(appendVarint32(body, l), 1)
			} else {
				body = appendVarint32(append(body, 1), l)
			}
			body = append(body, 0) // no headers
			r, n, err := ReadRecord(recordOfBody(body))
			if err != nil || n != len(recordOfBody(body)) || r.Key != nil || r.Value != nil {
				t.Errorf("%s length %d: key %q value %q, %d bytes, %v; want both null", field, l, r.Key, r.Value, n, err)
			}
		}
		u := zigzag32(l)
		m := int(u>>1 ^ 1) // the count the code reads as with its sign bit dropped
		body := appendVarint32([]byte{0, 0, 0, 1, 1}, l)
		for range m {
			body = append(body, 0, 1) // an empty key, a null value
		}
		if _, _, err := ReadRecord(recordOfBody(body)); !errors.Is(err, ErrHeaderCount) {
			t.Errorf("header count %d before %d headers: %v, want ErrHeaderCount", l, m, err)
		}
	}
}

// A record whose body ends inside its value length is refused
// (ErrRecordLength; the reference refuses it too), whatever the bytes
// before the cut hold: here attributes 0x02, a timestampDelta of 0, an
// offsetDelta of 3 and a null key, which read from the body's first byte
// would be a header count of 1 and one header whose value runs to the cut.
func TestRecordCutInsideValueLength(t *testing.T) {
	rec := recordOfBody([]byte{2, 0, 6, 1, 0x80, 0x80})
	if _, _, err := ReadRecord(rec); !errors.Is(err, ErrRecordLength) {
		t.Fatalf("%x: %v, want ErrRecordLength", rec, err)
	}
	if err := compareWalks(rec, 1); err != nil {
		t.Fatal(err)
	}
}

// DefaultRecord.readFrom refuses a header count above the bytes left in the
// body (ErrHeaderCount); a count equal to them passes that check and the
// record fails on the header it cannot read (ErrRecordLength), since a
// header takes at least two bytes.
func TestRecordHeaderCountAgainstBytesLeft(t *testing.T) {
	for _, c := range []struct {
		name  string
		count int32
		want  error
	}{
		{"one header announced, one byte left", 1, ErrRecordLength},
		{"two headers announced, one byte left", 2, ErrHeaderCount},
	} {
		body := append(appendVarint32([]byte{0, 0, 0, 1, 1}, c.count), 0)
		if _, _, err := ReadRecord(recordOfBody(body)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// The partial read (DefaultRecord#readPartiallyFrom) decodes every varint
// at each of its encoded lengths: each record of varintRecords reads back
// with its attributes, deltas, key and value (headers are skipped), in the
// bytes it took. Every prefix of it is ErrRecordTruncated (the partial read
// ignores the record length, so a cut shows only as a field that runs past
// the data), and the reference refuses every prefix too.
func TestPartialRecordAtEveryVarintLength(t *testing.T) {
	for i, r := range varintRecords() {
		enc := AppendRecord(nil, r)
		want := r
		want.Headers = Headers{}
		got, n, err := ReadPartialRecord(enc)
		if err != nil || n != len(enc) || !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d (%d bytes): read %d bytes, %v\n got %+v\nwant %+v", i, len(enc), n, err, got, want)
		}
		if _, _, err := refPartial(enc, 1); err != nil {
			t.Fatalf("record %d: the reference refuses it: %v", i, err)
		}
		for j := 0; j < len(enc); j++ {
			if j >= 80 && len(enc)-j >= 80 {
				continue
			}
			if _, _, err := ReadPartialRecord(enc[:j]); !errors.Is(err, ErrRecordTruncated) {
				t.Fatalf("record %d cut to %d of %d bytes: %v, want ErrRecordTruncated", i, j, len(enc), err)
			}
			if _, _, err := refPartial(enc[:j], 1); err == nil {
				t.Fatalf("record %d cut to %d of %d bytes: the reference accepts it", i, j, len(enc))
			}
		}
	}
}

// The partial read refuses data that ends inside a varint
// (ErrRecordTruncated), whatever the bytes before the cut hold: the record
// length it ignores, the attributes and the fields read so far. The bytes
// of each case, read again from the first byte, would be fields that end a
// record (null key and value lengths, a header count of 0, a header value
// length that covers the rest), so a reader that lost its place at the cut
// would accept them.
func TestPartialRecordCutInsideAVarint(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"inside the offsetDelta", []byte{0x01, 0x01, 0x00, 0x80}},
		{"inside the key length", []byte{0x01, 0x00, 0x00, 0x00, 0x80}},
		{"inside the value length", []byte{0x00, 0x00, 0x00, 0x00, 0x01, 0x80}},
		{"inside the header key length", []byte{0x02, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x80}},
		{"inside the header value length", []byte{0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x00, 0x80}},
	} {
		if _, _, err := ReadPartialRecord(c.data); !errors.Is(err, ErrRecordTruncated) {
			t.Errorf("%s (%x): %v, want ErrRecordTruncated", c.name, c.data, err)
		}
		if _, _, err := refPartial(c.data, 1); err == nil {
			t.Errorf("%s (%x): the reference accepts it", c.name, c.data)
		}
	}
}

// Each varint reader (ByteUtils.readVarint, readVarlong, readUnsignedVarint)
// reads every value at each of its encoded lengths, on both sides of each
// length's bounds, the same whether its encoding ends the input or more
// bytes follow it, and whether it starts the input or sits at a position
// after other bytes. The writers give the bytes of encoding/binary's
// (protobuf's) zig-zag and unsigned varints, and the sizes are those
// bytes' lengths. Every prefix of an encoding is cut (0 bytes read), and
// a fifth (tenth) byte that continues is too long (-1).
func TestVarintsAtEveryLength(t *testing.T) {
	tails := [][]byte{nil, {0}, {0x7f, 0x01}, {0x80, 0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}
	with := func(pre, enc, tail []byte) []byte {
		return append(append(append([]byte(nil), pre...), enc...), tail...)
	}
	for _, v := range []uint32{0, 1, 127, 128, 129, 1<<14 - 1, 1 << 14, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28,
		math.MaxUint32} {
		enc := appendUvarint32(nil, v)
		if want := binary.AppendUvarint(nil, uint64(v)); !bytes.Equal(enc, want) || sizeUvarint32(v) != len(want) {
			t.Fatalf("uvarint %d: %x (size %d), want %x", v, enc, sizeUvarint32(v), want)
		}
		for _, tail := range tails {
			if got, n := readUvarint32(with(nil, enc, tail)); got != v || n != len(enc) {
				t.Errorf("uvarint %d then %x: %d, %d bytes", v, tail, got, n)
			}
		}
		for j := range len(enc) {
			if _, n := readUvarint32(enc[:j]); n != 0 {
				t.Errorf("uvarint %d cut to %d bytes: %d bytes read, want 0", v, j, n)
			}
		}
	}
	for _, v := range []int32{0, 1, -1, 2, -2, 63, -64, 64, -65, 8191, -8192, 8192, -8193, 1<<20 - 1, -1 << 20,
		1 << 20, -1<<20 - 1, 1<<27 - 1, -1 << 27, 1 << 27, -1<<27 - 1, math.MaxInt32, math.MinInt32} {
		enc := appendVarint32(nil, v)
		if want := binary.AppendVarint(nil, int64(v)); !bytes.Equal(enc, want) || sizeVarint32(v) != len(want) {
			t.Fatalf("varint %d: %x (size %d), want %x", v, enc, sizeVarint32(v), want)
		}
		for _, tail := range tails {
			b := with(nil, enc, tail)
			if got, n := readVarint32(b); got != v || n != len(enc) {
				t.Errorf("varint %d then %x: readVarint32 %d, %d bytes", v, tail, got, n)
			}
			if got, p := next32Slow(b, 0); got != v || p != len(enc) {
				t.Errorf("varint %d then %x: next32Slow %d, at %d", v, tail, got, p)
			}
			for _, pre := range [][]byte{{0}, {0x80, 0x80}} {
				b := with(pre, enc, tail)
				if got, p := next32(b, len(pre)); got != v || p != len(pre)+len(enc) {
					t.Errorf("varint %d after %x then %x: next32 %d, at %d", v, pre, tail, got, p)
				}
				if got, p := next32Slow(b, len(pre)); got != v || p != len(pre)+len(enc) {
					t.Errorf("varint %d after %x then %x: next32Slow %d, at %d", v, pre, tail, got, p)
				}
			}
		}
		for j := range len(enc) {
			if _, n := readVarint32(enc[:j]); n != 0 {
				t.Errorf("varint %d cut to %d bytes: readVarint32 read %d, want 0", v, j, n)
			}
			b := with([]byte{0x80}, enc[:j], nil)
			if _, p := next32(b, 1); p != 0 {
				t.Errorf("varint %d cut to %d bytes: next32 at %d, want 0", v, j, p)
			}
			if _, p := next32Slow(b, 1); p != 0 {
				t.Errorf("varint %d cut to %d bytes: next32Slow at %d, want 0", v, j, p)
			}
		}
	}
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193, 1<<27 - 1, -1 << 27,
		1 << 27, -1<<27 - 1, math.MaxInt32, math.MinInt32, 1<<34 - 1, 1 << 34, 1<<55 - 1, -1 << 55, 1 << 55,
		-1<<55 - 1, 1<<62 - 1, -1 << 62, 1 << 62, math.MaxInt64, math.MinInt64} {
		enc := appendVarint64(nil, v)
		if want := binary.AppendVarint(nil, v); !bytes.Equal(enc, want) || sizeVarint64(v) != len(want) {
			t.Fatalf("varlong %d: %x (size %d), want %x", v, enc, sizeVarint64(v), want)
		}
		for _, tail := range tails {
			b := with(nil, enc, tail)
			if got, n := readVarint64(b); got != v || n != len(enc) {
				t.Errorf("varlong %d then %x: readVarint64 %d, %d bytes", v, tail, got, n)
			}
			for _, pre := range [][]byte{{0}, {0x80, 0x80}} {
				b := with(pre, enc, tail)
				if got, p := next64(b, len(pre)); got != v || p != len(pre)+len(enc) {
					t.Errorf("varlong %d after %x then %x: next64 %d, at %d", v, pre, tail, got, p)
				}
				if got, p := next64Slow(b, len(pre)); got != v || p != len(pre)+len(enc) {
					t.Errorf("varlong %d after %x then %x: next64Slow %d, at %d", v, pre, tail, got, p)
				}
			}
		}
		for j := range len(enc) {
			if _, n := readVarint64(enc[:j]); n != 0 {
				t.Errorf("varlong %d cut to %d bytes: readVarint64 read %d, want 0", v, j, n)
			}
			b := with([]byte{0x80}, enc[:j], nil)
			if _, p := next64(b, 1); p != 0 {
				t.Errorf("varlong %d cut to %d bytes: next64 at %d, want 0", v, j, p)
			}
			if _, p := next64Slow(b, 1); p != 0 {
				t.Errorf("varlong %d cut to %d bytes: next64Slow at %d, want 0", v, j, p)
			}
		}
	}
	long := bytes.Repeat([]byte{0x80}, 11)
	for _, tail := range tails {
		b := with([]byte{0}, long, tail)
		if _, n := readUvarint32(b[1:]); n != -1 {
			t.Errorf("uvarint of 5 continuing bytes then %x: %d bytes, want -1", tail, n)
		}
		if _, n := readVarint32(b[1:]); n != -1 {
			t.Errorf("varint of 5 continuing bytes then %x: %d bytes, want -1", tail, n)
		}
		if _, p := next32(b, 1); p != -1 {
			t.Errorf("varint of 5 continuing bytes then %x: next32 at %d, want -1", tail, p)
		}
		if _, n := readVarint64(b[1:]); n != -1 {
			t.Errorf("varlong of 10 continuing bytes then %x: %d bytes, want -1", tail, n)
		}
		if _, p := next64(b, 1); p != -1 {
			t.Errorf("varlong of 10 continuing bytes then %x: next64 at %d, want -1", tail, p)
		}
	}
}

// A control record's timestamp is the batch's baseTimestamp plus the
// record's timestampDelta, or the batch's maxTimestamp when the batch says
// LogAppendTime (DefaultRecordBatch#iterator hands DefaultRecord.readFrom
// the base timestamp and, under LOG_APPEND_TIME, the maxTimestamp).
func TestControlRecordTimestampIsBasePlusDelta(t *testing.T) {
	key := AppendControlKey(nil, ControlCommit)
	value := EndTxnMarker{CoordinatorEpoch: 3}.AppendTo(nil)
	for _, c := range []struct {
		name  string
		attrs Attributes
		want  int64
	}{
		{"CreateTime", AttrControl | AttrTransactional, 1000 + 37},
		{"LogAppendTime", AttrControl | AttrTransactional | AttrLogAppendTime, 5000},
	} {
		h := BatchHeader{Attributes: c.attrs, BaseTimestamp: 1000, MaxTimestamp: 5000, ProducerID: 1, BaseSequence: -1}
		raw, err := AppendBatch(nil, h, []Record{{TimestampDelta: 37, Key: key, Value: value}}, CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := Batch(raw).ControlRecord()
		if err != nil || cr.Timestamp != c.want {
			t.Errorf("%s: timestamp %d, %v; want %d", c.name, cr.Timestamp, err, c.want)
		}
	}
}

// A MirrorPidCollisionValue cut anywhere before the end of its version 0
// fields is ErrBadControl, never a read past the value; a higher version
// reads no tagged fields, so its value may end right after TimestampMs.
func TestMirrorPidCollisionValueCutShort(t *testing.T) {
	v0 := testhex.Unhex(t, collisionValue)
	want := MirrorPidCollisionValue{Salt: 0xdeadbeef, CollidingClusterID: "zz", TimestampMs: 1700000000000}
	for n := range len(v0) {
		if got, err := ParseMirrorPidCollisionValue(v0[:n]); !errors.Is(err, ErrBadControl) {
			t.Errorf("version 0 cut to %d of %d bytes: %+v, %v; want ErrBadControl", n, len(v0), got, err)
		}
	}
	v1 := bytes.Clone(v0[:len(v0)-1]) // no tagged-field section
	v1[1] = 1
	if got, err := ParseMirrorPidCollisionValue(v1); err != nil || got != want {
		t.Errorf("version 1 ending at TimestampMs: %+v, %v; want %+v", got, err, want)
	}
	for n := range len(v1) {
		if got, err := ParseMirrorPidCollisionValue(v1[:n]); !errors.Is(err, ErrBadControl) {
			t.Errorf("version 1 cut to %d of %d bytes: %+v, %v; want ErrBadControl", n, len(v1), got, err)
		}
	}
}

// A compact string may run to the last byte of the value: a MirrorPidReset
// of a version above 0 reads no tagged fields, so its SourceClusterId can
// end the value; one byte more in its length overruns it.
func TestMirrorPidResetSourceRunsToTheEnd(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want MirrorPidReset
		err  error
	}{
		{"0001 04616263", MirrorPidReset{Version: 1, SourceClusterID: "abc"}, nil},
		{"0001 01", MirrorPidReset{Version: 1, SourceClusterID: ""}, nil},
		{"0001 05616263", MirrorPidReset{}, ErrBadControl},
	} {
		m, err := ParseMirrorPidReset(testhex.Unhex(t, c.hex))
		if !errors.Is(err, c.err) || m != c.want {
			t.Errorf("%s: %+v %v, want %+v %v", c.hex, m, err, c.want, c.err)
		}
	}
}

// Tagged fields come in strictly increasing tag order: a tag repeated is
// ErrBadControl, as a tag going back is; and every field has its size, so
// a section that ends after a tag is ErrBadControl. Both the barrier's and
// the salt record's values are held to it.
func TestTaggedFieldsRepeatedTagOrMissingSize(t *testing.T) {
	v0 := testhex.Unhex(t, collisionValue)
	fixed := v0[:len(v0)-1] // the value up to its tagged-field section
	for _, c := range []struct {
		name, tagged string
		err          error
	}{
		{"two tags in order", "02 01 00 05 01 aa", nil},
		{"a tag repeated", "02 05 00 05 00", ErrBadControl},
		{"a tag going back", "02 05 00 01 00", ErrBadControl},
		{"a tag with no size", "01 00", ErrBadControl},
		{"a second tag with no size", "02 01 00 05", ErrBadControl},
	} {
		tagged := testhex.Unhex(t, c.tagged)
		barrier := append(testhex.Unhex(t, "0000 04616263"), tagged...)
		if m, err := ParseMirrorPidReset(barrier); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("barrier, %s: %+v %v, want %v", c.name, m, err, c.err)
		}
		salt := append(bytes.Clone(fixed), tagged...)
		if v, err := ParseMirrorPidCollisionValue(salt); !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("salt value, %s: %+v %v, want %v", c.name, v, err, c.err)
		}
	}
}

// A FormatError says what and where: the sentinel's message, the position,
// and the field in parentheses when there is one.
func TestFormatErrorSaysWhatAndWhere(t *testing.T) {
	e := &FormatError{Pos: 120, Field: "magic", Err: ErrBadMagic}
	if got, want := e.Error(), ErrBadMagic.Error()+" at position 120 (magic)"; got != want {
		t.Errorf("with a field: %q, want %q", got, want)
	}
	e.Field = ""
	if got, want := e.Error(), ErrBadMagic.Error()+" at position 120"; got != want {
		t.Errorf("without a field: %q, want %q", got, want)
	}
}

// BatchReader frames each boundary of TestNextFramingBoundaries as Next
// does on the whole buffer: the minimum batchLength passes its check (the
// wrong magic is what fails), and a length of exactly the v2 header frames
// a batch of no record; with the size known or not, read whole or a byte
// at a time.
func TestBatchReaderFramingBoundaries(t *testing.T) {
	for _, in := range [][]byte{
		frameOf(LogOverhead, 0, 0),
		frameOf(HeaderSizeUpToMagic, MinBatchLength, 1),
		frameOf(HeaderSizeUpToMagic, MinBatchLength-1, 1),
		frameOf(HeaderSizeUpToMagic, 100, 1),
		frameOf(HeaderSize, HeaderSize-LogOverhead, MagicV2),
		frameOf(HeaderSize, HeaderSize-LogOverhead-1, MagicV2),
		frameOf(HeaderSize-1, HeaderSize-LogOverhead, MagicV2),
	} {
		want := walkReader(in)
		for _, sizes := range [][]byte{nil, {1}} {
			sameSteps(t, "known size", walkStream(t, &chunkReader{data: in, sizes: sizes}, int64(len(in)), len(in)+1), want)
			sameSteps(t, "unknown size", walkStream(t, &chunkReader{data: in, sizes: sizes}, -1, len(in)+1), want)
		}
	}
}

// A BatchReader given the stream's size reads no byte past it: the
// batches after it in the io.Reader are not returned, nor read.
func TestBatchReaderReadsNoFurtherThanItsSize(t *testing.T) {
	seg := bytes.Repeat(corpusSegment(t), 2)
	first, _, _ := Next(seg)
	src := bytes.NewReader(seg)
	r := NewBatchReader(src, 0, int64(len(first)), 0)
	if b, pos, err := r.Next(); err != nil || pos != 0 || !bytes.Equal(b, first) {
		t.Fatalf("first batch: %d bytes at %d, %v", len(b), pos, err)
	}
	if b, pos, err := r.Next(); err != io.EOF || pos != int64(len(first)) {
		t.Fatalf("after the stated size: %d bytes at %d, %v; want io.EOF at %d", len(b), pos, err, len(first))
	}
	if src.Len() != len(seg)-len(first) {
		t.Fatalf("%d bytes read from the io.Reader, the size was %d", len(seg)-src.Len(), len(first))
	}
}

// With the stream's size known, a batch claiming more bytes than the
// stream holds is ErrPartial, as Next says on the whole buffer, even when
// it also claims more than the bound: after a whole batch, with the rest of
// the stream already in the buffer.
func TestBatchReaderPartialAfterABatchEvenAboveTheBound(t *testing.T) {
	seg := corpusSegment(t)
	first, _, _ := Next(seg)
	// The next batch's first 17 bytes, its batchLength claiming 10 bytes
	// more than first: above the bound (first's size), past the stream's end.
	cut := frameOf(HeaderSizeUpToMagic, uint32(len(first)+10-LogOverhead), MagicV2)
	data := append(bytes.Clone(first), cut...)
	want := walkReader(data)
	if len(want) != 2 || !strings.Contains(want[1].err, ErrPartial.Error()) {
		t.Fatalf("Next on the whole buffer: %+v", want)
	}
	sameSteps(t, "known size", walkStream(t, bytes.NewReader(data), int64(len(data)), len(first)), want)
}

// An io.Reader that returns no byte and no error 100 times in a row ends
// the walk with io.ErrNoProgress, as bufio.Reader gives up; 99 times, then
// bytes, and the batch is read.
func TestBatchReaderGivesUpAfter100EmptyReads(t *testing.T) {
	seg := corpusSegment(t)
	first, _, _ := Next(seg)
	for _, size := range []int64{int64(len(first)), -1} {
		r := NewBatchReader(&scriptedReader{empty: 99, data: first, end: io.EOF}, 0, size, 0)
		if b, _, err := r.Next(); err != nil || !bytes.Equal(b, first) {
			t.Errorf("size %d, 99 empty reads: %d bytes, %v; want the batch", size, len(b), err)
		}
		r = NewBatchReader(&scriptedReader{empty: 100, data: first, end: io.EOF}, 0, size, 0)
		if b, pos, err := r.Next(); err != io.ErrNoProgress || b != nil || pos != 0 {
			t.Errorf("size %d, 100 empty reads: %d bytes at %d, %v; want io.ErrNoProgress at 0", size, len(b), pos, err)
		}
	}
}

// A BatchReader walking a stream many chunks long allocates nothing once
// its buffer has grown: the batch left cut at the end of the buffer moves
// to its front, into the same buffer.
func TestBatchReaderAllocsAcrossChunks(t *testing.T) {
	seg := corpusSegment(t)
	data := bytes.Repeat(seg, 4*streamChunk/len(seg)+1)
	src := bytes.NewReader(data)
	r := NewBatchReader(src, 0, int64(len(data)), 0)
	walk := func() {
		n := readAll(t, r)
		if r.Pos() != int64(len(data)) || n == 0 {
			t.Fatalf("%d batches to position %d of %d", n, r.Pos(), len(data))
		}
		src.Reset(data)
		*r = BatchReader{r: src, buf: r.buf, left: int64(len(data)), max: DefaultMaxBatch, CheckCRC: true}
	}
	if allocs := testing.AllocsPerRun(3, walk); allocs != 0 {
		t.Fatalf("%v allocations per walk of %d bytes", allocs, len(data))
	}
}

// Bit 6 of the attributes, and no other, says the batch's baseTimestamp is
// a delete horizon (DefaultRecordBatch's DELETE_HORIZON_FLAG_MASK, 0x40,
// read by hasDeleteHorizonMs); a batch built with it reports it.
func TestAttributesDeleteHorizonIsBit6(t *testing.T) {
	for bit := range 16 {
		if got := Attributes(1 << bit).DeleteHorizon(); got != (bit == 6) {
			t.Errorf("attributes bit %d alone: DeleteHorizon %v", bit, got)
		}
	}
	raw, err := AppendBatch(nil, BatchHeader{Attributes: AttrDeleteHorizon, BaseSequence: -1}, []Record{{Value: []byte("v")}}, CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	if a := Batch(raw).Attributes(); !a.DeleteHorizon() || a.Transactional() || a.Control() {
		t.Fatalf("batch built with the delete-horizon bit: attributes %#x", a)
	}
	if Attributes(0x7f &^ AttrDeleteHorizon).DeleteHorizon() {
		t.Fatal("every other low bit set: DeleteHorizon")
	}
}

// RecordBatch's sentinels are -1 on the wire, each in its field's width
// (eight, four or two 0xff bytes): NO_TIMESTAMP, NO_PRODUCER_ID,
// NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_PARTITION_LEADER_EPOCH.
func TestSentinelsOnTheWire(t *testing.T) {
	h := BatchHeader{
		PartitionLeaderEpoch: NoPartitionLeaderEpoch,
		BaseTimestamp:        NoTimestamp,
		MaxTimestamp:         NoTimestamp,
		ProducerID:           NoProducerID,
		ProducerEpoch:        NoProducerEpoch,
		BaseSequence:         NoSequence,
	}
	b, err := AppendBatch(nil, h, nil, CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name     string
		off, len int
	}{
		{"partitionLeaderEpoch", OffPartitionLeaderEpoch, 4},
		{"baseTimestamp", OffBaseTimestamp, 8},
		{"maxTimestamp", OffMaxTimestamp, 8},
		{"producerId", OffProducerID, 8},
		{"producerEpoch", OffProducerEpoch, 2},
		{"baseSequence", OffBaseSequence, 4},
	} {
		if got := b[f.off : f.off+f.len]; !bytes.Equal(got, bytes.Repeat([]byte{0xff}, f.len)) {
			t.Errorf("%s: % x, want %d bytes 0xff", f.name, got, f.len)
		}
	}
}
