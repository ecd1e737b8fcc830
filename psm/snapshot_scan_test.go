package psm

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzScanSnapshot: streaming a snapshot file gives what DecodeSnapshot
// gives from the whole file: the same entries in order, or the same error
// and no entry.
func FuzzScanSnapshot(f *testing.F) {
	good := appendSnapshotHeader(nil, 2)
	for i := range 2 {
		e := ProducerInfo{ProducerID: int64(7 + i), Epoch: 3, LastTimestamp: 1700000000000, CoordinatorEpoch: -1, TxnFirstOffset: -1}
		good = appendSnapshotEntry(good, &e)
	}
	good = finishSnapshot(good, 0)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(bytes.Clone(good), 0, 1, 2))
	f.Add([]byte{0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, src []byte) {
		want, werr := DecodeSnapshot(src)
		var got []ProducerInfo
		err := ScanSnapshot(bytes.NewReader(src), int64(len(src)), func(i int, e *ProducerInfo) {
			if i != len(got) {
				t.Fatalf("entry %d after %d", i, len(got))
			}
			got = append(got, *e)
		})
		if !errors.Is(err, werr) && (err != nil || werr != nil) {
			t.Fatalf("scan error %v, decode error %v", err, werr)
		}
		if werr != nil {
			if len(got) != 0 {
				t.Fatalf("%d entries reported from a file DecodeSnapshot refuses (%v)", len(got), werr)
			}
			return
		}
		if len(got) != len(want) {
			t.Fatalf("scanned %d entries, decoded %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("entry %d: scanned %+v, decoded %+v", i, got[i], want[i])
			}
		}
	})
}

// TestScanSnapshotBounds: a snapshot of no entry is a snapshot (a partition
// with no producer writes one); size, not the reader's length, bounds the
// file, so bytes past it are not checksummed; a count of more entries than
// the file holds, or an entry cut short, is ErrSnapshotTruncated even when
// the CRC covers it, as DecodeSnapshot says.
func TestScanSnapshotBounds(t *testing.T) {
	entries := func(n, count int) []byte {
		src := appendSnapshotHeader(nil, count)
		for i := range n {
			e := ProducerInfo{ProducerID: int64(7 + i), Epoch: 3, LastTimestamp: 1700000000000, CoordinatorEpoch: -1, TxnFirstOffset: -1}
			src = appendSnapshotEntry(src, &e)
		}
		return finishSnapshot(src, 0)
	}
	scan := func(r []byte, size int64) (int, error) {
		n := 0
		err := ScanSnapshot(bytes.NewReader(r), size, func(int, *ProducerInfo) { n++ })
		return n, err
	}
	if n, err := scan(entries(0, 0), int64(len(entries(0, 0)))); err != nil || n != 0 {
		t.Errorf("empty snapshot: %d entries, %v; want 0, nil", n, err)
	}
	good := entries(2, 2)
	if n, err := scan(append(bytes.Clone(good), 0xde, 0xad, 0xbe, 0xef), int64(len(good))); err != nil || n != 2 {
		t.Errorf("snapshot followed by other bytes, size its own: %d entries, %v; want 2, nil", n, err)
	}
	over := entries(2, 3)
	if _, err := DecodeSnapshot(over); !errors.Is(err, ErrSnapshotTruncated) {
		t.Fatalf("DecodeSnapshot of a count past the entries: %v, want ErrSnapshotTruncated", err)
	}
	if n, err := scan(over, int64(len(over))); !errors.Is(err, ErrSnapshotTruncated) || n != 0 {
		t.Errorf("count past the entries, CRC over it: %d entries, %v; want 0, ErrSnapshotTruncated", n, err)
	}
	// One entry cut 6 bytes short (40 of its 46), the CRC over what is left.
	cut := appendSnapshotHeader(nil, 1)
	e := ProducerInfo{ProducerID: 7, Epoch: 3, CoordinatorEpoch: -1, TxnFirstOffset: -1}
	cut = finishSnapshot(appendSnapshotEntry(cut, &e)[:snapOffEntries+snapshotEntrySize-6], 0)
	if _, err := DecodeSnapshot(cut); !errors.Is(err, ErrSnapshotTruncated) {
		t.Fatalf("DecodeSnapshot of an entry cut short: %v, want ErrSnapshotTruncated", err)
	}
	if n, err := scan(cut, int64(len(cut))); !errors.Is(err, ErrSnapshotTruncated) || n != 0 {
		t.Errorf("an entry cut short, CRC over it: %d entries, %v; want 0, ErrSnapshotTruncated", n, err)
	}
}
