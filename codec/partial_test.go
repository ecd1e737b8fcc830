package codec

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// refKafkaVarint reads like ByteUtils.readVarint(InputStream): -1 at the end
// of the stream is a byte with the continuation bit, so a cut varint fails
// once it is too long.
func refKafkaVarint(r *bytes.Reader, maxShift uint) (uint64, error) {
	var v uint64
	var shift uint
	for {
		b := -1
		if c, err := r.ReadByte(); err == nil {
			b = int(c)
		}
		if b&0x80 == 0 {
			return v | uint64(b)<<shift, nil
		}
		v |= uint64(b&0x7f) << shift
		shift += 7
		if shift > maxShift {
			return 0, errors.New("varint too long")
		}
	}
}

func refInt(r *bytes.Reader) (int32, error) {
	u, err := refKafkaVarint(r, 28)
	u32 := uint32(u)
	return int32(u32>>1) ^ -int32(u32&1), err
}

func refSkip(r *bytes.Reader, n int32) error {
	if n <= 0 {
		return nil
	}
	if int64(n) > int64(r.Len()) {
		return errors.New("end of stream while skipping")
	}
	_, err := r.Seek(int64(n), io.SeekCurrent)
	return err
}

// refPartial walks count records as DefaultRecord#readPartiallyFrom over an
// InputStream, then DefaultRecordBatch's final read() == -1 check, and
// returns each record's offset delta and key size.
func refPartial(data []byte, count int32) (offs []int32, keys []int32, err error) {
	if count == 0 {
		return nil, nil, nil // DefaultRecordBatch: an empty iterator, nothing read
	}
	r := bytes.NewReader(data)
	for range count {
		if _, err := refInt(r); err != nil { // length
			return nil, nil, err
		}
		r.ReadByte() // attributes: (byte) read(), -1 at the end is no error
		if _, err := refKafkaVarint(r, 63); err != nil {
			return nil, nil, err
		}
		off, err := refInt(r)
		if err != nil {
			return nil, nil, err
		}
		var sizes [2]int32
		for i := range sizes {
			if sizes[i], err = refInt(r); err != nil {
				return nil, nil, err
			}
			if err := refSkip(r, sizes[i]); err != nil {
				return nil, nil, err
			}
		}
		hc, err := refInt(r)
		if err != nil {
			return nil, nil, err
		}
		if hc < 0 {
			return nil, nil, errors.New("header count")
		}
		for range hc {
			kl, err := refInt(r)
			if err != nil {
				return nil, nil, err
			}
			if kl < 0 {
				return nil, nil, errors.New("header key length")
			}
			if err := refSkip(r, kl); err != nil {
				return nil, nil, err
			}
			vl, err := refInt(r)
			if err != nil {
				return nil, nil, err
			}
			if err := refSkip(r, vl); err != nil {
				return nil, nil, err
			}
		}
		offs, keys = append(offs, off), append(keys, max(sizes[0], -1)) // any negative size: null
	}
	if r.Len() > 0 {
		return nil, nil, errors.New("records still remaining")
	}
	return offs, keys, nil
}

func walkPartial(data []byte, count int32) (offs, keys []int32, err error) {
	it := NewPartialRecordIter(data, count)
	for {
		var r Record
		if err := it.Read(&r); err != nil {
			if err == io.EOF {
				return offs, keys, nil
			}
			return nil, nil, err
		}
		k := int32(-1)
		if r.Key != nil {
			k = int32(len(r.Key))
		}
		offs, keys = append(offs, r.OffsetDelta), append(keys, k)
	}
}

// TestPartialRecordRules: what the partial read lets through and what it
// still refuses, each against DefaultRecord#readPartiallyFrom's code.
func TestPartialRecordRules(t *testing.T) {
	rec := func(fields ...[]byte) []byte { return cat(fields...) }
	v := func(n int32) []byte { return appendVarint32(nil, n) }
	body := rec([]byte{0}, v(0), v(0), v(1), []byte("k"), v(1), []byte("v"), v(0)) // attrs, tsΔ, offΔ, key, value, 0 headers
	cases := []struct {
		name    string
		data    []byte
		partial bool // Kafka's partial read accepts
		full    bool // DefaultRecord.readFrom accepts
	}{
		{"well formed", rec(v(int32(len(body))), body), true, true},
		{"length too large, ignored", rec(v(int32(len(body)+9)), body), true, false},
		{"length too small, ignored", rec(v(2), body), true, false},
		{"negative length, ignored", rec(v(-3), body), true, false},
		{"key length -5 is null", rec(v(7), []byte{0}, v(0), v(0), v(-5), v(1), []byte("v"), v(0)), true, true},
		{"header count past the bytes left", rec(v(9), []byte{0}, v(0), v(0), v(-1), v(-1), v(3), v(0), v(-1), v(0), v(-1), v(0), v(-1)), true, false},
		{"header count runs out", rec(v(9), []byte{0}, v(0), v(0), v(-1), v(-1), v(4), v(0), v(-1), v(0), v(-1), v(0), v(-1)), false, false},
		{"negative header count", rec(v(5), []byte{0}, v(0), v(0), v(-1), v(-1), v(-1)), false, false},
		{"negative header key length", rec(v(7), []byte{0}, v(0), v(0), v(-1), v(-1), v(1), v(-1), v(-1)), false, false},
		{"key runs past the end", rec(v(5), []byte{0}, v(0), v(0), v(9), []byte("k")), false, false},
		{"6-byte varint", rec(v(5), []byte{0}, v(0), []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0}, v(-1), v(-1), v(0)), false, false},
		{"cut after attributes", rec(v(1), []byte{0}), false, false},
		{"bytes after the record", rec(v(int32(len(body))), body, []byte{0}), false, false},
	}
	for _, c := range cases {
		_, _, perr := walkPartial(c.data, 1)
		_, _, rerr := refPartial(c.data, 1)
		_, ferr := walkAll(NewRecordIter(c.data, 1))
		if (perr == nil) != c.partial || (rerr == nil) != c.partial {
			t.Errorf("%s: partial read %v, reference %v, Kafka accepts: %v", c.name, perr, rerr, c.partial)
		}
		if perr != nil && !errors.Is(perr, ErrCorruption) {
			t.Errorf("%s: unclassified %v", c.name, perr)
		}
		if (ferr == nil) != c.full {
			t.Errorf("%s: full read %v, DefaultRecord.readFrom accepts: %v", c.name, ferr, c.full)
		}
	}
}

// TestPartialRecordAllocs: the partial walk allocates nothing.
func TestPartialRecordAllocs(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(9, 9)), 50, 60)
	var data []byte
	for _, r := range recs {
		data = AppendRecord(data, r)
	}
	if n := testing.AllocsPerRun(50, func() {
		it := NewPartialRecordIter(data, int32(len(recs)))
		var r Record
		for it.Read(&r) == nil {
		}
	}); n != 0 {
		t.Fatalf("%v allocs", n)
	}
}

// FuzzPartialRecords holds the partial read to refPartial, and to the full
// read wherever the full read succeeds (the partial read accepts a superset
// and returns the same offsets and keys).
func FuzzPartialRecords(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		recs := randomRecords(rng, 1+rng.IntN(5), 40)
		var data []byte
		for _, r := range recs {
			data = AppendRecord(data, r)
		}
		f.Add(data, uint8(len(recs)))
	}
	f.Fuzz(func(t *testing.T, data []byte, count uint8) {
		n := int32(count % 16)
		offs, keys, err := walkPartial(data, n)
		roffs, rkeys, rerr := refPartial(data, n)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("partial read %v, reference %v", err, rerr)
		}
		if err == nil && (!slices.Equal(offs, roffs) || !slices.Equal(keys, rkeys)) {
			t.Fatalf("offsets %v keys %v, reference %v %v", offs, keys, roffs, rkeys)
		}
		if err != nil && !errors.Is(err, ErrCorruption) {
			t.Fatalf("unclassified %v", err)
		}
		full, ferr := walkAll(NewRecordIter(data, n))
		if ferr == nil {
			if err != nil {
				t.Fatalf("full read accepts, partial read: %v", err)
			}
			for i, r := range full {
				k := int32(-1)
				if r.Key != nil {
					k = int32(len(r.Key))
				}
				if r.OffsetDelta != offs[i] || k != keys[i] {
					t.Fatalf("record %d differs between the reads", i)
				}
			}
		}
	})
}
