package storage

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// scanAll runs an IndexScanner over src (checked against log when it is not
// nil) to its end: the entries, the mismatching entry numbers and the
// error that ended the scan (nil at a clean end).
func scanAll(src []byte, base int64, time bool, log []byte) (entries []IndexEntry, mismatches []int, err error) {
	s := NewOffsetIndexScanner(bytes.NewReader(src), base)
	if time {
		s = NewTimeIndexScanner(bytes.NewReader(src), base)
	}
	if log != nil {
		s.CheckAgainst(bytes.NewReader(log), int64(len(log)))
	}
	for {
		e, mismatch, err := s.Next()
		if err == io.EOF {
			return entries, mismatches, nil
		}
		if err != nil {
			return entries, mismatches, err
		}
		entries = append(entries, e)
		if mismatch != nil {
			if !errors.Is(mismatch, ErrIndexMismatch) {
				panic(mismatch)
			}
			mismatches = append(mismatches, len(entries)-1)
		}
	}
}

// FuzzIndexScanner: streaming a .index or .timeindex file entry by entry
// gives what the whole-file decoders give: the same entries, the same
// defect at the same entry (ErrIndexSize with the file's size included),
// and, checked against a log, the same mismatching entries as
// VerifyOffsetIndex and VerifyTimeIndex.
func FuzzIndexScanner(f *testing.F) {
	log, idx, tidx := seedLog(f)
	f.Add(idx, false, int64(100), log)
	f.Add(tidx, true, int64(100), log)
	f.Add(idx[:len(idx)-3], false, int64(0), log[:len(log)/2])
	f.Add(append(bytes.Clone(tidx), tidx...), true, int64(1), []byte(nil))
	f.Add(make([]byte, 17), false, int64(0), []byte(nil))
	f.Fuzz(func(t *testing.T, src []byte, time bool, base int64, log []byte) {
		entries, mismatches, err := scanAll(src, base, time, log)
		var want []IndexEntry
		var werr error
		var wantBad []int
		bad := func(i int, _ error) { wantBad = append(wantBad, i) }
		if time {
			x, e := ParseTimeIndex(src, base)
			werr = e
			for i := range x.Len() {
				want = append(want, IndexEntry{Offset: x.Entry(i).Offset, Timestamp: x.Entry(i).Timestamp})
			}
			if log != nil {
				VerifyTimeIndex(x, log, bad)
			}
		} else {
			x, e := ParseOffsetIndex(src, base)
			werr = e
			for i := range x.Len() {
				want = append(want, IndexEntry{Offset: x.Entry(i).Offset, Position: x.Entry(i).Position})
			}
			if log != nil {
				VerifyOffsetIndex(x, log, bad)
			}
		}
		if len(entries) != len(want) {
			t.Fatalf("scanned %d entries, parsed %d", len(entries), len(want))
		}
		for i := range want {
			if entries[i] != want[i] {
				t.Fatalf("entry %d: scanned %+v, parsed %+v", i, entries[i], want[i])
			}
		}
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("scan error %v, parse error %v", err, werr)
		}
		if len(mismatches) != len(wantBad) {
			t.Fatalf("mismatches %v, verify %v", mismatches, wantBad)
		}
		for i := range wantBad {
			if mismatches[i] != wantBad[i] {
				t.Fatalf("mismatches %v, verify %v", mismatches, wantBad)
			}
		}
	})
}
