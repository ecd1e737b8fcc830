package psm

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage"
)

// The module has one corruption marker, codec.ErrCorruption: a defect of the
// bytes read by codec (a batch), storage (an offset index, a transaction
// index entry) or psm (a producer snapshot) matches it, and errors that are
// not about bad bytes do not.
func TestCorruptionIsOneMarker(t *testing.T) {
	_, batchErr := codec.ParseBatch(make([]byte, 70)) // batchLength 0
	_, txnErr := storage.ParseAbortedTxn(make([]byte, storage.AbortedTxnSize-1))
	sc := storage.NewOffsetIndexScanner(bytes.NewReader(make([]byte, 5)), 0)
	var indexErr error
	for indexErr == nil {
		_, _, indexErr = sc.Next()
	}
	s := NewStore(Options{})
	snapErr := s.LoadSnapshot(0, []byte{0, 1, 2}, 0)
	for _, c := range []struct {
		name string
		err  error
		own  error // the package's own marker, which still matches
	}{
		{"codec batch", batchErr, codec.ErrBadLength},
		{"storage offset index", indexErr, storage.ErrCorruptIndex},
		{"storage txn index", txnErr, storage.ErrTxnIndexTruncated},
		{"psm snapshot", snapErr, ErrCorruptSnapshot},
	} {
		if c.err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		if !errors.Is(c.err, codec.ErrCorruption) {
			t.Errorf("%s: %v does not match codec.ErrCorruption", c.name, c.err)
		}
		if !errors.Is(c.err, c.own) {
			t.Errorf("%s: %v does not match %v", c.name, c.err, c.own)
		}
	}
	for _, err := range []error{codec.ErrPartial, ErrDuplicateCRCMismatch, storage.ErrOffsetRegression} {
		if errors.Is(err, codec.ErrCorruption) {
			t.Errorf("%v matches codec.ErrCorruption", err)
		}
	}
}
