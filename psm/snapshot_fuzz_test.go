package psm

import (
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// FuzzLoadSnapshot: any bytes either load into both implementations with the
// same resulting state, or fail on both with an error matching
// ErrCorruptSnapshot and change nothing. When the first byte is odd the CRC
// is repaired first, so that mutations reach the entry decoder.
func FuzzLoadSnapshot(f *testing.F) {
	m := NewModel(Options{})
	a := m.Begin(0, Replication)
	for i, b := range []Batch{data(5, 2, 0, 3), txnData(9, 0, 0, 1), marker(7, 4, false, 11), data(5, 2, 3, 2)} {
		b.BaseOffset = int64(10 * i)
		a.Add(&b)
	}
	a.Commit()
	good := m.AppendSnapshot(nil, 0)
	f.Add(append([]byte{0}, good...))
	f.Add(append([]byte{1}, good[:len(good)-3]...))
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) == 0 {
			return
		}
		repair, snap := src[0]&1 == 1, src[1:]
		if repair && len(snap) >= 10 {
			be.PutUint32(snap[2:], codec.Checksum(snap[6:]))
		}
		model, store := NewModel(Options{}), NewStore(Options{})
		for _, x := range []manager{model, store} {
			x.Begin(0, Replication).Commit()
		}
		const now = 5000
		merr, serr := model.LoadSnapshot(0, snap, now), store.LoadSnapshot(0, snap, now)
		if (merr == nil) != (serr == nil) || !errors.Is(serr, merr) && merr != nil {
			t.Fatalf("model %v store %v", merr, serr)
		}
		if merr != nil {
			if !errors.Is(merr, ErrCorruptSnapshot) {
				t.Fatalf("error %v does not match ErrCorruptSnapshot", merr)
			}
			if model.ProducerCount(0) != 0 || store.ProducerCount(0) != 0 {
				t.Fatal("failed load changed state")
			}
			return
		}
		entries, err := DecodeSnapshot(snap)
		if err != nil || len(entries)*snapshotEntrySize > len(snap) {
			t.Fatalf("DecodeSnapshot %d entries from %d bytes: %v", len(entries), len(snap), err)
		}
		if ms, ss := dumpState(model, 0), dumpState(store, 0); !equalState(ms, ss) {
			t.Fatalf("loaded states differ\nmodel %+v\nstore %+v", ms, ss)
		}
		if model.ProducerCount(0) > len(entries) {
			t.Fatal("more producers than entries")
		}
	})
}
