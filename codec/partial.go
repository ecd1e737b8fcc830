package codec

// The partial record read: what Kafka's LogValidator reads of each record of
// a compressed batch it validates in place (DefaultRecordBatch
// #skipKeyValueIterator, DefaultRecord#readPartiallyFrom). It differs from
// DefaultRecord.readFrom, which NewRecordIter follows, in what it does not
// check:
//
//   - the record's length varint is read and then ignored: the next record
//     starts where this one's fields end, whatever the length said;
//   - the header count is bounded only by the bytes there are (no "larger
//     than the bytes left" check);
//   - a key, value or header value length below -1 is null, like -1.
//
// It still fails, as Kafka does, on a varint longer than 5 (10) bytes or cut
// by the end of the data, a negative header count or header key length, a
// length that runs past the end of the data, and bytes left after the
// count-th record (DefaultRecordBatch's "records still remaining").
//
// Records read partially carry Attributes, TimestampDelta, OffsetDelta, Key
// and Value (aliasing the data, as after a full read); Headers is left
// empty.

// NewPartialRecordIter iterates count records in records with the partial
// read above; otherwise as NewRecordIter.
func NewPartialRecordIter(records []byte, count int32) RecordIter {
	it := NewRecordIter(records, count)
	it.partial = true
	return it
}

// ReadPartialRecord decodes the record at the start of src with the partial
// read and returns it with the number of bytes it took: ReadRecord's
// counterpart. O(record size), no allocation.
func ReadPartialRecord(src []byte) (r Record, n int, err error) {
	n, err = readPartialRecord(src, &r)
	if err != nil {
		return Record{}, 0, err
	}
	return r, n, nil
}

// readPartialRecord is ReadPartialRecord writing into *r, which must be zero.
func readPartialRecord(src []byte, r *Record) (int, error) {
	_, p := next32(src, 0) // the record length, ignored
	if p <= 0 {
		return 0, partialErr(p)
	}
	if p >= len(src) {
		return 0, ErrRecordTruncated
	}
	r.Attributes = int8(src[p])
	p++
	var k int
	if r.TimestampDelta, k = next64(src, p); k <= 0 {
		return 0, partialErr(k)
	}
	p = k
	if r.OffsetDelta, k = next32(src, p); k <= 0 {
		return 0, partialErr(k)
	}
	p = k
	for _, field := range []*[]byte{&r.Key, &r.Value} {
		l, k := next32(src, p)
		if k <= 0 {
			return 0, partialErr(k)
		}
		p = k
		if l >= 0 {
			if int(l) > len(src)-p {
				return 0, ErrRecordTruncated
			}
			*field = src[p : p+int(l) : p+int(l)]
			p += int(l)
		}
	}
	hc, k := next32(src, p)
	if k <= 0 {
		return 0, partialErr(k)
	}
	p = k
	if hc < 0 {
		return 0, ErrHeaderCount
	}
	for range hc { // each header takes at least 2 bytes: bounded by len(src)
		kl, k := next32(src, p)
		if k <= 0 {
			return 0, partialErr(k)
		}
		p = k
		if kl < 0 {
			return 0, ErrHeaderKeyLength
		}
		if int(kl) > len(src)-p {
			return 0, ErrRecordTruncated
		}
		p += int(kl)
		vl, k := next32(src, p)
		if k <= 0 {
			return 0, partialErr(k)
		}
		p = k
		if vl > 0 {
			if int(vl) > len(src)-p {
				return 0, ErrRecordTruncated
			}
			p += int(vl)
		}
	}
	return p, nil
}

func partialErr(k int) error {
	if k < 0 {
		return ErrBadVarint
	}
	return ErrRecordTruncated
}
