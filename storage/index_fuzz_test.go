package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
)

// refOffsetEntries is the plain model of a .index decoder: every whole
// entry, and the number of entries before the first that breaks a rule.
func refOffsetEntries(src []byte, base int64) (all []OffsetPosition, valid int, reason error) {
	for i := 0; i+8 <= len(src); i += 8 {
		rel := int32(binary.BigEndian.Uint32(src[i:]))
		pos := int32(binary.BigEndian.Uint32(src[i+4:]))
		all = append(all, OffsetPosition{base + int64(rel), int64(pos)})
		if reason != nil {
			continue
		}
		switch n := len(all); {
		case rel < 0 || pos < 0:
			reason = ErrIndexRange
		case n > 1 && (all[n-1].Offset-base <= all[n-2].Offset-base || all[n-1].Position <= all[n-2].Position):
			reason = ErrIndexOrder
		default:
			valid++
		}
	}
	if reason == nil && len(src)%8 != 0 {
		reason = ErrIndexSize
	}
	return all, valid, reason
}

func refTimeEntries(src []byte, base int64) (all []TimestampOffset, valid int, reason error) {
	for i := 0; i+12 <= len(src); i += 12 {
		ts := int64(binary.BigEndian.Uint64(src[i:]))
		rel := int32(binary.BigEndian.Uint32(src[i+8:]))
		all = append(all, TimestampOffset{ts, base + int64(rel)})
		if reason != nil {
			continue
		}
		prevTS, prevOff := int64(-1), int64(-1)
		if n := len(all); n > 1 {
			prevTS, prevOff = all[n-2].Timestamp, all[n-2].Offset
		}
		switch {
		case rel < 0:
			reason = ErrIndexRange
		case ts <= prevTS || (len(all) > 1 && all[len(all)-1].Offset-base < prevOff-base):
			reason = ErrIndexOrder
		default:
			valid++
		}
	}
	if reason == nil && len(src)%12 != 0 {
		reason = ErrIndexSize
	}
	return all, valid, reason
}

// seedLog is a small segment of nine batches from offset 100 with indexes
// that hold an entry for every batch after the first. The log writes one
// entry per indexIntervalBytes; entries of the same form over small batches
// give the fuzzer the same shapes in inputs of a few hundred bytes.
func seedLog(t testing.TB) (log, idx, tidx []byte) {
	maxTS, maxOff, lastTS := int64(-1), int64(-1), int64(-1)
	timeEntry := func() {
		if maxTS > lastTS {
			tidx = AppendTimeEntry(tidx, 100, TimestampOffset{maxTS, maxOff})
			lastTS = maxTS
		}
	}
	for i := range 9 {
		b := codec.Batch(testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1 + i%3, Value: 8,
			TS: int64(5000 + 1000*(i%4))}), 100+int64(3*i), 0))
		if b.MaxTimestamp() > maxTS {
			maxTS, maxOff = b.MaxTimestamp(), b.LastOffset()
		}
		if i > 0 {
			idx = AppendOffsetEntry(idx, 100, OffsetPosition{b.LastOffset(), int64(len(log))})
			timeEntry()
		}
		log = append(log, b...)
	}
	timeEntry() // as a sealed segment
	return log, idx, tidx
}

// FuzzParseOffsetIndex: any bytes and base offset; never a panic; the same
// entries and verdict as the plain model; a round trip through
// AppendOffsetEntry gives the valid prefix back; Lookup agrees with a linear
// scan; no allocation when valid, a constant few on error.
func FuzzParseOffsetIndex(f *testing.F) {
	_, idx, _ := seedLog(f)
	f.Add(idx, int64(100), int64(110))
	f.Add(idx[:len(idx)-3], int64(0), int64(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, int64(-5), int64(3))
	f.Fuzz(func(t *testing.T, src []byte, base, target int64) {
		x, err := ParseOffsetIndex(src, base)
		all, valid, reason := refOffsetEntries(src, base)
		checkParsed(t, src, base, x.Len(), x.Entry, err, all, valid, reason, AppendOffsetEntry)
		want := OffsetPosition{base, 0}
		for _, e := range all[:valid] {
			if e.Offset <= target {
				want = e
			}
		}
		if got := x.Lookup(target); err == nil && base >= 0 && base < 1<<60 && got != want {
			t.Fatalf("Lookup(%d) = %+v, scan %+v", target, got, want)
		}
		allocs := testing.AllocsPerRun(1, func() { ParseOffsetIndex(src, base) })
		if (err == nil && allocs != 0) || allocs > maxErrAllocs {
			t.Fatalf("%v allocations (err %v)", allocs, err)
		}
	})
}

// checkParsed holds an index parsed from src (n entries read by entry, and
// err) to its plain model (all, valid, reason): the same verdict and the same
// entries, and encoding them again with appendEntry gives src's prefix back.
func checkParsed[E comparable](t *testing.T, src []byte, base int64, n int, entry func(int) E, err error,
	all []E, valid int, reason error, appendEntry func([]byte, int64, E) []byte) {
	t.Helper()
	if n != valid || !errors.Is(err, reason) || (err == nil) != (reason == nil) {
		t.Fatalf("%d entries, %v; model %d, %v", n, err, valid, reason)
	}
	var enc []byte
	for i := range n {
		e := entry(i)
		if e != all[i] {
			t.Fatalf("entry %d: %+v, model %+v", i, e, all[i])
		}
		enc = appendEntry(enc, base, e)
	}
	if !bytes.Equal(enc, src[:len(enc)]) {
		t.Fatal("round trip differs")
	}
}

// maxErrAllocs bounds what a rejection may allocate (the *IndexError and its
// message: 3 in a normal build; the race detector's instrumentation adds
// one): a constant, never proportional to the input.
const maxErrAllocs = 5

// FuzzParseTimeIndex: as FuzzParseOffsetIndex for .timeindex.
func FuzzParseTimeIndex(f *testing.F) {
	_, _, tidx := seedLog(f)
	f.Add(tidx, int64(100))
	f.Add(tidx[:len(tidx)-1], int64(100))
	f.Add(append(bytes.Clone(tidx), tidx...), int64(1))
	f.Fuzz(func(t *testing.T, src []byte, base int64) {
		x, err := ParseTimeIndex(src, base)
		all, valid, reason := refTimeEntries(src, base)
		checkParsed(t, src, base, x.Len(), x.Entry, err, all, valid, reason, AppendTimeEntry)
		allocs := testing.AllocsPerRun(1, func() { ParseTimeIndex(src, base) })
		if (err == nil && allocs != 0) || allocs > maxErrAllocs {
			t.Fatalf("%v allocations (err %v)", allocs, err)
		}
	})
}

// refHeads frames log batch by batch as nextHead does, into a list.
func refHeads(log []byte) []batchHead {
	var hs []batchHead
	for pos := int64(0); ; {
		h, ok := nextHead(log, pos)
		if !ok {
			return hs
		}
		hs = append(hs, h)
		pos += h.size
	}
}

// verifyFuzzLog bounds FuzzVerifyIndex's log: room for about fifty small
// batches.
const verifyFuzzLog = 4 << 10

// FuzzVerifyIndex: any log and index bytes; never a panic; the merge walks
// of VerifyOffsetIndex and VerifyTimeIndex report exactly the entries a
// plain per-entry scan finds bad; nothing allocated when none is (checked
// on a sample of inputs).
func FuzzVerifyIndex(f *testing.F) {
	log, idx, tidx := seedLog(f)
	f.Add(log, idx, tidx)
	f.Add(log[:len(log)-100], idx, tidx)
	bad := bytes.Clone(idx)
	bad[7]++
	f.Add(log, bad, tidx[:12])
	f.Fuzz(func(t *testing.T, log, idx, tidx []byte) {
		// A few dozen batches and entries reach every case of the merge
		// walks; the plain scan below is quadratic in them.
		log, idx, tidx = log[:min(len(log), verifyFuzzLog)], idx[:min(len(idx), 64*8)], tidx[:min(len(tidx), 64*12)]
		x, _ := ParseOffsetIndex(idx, 100)
		tx, _ := ParseTimeIndex(tidx, 100)
		hs := refHeads(log)
		var wantBad []int
		for i := range x.Len() {
			e := x.Entry(i)
			ok := false
			for _, h := range hs {
				ok = ok || (h.pos == e.Position && h.last == e.Offset)
			}
			if !ok {
				wantBad = append(wantBad, i)
			}
		}
		var gotBad []int
		n := VerifyOffsetIndex(x, log, func(i int, err error) {
			if !errors.Is(err, ErrIndexMismatch) {
				t.Fatal(err)
			}
			gotBad = append(gotBad, i)
		})
		if n != len(gotBad) || !slices.Equal(gotBad, wantBad) {
			t.Fatalf(".index bad entries %v, scan %v", gotBad, wantBad)
		}
		// The file walk agrees, through any window (small ones re-read).
		var atBad []int
		win := codec.HeaderSize + len(tidx)%300
		h := &readerHeads{r: bytes.NewReader(log), size: int64(len(log)), win: make([]byte, win)}
		if verifyOffsetIndex(x, h, func(i int, err error) { atBad = append(atBad, i) }); h.err != nil || !slices.Equal(atBad, wantBad) {
			t.Fatalf(".index bad entries from the file %v (%v), scan %v", atBad, h.err, wantBad)
		}
		wantBad, gotBad = nil, nil
		for i := range tx.Len() {
			e := tx.Entry(i)
			maxTS, ok := int64(-1<<63), false
			for _, h := range hs {
				maxTS = max(maxTS, h.maxTS)
				if h.last >= e.Offset {
					ok = h.base <= e.Offset && maxTS == e.Timestamp
					break
				}
			}
			if !ok {
				wantBad = append(wantBad, i)
			}
		}
		n = VerifyTimeIndex(tx, log, func(i int, err error) { gotBad = append(gotBad, i) })
		if n != len(gotBad) || !slices.Equal(gotBad, wantBad) {
			t.Fatalf(".timeindex bad entries %v, scan %v", gotBad, wantBad)
		}
		var tBad []int
		if n, err := VerifyTimeIndexAt(tx, bytes.NewReader(log), int64(len(log)), func(i int, err error) { tBad = append(tBad, i) }); err != nil || n != len(tBad) || !slices.Equal(tBad, wantBad) {
			t.Fatalf(".timeindex bad entries from the file %v (%v), scan %v", tBad, err, wantBad)
		}
		// Measuring allocations stops the world: one input in eight.
		if len(log)%8 == 0 && len(gotBad) == 0 && VerifyOffsetIndex(x, log, nil) == 0 {
			if allocs := testing.AllocsPerRun(1, func() {
				VerifyOffsetIndex(x, log, nil)
				VerifyTimeIndex(tx, log, nil)
			}); allocs != 0 {
				t.Fatalf("%v allocations verifying a good index", allocs)
			}
		}
	})
}
