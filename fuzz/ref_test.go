package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The references: framing, CRC and record decoding written with
// encoding/binary, hash/crc32 and franz-go's kmsg and decompressors, sharing
// no code with codec.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var be = binary.BigEndian

// refSplit frames buf into v2 batches by their batchLength field, as a
// Kafka log reader does; a cut or malformed tail is an error.
func refSplit(buf []byte) ([][]byte, error) {
	var out [][]byte
	for len(buf) > 0 {
		if len(buf) < 61 {
			return nil, fmt.Errorf("tail of %d bytes", len(buf))
		}
		n := int64(int32(be.Uint32(buf[8:]))) + 12
		if n < 61 || n > int64(len(buf)) {
			return nil, fmt.Errorf("batch length %d of %d bytes left", n, len(buf))
		}
		out = append(out, buf[:n])
		buf = buf[n:]
	}
	return out, nil
}

// refCRCValid: the stored CRC-32C of the bytes from attributes to the end.
func refCRCValid(b []byte) bool { return crc32.Checksum(b[21:], castagnoli) == be.Uint32(b[17:]) }

// refRecord is one record as the reference reads it.
type refRecord struct {
	offsetDelta    int32
	timestampDelta int64
	key, value     []byte
	headers        []kmsg.Header
}

var decompressor = kgo.DefaultDecompressor()

var errRefRecords = errors.New("reference: records do not decode")

// refVarint reads a Kafka varint (max 5 bytes) or varlong (max 10) as
// ByteUtils.readVarint and readVarlong do: bits past the type's width are
// dropped, a longer encoding is an error.
func refVarint(b []byte, max int) (v int64, n int, ok bool) {
	var u uint64
	for i := 0; i < max && i < len(b); i++ {
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			if max == 5 {
				u32 := uint32(u)
				return int64(int32(u32>>1) ^ -int32(u32&1)), i + 1, true
			}
			return int64(u>>1) ^ -int64(u&1), i + 1, true
		}
	}
	return 0, 0, false
}

// refRecords reads b's records as Kafka's DefaultRecordBatch iterator and
// DefaultRecord#readFrom do, with encoding/binary-style code of its own
// (decompressing through franz-go's decompressors): no records when
// recordsCount is 0, an error when it is negative, when a record's fields do
// not fill exactly its length, on a negative header count or header key
// length, and on bytes left after the last record. Where kmsg also decodes a
// record, its field values must be the same (kmsg alone is laxer than Kafka:
// it ignores a negative header count, for one).
func refRecords(b []byte) ([]refRecord, error) {
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		return nil, fmt.Errorf("%w: batch: %v", errRefRecords, err)
	}
	switch {
	case rb.NumRecords == 0:
		return nil, nil
	case rb.NumRecords < 0:
		return nil, fmt.Errorf("%w: records count %d", errRefRecords, rb.NumRecords)
	}
	raw := rb.Records
	if c := rb.Attributes & 7; c != 0 {
		var err error
		if raw, err = decompressor.Decompress(rb.Records, kgo.CompressionCodecType(c)); err != nil {
			return nil, fmt.Errorf("%w: decompress: %v", errRefRecords, err)
		}
	}
	var out []refRecord
	for i := range rb.NumRecords {
		r, n, err := refRecord1(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: record %d: %v", errRefRecords, i, err)
		}
		var k kmsg.Record
		if k.ReadFrom(raw[:n]) == nil {
			if kr := (refRecord{k.OffsetDelta, k.TimestampDelta64, k.Key, k.Value, k.Headers}); !kr.sameValues(r) {
				return nil, fmt.Errorf("reference: record %d: kmsg reads %+v, Kafka's rules %+v", i, kr, r)
			}
		}
		out = append(out, r)
		raw = raw[n:]
	}
	if len(raw) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last record", errRefRecords, len(raw))
	}
	return out, nil
}

// refRecord1 reads the record at the start of raw and its size.
func refRecord1(raw []byte) (r refRecord, size int, err error) {
	l, n, ok := refVarint(raw, 5)
	if !ok || l < 0 || l > int64(len(raw)-n) {
		return r, 0, errors.New("length")
	}
	body := raw[n : n+int(l)]
	p := 1 // attributes, unused
	if len(body) < p {
		return r, 0, errors.New("attributes")
	}
	field := func(max int) int64 {
		if err != nil {
			return 0
		}
		v, k, ok := refVarint(body[p:], max)
		if !ok {
			err = errors.New("varint")
		}
		p += k
		return v
	}
	bytesOf := func(l int64) []byte {
		if err != nil || l < 0 {
			return nil
		}
		if l > int64(len(body)-p) {
			err = errors.New("field past the record")
			return nil
		}
		v := body[p : p+int(l)]
		p += int(l)
		return v
	}
	r.timestampDelta = field(10)
	r.offsetDelta = int32(field(5))
	r.key = bytesOf(field(5))
	r.value = bytesOf(field(5))
	hc := field(5)
	if err == nil && hc < 0 {
		return r, 0, errors.New("negative header count")
	}
	for i := int64(0); err == nil && i < hc; i++ {
		kl := field(5)
		if err == nil && kl < 0 {
			return r, 0, errors.New("negative header key length")
		}
		k := bytesOf(kl)
		v := bytesOf(field(5))
		r.headers = append(r.headers, kmsg.Header{Key: string(k), Value: v})
	}
	if err != nil {
		return r, 0, err
	}
	if p != len(body) {
		return r, 0, fmt.Errorf("fields take %d of the record's %d bytes", p, len(body))
	}
	return r, n + int(l), nil
}

// sameValues compares two decodings of a record by value: kmsg and the
// rules may differ on whether an empty field is a nil slice.
func (r refRecord) sameValues(o refRecord) bool {
	if r.offsetDelta != o.offsetDelta || r.timestampDelta != o.timestampDelta || !bytes.Equal(r.key, o.key) ||
		!bytes.Equal(r.value, o.value) || (r.key == nil) != (o.key == nil) || (r.value == nil) != (o.value == nil) ||
		len(r.headers) != len(o.headers) {
		return false
	}
	for i, h := range r.headers {
		if h.Key != o.headers[i].Key || !bytes.Equal(h.Value, o.headers[i].Value) || (h.Value == nil) != (o.headers[i].Value == nil) {
			return false
		}
	}
	return true
}
