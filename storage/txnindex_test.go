package storage

import (
	"bytes"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

// The 34-byte .txnindex entry: version 0, pid, first, last, lso, big-endian.
func TestAbortedTxnCodec(t *testing.T) {
	all := []AbortedTxn{{1, 0, 5, 3}, {2, 3, 6, 7}, {3, 9, 12, 10}, {4, 10, 13, 11}, {5, 11, 14, 15}}
	var idx []byte
	for _, e := range all {
		idx = e.AppendTo(idx)
	}
	if len(idx) != 5*AbortedTxnSize {
		t.Fatalf("index size %d", len(idx))
	}
	golden := testhex.Unhex(t, `
		0000               # 0-1   version 0
		0000000000000001   # 2-9   producerId 1
		0000000000000000   # 10-17 firstOffset 0
		0000000000000005   # 18-25 lastOffset 5
		0000000000000003   # 26-33 lastStableOffset 3
	`)
	if !bytes.Equal(idx[:AbortedTxnSize], golden) {
		t.Fatalf("entry bytes %x", idx[:AbortedTxnSize])
	}
	var got []AbortedTxn
	for off := 0; off < len(idx); off += AbortedTxnSize {
		e, err := ParseAbortedTxn(idx[off:])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if !slices.Equal(got, all) {
		t.Fatalf("decoded %+v, want %+v", got, all)
	}
	if _, err := ParseAbortedTxn(idx[:33]); err != ErrTxnIndexTruncated {
		t.Fatalf("short entry: %v", err)
	}
	bad := slices.Clone(golden)
	bad[1] = 1
	if _, err := ParseAbortedTxn(bad); err != ErrTxnIndexVersion {
		t.Fatalf("version 1 entry: %v", err)
	}
}
