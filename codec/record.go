package codec

import (
	"errors"
	"io"
	"iter"
)

// Record-level errors. Each matches ErrBadRecord and ErrCorruption with
// errors.Is, so callers that only care about "invalid record" (Kafka's
// InvalidRecordException) test for ErrBadRecord; tests and the dump tool can
// tell the defects of DefaultRecord#readFrom and the DefaultRecordBatch
// iterator apart.
var (
	ErrRecordsCount    = badRecord("codec: negative records count")
	ErrRecordTruncated = badRecord("codec: premature end of records")
	ErrRecordsLeftover = badRecord("codec: bytes left after the last record")
	ErrRecordLength    = badRecord("codec: record fields do not match its length")
	ErrBadVarint       = badRecord("codec: varint longer than 5 bytes (varlong 10)")
	ErrHeaderCount     = badRecord("codec: invalid record header count")
	ErrHeaderKeyLength = badRecord("codec: negative record header key length")
)

// Conditions that are not defects of the bytes; they do not match ErrCorruption.
var (
	// ErrCompressed: the records of a compressed batch were asked for without
	// decompressing them first (use Decompress or Batch.OpenRecords).
	ErrCompressed = errors.New("codec: records are compressed; decompress them first")
	// ErrNoRecords: a control batch with recordsCount 0 (compaction can leave
	// one). Kafka's producer state treats it as a no-op.
	ErrNoRecords = errors.New("codec: batch has no records")
)

// badRecordError is a sentinel that matches ErrBadRecord and ErrCorruption.
type badRecordError struct{ msg string }

func badRecord(msg string) error          { return &badRecordError{msg} }
func (e *badRecordError) Error() string   { return e.msg }
func (e *badRecordError) Is(t error) bool { return t == ErrBadRecord || t == ErrCorruption }

// Record is one v2 record (DefaultRecord; docs/format.md):
//
//	length          varint   bytes after this field
//	attributes      int8     unused; writers emit 0
//	timestampDelta  varlong  relative to the batch baseTimestamp
//	offsetDelta     varint   relative to the batch baseOffset
//	keyLength       varint   negative => null key
//	key             bytes
//	valueLength     varint   negative => null value
//	value           bytes
//	headerCount     varint   >= 0
//	headers         (keyLength varint >= 0, key, valueLength varint, value)...
//
// A decoded Record aliases the bytes it was read from: Key, Value and the
// header bytes point into the batch (uncompressed) or into the caller's
// decompression buffer. Nil means null; an empty non-nil slice is a
// zero-length key or value. The slices are capped, so appending to them never
// writes into the batch.
type Record struct {
	Attributes     int8
	TimestampDelta int64
	OffsetDelta    int32
	Key, Value     []byte
	Headers        Headers
}

// Header is one record header. Key is UTF-8 in Kafka and never null; Value
// nil is a null value.
type Header struct {
	Key, Value []byte
}

// Headers is the encoded header section of a record: a count and the raw
// (keyLength, key, valueLength, value) entries, validated when the record was
// decoded or built by MakeHeaders. The zero value has no headers. It aliases
// the bytes it came from; walking it does not allocate.
type Headers struct {
	raw []byte
	n   int32
}

// MakeHeaders encodes hs into a new Headers for the builder. It allocates one
// slice; a nil key is written as an empty key.
func MakeHeaders(hs ...Header) Headers {
	var raw []byte
	for _, h := range hs {
		raw = appendVarint32(raw, int32(len(h.Key)))
		raw = append(raw, h.Key...)
		raw = appendBytes(raw, h.Value)
	}
	return Headers{raw: raw, n: int32(len(hs))}
}

// Len is the number of headers.
func (h Headers) Len() int { return int(h.n) }

// Raw is the encoded entries without the leading count; it aliases h.
func (h Headers) Raw() []byte { return h.raw }

// Next splits the first header off h. ok is false when h is empty.
func (h Headers) Next() (first Header, rest Headers, ok bool) {
	if h.n <= 0 {
		return Header{}, Headers{}, false
	}
	b := h.raw
	kl, k := readVarint32(b)
	p := k
	first.Key = b[p : p+int(kl) : p+int(kl)]
	p += int(kl)
	vl, k := readVarint32(b[p:])
	p += k
	if vl >= 0 {
		first.Value = b[p : p+int(vl) : p+int(vl)]
		p += int(vl)
	}
	return first, Headers{raw: b[p:], n: h.n - 1}, true
}

// All yields every header in order.
func (h Headers) All() iter.Seq[Header] {
	return func(yield func(Header) bool) {
		for {
			first, rest, ok := h.Next()
			if !ok || !yield(first) {
				return
			}
			h = rest
		}
	}
}

// appendBytes appends a varint length and b; nil is written as length -1.
func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, 1) // zig-zag -1
	}
	dst = appendVarint32(dst, int32(len(b)))
	return append(dst, b...)
}

// bodyErr maps a failed varint read inside a record body to its error.
func bodyErr(n int) error {
	if n < 0 {
		return ErrBadVarint
	}
	return ErrRecordLength
}

// ReadRecord decodes the record at the start of src and returns it with the
// number of bytes it took. It makes every check of DefaultRecord.readFrom:
// the body fits in src, varints are at most 5 (10) bytes, the header count is
// neither negative nor larger than the bytes left, header key lengths are not
// negative, and the fields consume exactly the declared length. The record
// aliases src. O(record size), no allocation.
func ReadRecord(src []byte) (r Record, n int, err error) {
	n, err = readRecord(src, &r)
	if err != nil {
		return Record{}, 0, err
	}
	return r, n, nil
}

// readRecord is ReadRecord writing into *r, which must be zero; on error
// *r is left partly filled.
func readRecord(src []byte, r *Record) (n int, err error) {
	// Every varint below takes its one- and two-byte cases inline and calls
	// next32Slow/next64Slow otherwise; a helper that said this once would
	// not fit the inliner's budget.
	var length int32
	k := 0
	if n < len(src) && src[n] < 0x80 {
		c := int32(src[n])
		length, n = c>>1^-(c&1), n+1
	} else if n+1 < len(src) && src[n+1] < 0x80 {
		u := uint32(src[n]&0x7f) | uint32(src[n+1])<<7
		length, n = int32(u>>1)^-int32(u&1), n+2
	} else if length, k = next32Slow(src, n); k <= 0 {
		if k == 0 {
			return 0, ErrRecordTruncated
		}
		return 0, ErrBadVarint
	} else {
		n = k
	}
	if length < 0 {
		return 0, ErrRecordLength
	}
	if int(length) > len(src)-n {
		return 0, ErrRecordTruncated
	}
	b := src[n : n+int(length) : n+int(length)]
	n += int(length)
	if len(b) == 0 {
		return 0, ErrRecordLength
	}
	r.Attributes = int8(b[0])
	p := 1
	if p < len(b) && b[p] < 0x80 {
		c := int64(b[p])
		r.TimestampDelta, p = c>>1^-(c&1), p+1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint64(b[p]&0x7f) | uint64(b[p+1])<<7
		r.TimestampDelta, p = int64(u>>1)^-int64(u&1), p+2
	} else if r.TimestampDelta, k = next64Slow(b, p); k <= 0 {
		return 0, bodyErr(k)
	} else {
		p = k
	}
	if p < len(b) && b[p] < 0x80 {
		c := int32(b[p])
		r.OffsetDelta, p = c>>1^-(c&1), p+1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint32(b[p]&0x7f) | uint32(b[p+1])<<7
		r.OffsetDelta, p = int32(u>>1)^-int32(u&1), p+2
	} else if r.OffsetDelta, k = next32Slow(b, p); k <= 0 {
		return 0, bodyErr(k)
	} else {
		p = k
	}
	var l int32
	if p < len(b) && b[p] < 0x80 {
		c := int32(b[p])
		l, p = c>>1^-(c&1), p+1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint32(b[p]&0x7f) | uint32(b[p+1])<<7
		l, p = int32(u>>1)^-int32(u&1), p+2
	} else if l, k = next32Slow(b, p); k <= 0 {
		return 0, bodyErr(k)
	} else {
		p = k
	}
	if l >= 0 {
		if int(l) > len(b)-p {
			return 0, ErrRecordLength
		}
		r.Key = b[p : p+int(l) : p+int(l)]
		p += int(l)
	}
	if p < len(b) && b[p] < 0x80 {
		c := int32(b[p])
		l, p = c>>1^-(c&1), p+1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint32(b[p]&0x7f) | uint32(b[p+1])<<7
		l, p = int32(u>>1)^-int32(u&1), p+2
	} else if l, k = next32Slow(b, p); k <= 0 {
		return 0, bodyErr(k)
	} else {
		p = k
	}
	if l >= 0 {
		if int(l) > len(b)-p {
			return 0, ErrRecordLength
		}
		r.Value = b[p : p+int(l) : p+int(l)]
		p += int(l)
	}
	var hc int32
	if p < len(b) && b[p] < 0x80 {
		c := int32(b[p])
		hc, p = c>>1^-(c&1), p+1
	} else if p+1 < len(b) && b[p+1] < 0x80 {
		u := uint32(b[p]&0x7f) | uint32(b[p+1])<<7
		hc, p = int32(u>>1)^-int32(u&1), p+2
	} else if hc, k = next32Slow(b, p); k <= 0 {
		return 0, bodyErr(k)
	} else {
		p = k
	}
	if hc == 0 {
		if p != len(b) {
			return 0, ErrRecordLength
		}
		return n, nil
	}
	if hc < 0 || int(hc) > len(b)-p {
		return 0, ErrHeaderCount
	}
	hstart := p
	for range hc {
		hk, k := next32Slow(b, p)
		if k <= 0 {
			return 0, bodyErr(k)
		}
		p = k
		if hk < 0 {
			return 0, ErrHeaderKeyLength
		}
		if int(hk) > len(b)-p {
			return 0, ErrRecordLength
		}
		p += int(hk)
		hv, k := next32Slow(b, p)
		if k <= 0 {
			return 0, bodyErr(k)
		}
		p = k
		if hv >= 0 {
			if int(hv) > len(b)-p {
				return 0, ErrRecordLength
			}
			p += int(hv)
		}
	}
	if p != len(b) {
		return 0, ErrRecordLength
	}
	r.Headers = Headers{raw: b[hstart:p:p], n: hc}
	return n, nil
}

// AppendRecord appends r in the v2 record encoding. Null (nil) key and value
// are written with length -1. O(record size); no allocation beyond growing dst.
func AppendRecord(dst []byte, r Record) []byte {
	dst = appendVarint32(dst, int32(r.bodySize()))
	return r.appendBody(dst)
}

// bodySize is the length field of r: everything after it.
func (r *Record) bodySize() int {
	n := 1 + sizeVarint64(r.TimestampDelta) + sizeVarint32(r.OffsetDelta)
	n += bytesSize(r.Key) + bytesSize(r.Value)
	n += sizeVarint32(r.Headers.n) + len(r.Headers.raw)
	return n
}

func (r *Record) appendBody(dst []byte) []byte {
	dst = append(dst, byte(r.Attributes))
	dst = appendVarint64(dst, r.TimestampDelta)
	dst = appendVarint32(dst, r.OffsetDelta)
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = appendVarint32(dst, r.Headers.n)
	return append(dst, r.Headers.raw...)
}

func bytesSize(b []byte) int {
	if b == nil {
		return 1
	}
	return sizeVarint32(int32(len(b))) + len(b)
}

// RecordIter walks the records of one batch (DefaultRecordBatch.RecordIterator).
// It returns exactly recordsCount records and then io.EOF. Kafka's iterator
// checks apply: a negative count is ErrRecordsCount; a count of 0 yields
// nothing and does not look at the bytes; running out of bytes before the
// count-th record is ErrRecordTruncated; bytes left after the count-th record
// are ErrRecordsLeftover, reported instead of that last record, as Kafka
// throws on it. After an error every call returns the same error.
//
// Records alias the iterated bytes. Not safe for concurrent use; the zero
// value yields nothing.
type RecordIter struct {
	data    []byte
	left    int32
	pos     int
	err     error
	partial bool  // NewPartialRecordIter: Kafka's partial read (partial.go)
	batch   Batch // the header the records belong to (In), nil if none
}

// In returns it bound to the batch whose records it walks, for Offset,
// Timestamp and Sequence; only b's header is read. Batch.Records and
// Batch.OpenRecords bind their iterators already.
func (it RecordIter) In(b Batch) RecordIter {
	if len(b) >= HeaderSize {
		it.batch = b[:HeaderSize:HeaderSize]
	}
	return it
}

// Offset is r's absolute offset, the batch's baseOffset plus r's
// offsetDelta (DefaultRecord#offset); with no batch bound (In), the
// offsetDelta.
func (it *RecordIter) Offset(r *Record) int64 {
	if it.batch == nil {
		return int64(r.OffsetDelta)
	}
	return it.batch.BaseOffset() + int64(r.OffsetDelta)
}

// Timestamp is r's timestamp as DefaultRecordBatch's iterator gives it: the
// batch's maxTimestamp under LogAppendTime, else its baseTimestamp plus r's
// timestampDelta; with no batch bound (In), the timestampDelta.
func (it *RecordIter) Timestamp(r *Record) int64 {
	switch {
	case it.batch == nil:
		return r.TimestampDelta
	case it.batch.Attributes().LogAppendTime():
		return it.batch.MaxTimestamp()
	}
	return it.batch.BaseTimestamp() + r.TimestampDelta
}

// Sequence is r's sequence as DefaultRecord.readFrom computes it:
// NoSequence when the batch's baseSequence is negative (any negative value,
// not only -1), else baseSequence advanced by r's offsetDelta with
// wrap-around (DefaultRecordBatch.incrementSequence); NoSequence with no
// batch bound (In).
func (it *RecordIter) Sequence(r *Record) int32 {
	if it.batch == nil || it.batch.BaseSequence() < 0 {
		return NoSequence
	}
	return IncrementSequence(it.batch.BaseSequence(), r.OffsetDelta)
}

// NewRecordIter iterates count records encoded back to back in records: the
// records section of an uncompressed batch, or the output of Decompress.
func NewRecordIter(records []byte, count int32) RecordIter {
	switch {
	case count < 0:
		return RecordIter{err: ErrRecordsCount}
	case count == 0:
		return RecordIter{}
	}
	return RecordIter{data: records, left: count}
}

// Records iterates the records of an uncompressed batch. For a compressed
// batch with records the iterator yields ErrCompressed; use OpenRecords or
// Decompress. O(1) to create, no allocation.
func (b Batch) Records() RecordIter {
	n := b.RecordsCount()
	if n > 0 && b.Compression() != CompressionNone {
		return RecordIter{err: ErrCompressed}
	}
	return NewRecordIter(b[HeaderSize:], n).In(b)
}

// Next returns the next record, io.EOF after the last one, or the first
// defect found. O(record size), no allocation. Read reads into a caller's
// Record and saves the copy of the result, for hot loops.
func (it *RecordIter) Next() (Record, error) {
	var r Record
	if err := it.Read(&r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Read is Next writing the record into *r (every field is overwritten). On
// error *r is left zero.
func (it *RecordIter) Read(r *Record) error {
	if it.err != nil {
		*r = Record{}
		return it.err
	}
	if it.left == 0 {
		*r = Record{}
		it.err = io.EOF
		return io.EOF
	}
	*r = Record{}
	var n int
	var err error
	if it.partial {
		n, err = readPartialRecord(it.data, r)
	} else {
		n, err = readRecord(it.data, r)
	}
	if err != nil {
		*r = Record{}
		it.err = err
		return err
	}
	it.data = it.data[n:]
	it.pos += n
	it.left--
	if it.left == 0 && len(it.data) != 0 {
		*r = Record{}
		it.err = ErrRecordsLeftover
		return it.err
	}
	return nil
}

// Pos is the offset, within the records bytes, of the next record, or of the
// record at fault after an error.
func (it *RecordIter) Pos() int { return it.pos }

// All yields the records, then a final (Record{}, err) pair if iteration
// stopped on a defect; it yields nothing for io.EOF.
func (it *RecordIter) All() iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for {
			r, err := it.Next()
			if err == io.EOF {
				return
			}
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}
