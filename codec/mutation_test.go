package codec

import (
	"errors"
	"math"
	"testing"
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
