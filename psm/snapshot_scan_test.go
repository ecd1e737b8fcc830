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
