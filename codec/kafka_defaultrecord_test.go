package codec_test

// Kafka's DefaultRecordTest, ported: one Go test per test method, named
// TestKafkaDefaultRecord_<method> (docs/kafka-tests.md). Kafka's
// DefaultRecord.readFrom is ReadRecord and the record iterator
// (NewRecordIter, Batch.Records); DefaultRecord#readPartiallyFrom is
// ReadPartialRecord and NewPartialRecordIter. Kafka reads from a ByteBuffer
// and from an InputStream; codec has one reader over bytes, run here both
// alone and through the iterator.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// kHeaders are the headers of Kafka's DefaultRecordTest: a value, a null
// value, and a key with characters a JSON-ish escape would mangle (the
// literal text of Kafka's Java string, backslashes included).
func kHeaders() []codec.Header {
	return []codec.Header{
		{Key: []byte("foo"), Value: []byte("value")},
		{Key: []byte("bar"), Value: nil},
		{Key: []byte(`"A\u00ea\u00f1\u00fcC"`), Value: []byte("value")},
	}
}

// recordIn returns an iterator over the one record in rec, bound to a
// batch header with the given base offset, timestamp and sequence, the
// arguments of Kafka's DefaultRecord.readFrom.
func recordIn(t *testing.T, rec []byte, baseOffset, baseTimestamp int64, baseSequence int32) codec.RecordIter {
	t.Helper()
	h, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: baseOffset, BaseTimestamp: baseTimestamp,
		BaseSequence: baseSequence, ProducerID: 1}, nil, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return codec.NewRecordIter(rec, 1).In(codec.Batch(h))
}

func headersOf(h codec.Headers) []codec.Header {
	var out []codec.Header
	for x := range h.All() {
		out = append(out, x)
	}
	return out
}

func equalHeaders(a, b []codec.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) ||
			(a[i].Value == nil) != (b[i].Value == nil) {
			return false
		}
	}
	return true
}

// TestKafkaDefaultRecord_testBasicSerde ports DefaultRecordTest#testBasicSerde:
// a record written and read back keeps its key and value (null, empty or
// not) and headers, its absolute offset is the batch's baseOffset plus its
// offsetDelta, its sequence the baseSequence plus the offsetDelta, its
// timestamp the baseTimestamp plus its timestampDelta, and its size is
// what the writer wrote.
func TestKafkaDefaultRecord_testBasicSerde(t *testing.T) {
	cases := []struct {
		key, value []byte
		headers    []codec.Header
	}{
		{[]byte("hi"), []byte("there"), nil},
		{nil, []byte("there"), nil},
		{[]byte("hi"), nil, nil},
		{nil, nil, nil},
		{[]byte("hi"), []byte("there"), kHeaders()},
	}
	const (
		baseSequence   = 723
		baseOffset     = 37
		offsetDelta    = 10
		baseTimestamp  = 1700000000000
		timestampDelta = 323
	)
	for i, c := range cases {
		in := codec.Record{OffsetDelta: offsetDelta, TimestampDelta: timestampDelta, Key: c.key, Value: c.value,
			Headers: codec.MakeHeaders(c.headers...)}
		buf := codec.AppendRecord(nil, in)
		r, n, err := codec.ReadRecord(buf)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if n != len(buf) {
			t.Errorf("case %d: read %d bytes of %d", i, n, len(buf))
		}
		it := recordIn(t, buf, baseOffset, baseTimestamp, baseSequence)
		var ir codec.Record
		if err := it.Read(&ir); err != nil {
			t.Fatalf("case %d: iterator: %v", i, err)
		}
		for _, got := range []codec.Record{r, ir} {
			if !bytes.Equal(got.Key, c.key) || (got.Key == nil) != (c.key == nil) {
				t.Errorf("case %d: key %q, want %q", i, got.Key, c.key)
			}
			if !bytes.Equal(got.Value, c.value) || (got.Value == nil) != (c.value == nil) {
				t.Errorf("case %d: value %q, want %q", i, got.Value, c.value)
			}
			if !equalHeaders(headersOf(got.Headers), c.headers) {
				t.Errorf("case %d: headers %q, want %q", i, headersOf(got.Headers), c.headers)
			}
		}
		if got := it.Offset(&ir); got != baseOffset+offsetDelta {
			t.Errorf("case %d: offset %d", i, got)
		}
		if got := it.Sequence(&ir); got != baseSequence+offsetDelta {
			t.Errorf("case %d: sequence %d", i, got)
		}
		if got := it.Timestamp(&ir); got != baseTimestamp+timestampDelta {
			t.Errorf("case %d: timestamp %d", i, got)
		}
		if it.Pos() != len(buf) {
			t.Errorf("case %d: record size %d, written %d", i, it.Pos(), len(buf))
		}
	}
}

// headerCountRecord is the record of testBasicSerdeInvalidHeaderCount*:
// key "hi", value "there", the three headers; its header count varint is
// byte 14.
func headerCountRecord(t *testing.T) []byte {
	t.Helper()
	buf := codec.AppendRecord(nil, codec.Record{OffsetDelta: 10, TimestampDelta: 323, Key: []byte("hi"),
		Value: []byte("there"), Headers: codec.MakeHeaders(kHeaders()...)})
	if buf[14] != 6 { // zig-zag 3
		t.Fatalf("byte 14 is %d, not the header count 3", buf[14])
	}
	return buf
}

// mustFailFull checks that the full read refuses buf as an invalid record
// (Kafka's InvalidRecordException), alone and through the iterator.
func mustFailFull(t *testing.T, buf []byte) {
	t.Helper()
	if _, _, err := codec.ReadRecord(buf); !errors.Is(err, codec.ErrBadRecord) {
		t.Errorf("ReadRecord: %v, want ErrBadRecord", err)
	}
	it := codec.NewRecordIter(buf, 1)
	var r codec.Record
	if err := it.Read(&r); !errors.Is(err, codec.ErrBadRecord) {
		t.Errorf("RecordIter: %v, want ErrBadRecord", err)
	}
}

// mustFailPartial is mustFailFull for the partial read.
func mustFailPartial(t *testing.T, buf []byte) {
	t.Helper()
	if _, _, err := codec.ReadPartialRecord(buf); !errors.Is(err, codec.ErrBadRecord) {
		t.Errorf("ReadPartialRecord: %v, want ErrBadRecord", err)
	}
	it := codec.NewPartialRecordIter(buf, 1)
	var r codec.Record
	if err := it.Read(&r); !errors.Is(err, codec.ErrBadRecord) {
		t.Errorf("partial RecordIter: %v, want ErrBadRecord", err)
	}
}

// TestKafkaDefaultRecord_testBasicSerdeInvalidHeaderCountTooHigh ports
// DefaultRecordTest#testBasicSerdeInvalidHeaderCountTooHigh: a header count
// of 4 over three headers runs past the record and is invalid.
func TestKafkaDefaultRecord_testBasicSerdeInvalidHeaderCountTooHigh(t *testing.T) {
	buf := headerCountRecord(t)
	buf[14] = 8
	mustFailFull(t, buf)
}

// TestKafkaDefaultRecord_testBasicSerdeInvalidHeaderCountTooLow ports
// DefaultRecordTest#testBasicSerdeInvalidHeaderCountTooLow: a header count
// of 2 over three headers leaves bytes of the record unread, which is
// invalid.
func TestKafkaDefaultRecord_testBasicSerdeInvalidHeaderCountTooLow(t *testing.T) {
	buf := headerCountRecord(t)
	buf[14] = 4
	mustFailFull(t, buf)
}

// body100 builds the records of Kafka's malformed-field tests: a length
// varint saying 100, then the given fields, then zeros up to the 100 bytes.
func body100(fields ...[]byte) []byte {
	buf := binary.AppendVarint(nil, 100)
	start := len(buf)
	buf = append(buf, 0) // attributes
	buf = binary.AppendVarint(buf, 2)
	buf = binary.AppendVarint(buf, 1)
	for _, f := range fields {
		buf = append(buf, f...)
	}
	return append(buf, make([]byte, 100-(len(buf)-start))...)
}

func varint(v int64) []byte { return binary.AppendVarint(nil, v) }

// TestKafkaDefaultRecord_testInvalidKeySize ports
// DefaultRecordTest#testInvalidKeySize: a key length beyond the record is
// invalid.
func TestKafkaDefaultRecord_testInvalidKeySize(t *testing.T) {
	mustFailFull(t, body100(varint(105)))
}

// TestKafkaDefaultRecord_testInvalidKeySizePartial ports
// DefaultRecordTest#testInvalidKeySizePartial: the partial read, which
// skips the key, still refuses a key length beyond the data.
func TestKafkaDefaultRecord_testInvalidKeySizePartial(t *testing.T) {
	mustFailPartial(t, body100(varint(105)))
}

// TestKafkaDefaultRecord_testInvalidValueSize ports
// DefaultRecordTest#testInvalidValueSize: a value length beyond the record
// is invalid.
func TestKafkaDefaultRecord_testInvalidValueSize(t *testing.T) {
	mustFailFull(t, body100(varint(-1), varint(105)))
}

// TestKafkaDefaultRecord_testInvalidValueSizePartial ports
// DefaultRecordTest#testInvalidValueSizePartial: the partial read refuses a
// value length beyond the data.
func TestKafkaDefaultRecord_testInvalidValueSizePartial(t *testing.T) {
	mustFailPartial(t, body100(varint(-1), varint(105)))
}

// TestKafkaDefaultRecord_testInvalidNumHeaders ports
// DefaultRecordTest#testInvalidNumHeaders: a negative header count is
// invalid, and so is a count larger than the bytes left in the record.
func TestKafkaDefaultRecord_testInvalidNumHeaders(t *testing.T) {
	mustFailFull(t, body100(varint(-1), varint(-1), varint(-1)))
	mustFailFull(t, body100(varint(-1), varint(-1), varint(100)))
}

// TestKafkaDefaultRecord_testInvalidNumHeadersPartial ports
// DefaultRecordTest#testInvalidNumHeadersPartial: the partial read refuses
// a negative header count too.
func TestKafkaDefaultRecord_testInvalidNumHeadersPartial(t *testing.T) {
	mustFailPartial(t, body100(varint(-1), varint(-1), varint(-1)))
}

// TestKafkaDefaultRecord_testInvalidHeaderKey ports
// DefaultRecordTest#testInvalidHeaderKey: a header key length beyond the
// record is invalid.
func TestKafkaDefaultRecord_testInvalidHeaderKey(t *testing.T) {
	mustFailFull(t, body100(varint(-1), varint(-1), varint(1), varint(105)))
}

// TestKafkaDefaultRecord_testInvalidHeaderKeyPartial ports
// DefaultRecordTest#testInvalidHeaderKeyPartial: the partial read refuses a
// header key length beyond the data.
func TestKafkaDefaultRecord_testInvalidHeaderKeyPartial(t *testing.T) {
	mustFailPartial(t, body100(varint(-1), varint(-1), varint(1), varint(105)))
}

// TestKafkaDefaultRecord_testNullHeaderKey ports
// DefaultRecordTest#testNullHeaderKey: a header key cannot be null (length
// -1).
func TestKafkaDefaultRecord_testNullHeaderKey(t *testing.T) {
	buf := body100(varint(-1), varint(-1), varint(1), varint(-1))
	mustFailFull(t, buf)
	if _, _, err := codec.ReadRecord(buf); !errors.Is(err, codec.ErrHeaderKeyLength) {
		t.Errorf("ReadRecord: %v, want ErrHeaderKeyLength", err)
	}
}

// TestKafkaDefaultRecord_testNullHeaderKeyPartial ports
// DefaultRecordTest#testNullHeaderKeyPartial: the partial read refuses a
// null header key too (it treats null keys and values as null, but not
// header keys).
func TestKafkaDefaultRecord_testNullHeaderKeyPartial(t *testing.T) {
	buf := body100(varint(-1), varint(-1), varint(1), varint(-1))
	mustFailPartial(t, buf)
	if _, _, err := codec.ReadPartialRecord(buf); !errors.Is(err, codec.ErrHeaderKeyLength) {
		t.Errorf("ReadPartialRecord: %v, want ErrHeaderKeyLength", err)
	}
}

// TestKafkaDefaultRecord_testInvalidHeaderValue ports
// DefaultRecordTest#testInvalidHeaderValue: a header value length beyond
// the record is invalid.
func TestKafkaDefaultRecord_testInvalidHeaderValue(t *testing.T) {
	mustFailFull(t, body100(varint(-1), varint(-1), varint(1), varint(1), []byte{1}, varint(105)))
}

// TestKafkaDefaultRecord_testInvalidHeaderValuePartial ports
// DefaultRecordTest#testInvalidHeaderValuePartial: the partial read refuses
// a header value length beyond the data.
func TestKafkaDefaultRecord_testInvalidHeaderValuePartial(t *testing.T) {
	mustFailPartial(t, body100(varint(-1), varint(-1), varint(1), varint(1), []byte{1}, varint(105)))
}

// TestKafkaDefaultRecord_testUnderflowReadingTimestamp ports
// DefaultRecordTest#testUnderflowReadingTimestamp: a record whose length
// covers only the attributes, so that the timestamp delta is missing, is
// invalid.
func TestKafkaDefaultRecord_testUnderflowReadingTimestamp(t *testing.T) {
	mustFailFull(t, append(varint(1), 0))
}

// TestKafkaDefaultRecord_testUnderflowReadingVarlong ports
// DefaultRecordTest#testUnderflowReadingVarlong: a timestamp delta varlong
// cut after its first byte is invalid.
func TestKafkaDefaultRecord_testUnderflowReadingVarlong(t *testing.T) {
	ts := varint(156) // two bytes
	if len(ts) != 2 {
		t.Fatalf("varlong 156 is %d bytes", len(ts))
	}
	mustFailFull(t, append(append(varint(2), 0), ts[0]))
}

// TestKafkaDefaultRecord_testInvalidVarlong ports
// DefaultRecordTest#testInvalidVarlong: a varlong whose tenth byte still
// says "more follows" is invalid.
func TestKafkaDefaultRecord_testInvalidVarlong(t *testing.T) {
	buf := append(varint(11), 0)
	buf = binary.AppendVarint(buf, math.MaxInt64) // ten bytes
	if len(buf) != 12 {
		t.Fatalf("%d bytes", len(buf))
	}
	buf[1+10] = 0x80
	mustFailFull(t, buf)
	if _, _, err := codec.ReadRecord(buf); !errors.Is(err, codec.ErrBadVarint) {
		t.Errorf("ReadRecord: %v, want ErrBadVarint", err)
	}
}

// TestKafkaDefaultRecord_testSerdeNoSequence ports
// DefaultRecordTest#testSerdeNoSequence: in a batch without a base sequence
// (-1) every record's sequence is -1.
func TestKafkaDefaultRecord_testSerdeNoSequence(t *testing.T) {
	buf := codec.AppendRecord(nil, codec.Record{OffsetDelta: 10, TimestampDelta: 323, Key: []byte("hi"),
		Value: []byte("there")})
	it := recordIn(t, buf, 37, 1700000000000, codec.NoSequence)
	var r codec.Record
	if err := it.Read(&r); err != nil {
		t.Fatal(err)
	}
	if s := it.Sequence(&r); s != codec.NoSequence {
		t.Errorf("sequence %d, want -1", s)
	}
}

// TestKafkaDefaultRecord_testInvalidSizeOfBodyInBytes ports
// DefaultRecordTest#testInvalidSizeOfBodyInBytes: a length varint saying 10
// with no bytes after it is invalid.
func TestKafkaDefaultRecord_testInvalidSizeOfBodyInBytes(t *testing.T) {
	mustFailFull(t, varint(10))
}
