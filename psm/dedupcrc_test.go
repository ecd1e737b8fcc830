package psm

import (
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// TestDedupCRC: under Options.DedupCRC a CLIENT batch that repeats a cached
// batch's epoch and sequences is a duplicate only when its CRC is the cached
// one (a genuine retry resends the same bytes); another CRC is
// ErrDuplicateCRCMismatch (OUT_OF_ORDER_SEQUENCE_NUMBER), nothing applied.
// An unknown CRC on either side, and the option off, keep Kafka's
// sequence-only answer. Model and Store alike, on the fast path's entry
// (REPLICATION) and on the general one (CLIENT).
func TestDedupCRC(t *testing.T) {
	for _, on := range []bool{false, true} {
		opts := Options{DedupCRC: on}
		for _, m := range []manager{NewModel(opts), NewStore(opts)} {
			for _, origin := range []Origin{Replication, Client} {
				first := data(5, 0, 0, 5)
				first.CRC, first.HasCRC = 0xfeed, true
				if _, _, err := m.Update(0, origin, &first); err != nil {
					t.Fatal(err)
				}
				in, _ := m.Producer(0, 5)
				if w := in.Window()[in.NumBatches-1]; w.HasCRC != on || (on && w.CRC != 0xfeed) {
					t.Fatalf("%T on=%v %v: window keeps %+v", m, on, origin, w)
				}
				retry := first
				if out, _, err := m.Update(0, Client, &retry); err != nil || !out.Duplicate.Found {
					t.Fatalf("%T on=%v: retry %+v %v, want a duplicate", m, on, out, err)
				}
				foreign := first
				foreign.CRC = 0xbeef
				out, _, err := m.Update(0, Client, &foreign)
				if on {
					if !errors.Is(err, ErrDuplicateCRCMismatch) || !errors.Is(err, kafkaerr.OutOfOrderSequenceNumber) {
						t.Fatalf("%T: foreign batch %+v %v, want ErrDuplicateCRCMismatch", m, out, err)
					}
				} else if err != nil || !out.Duplicate.Found {
					t.Fatalf("%T off: foreign batch %+v %v, want Kafka's duplicate", m, out, err)
				}
				unknown := foreign
				unknown.HasCRC = false
				if out, _, err := m.Update(0, Client, &unknown); err != nil || !out.Duplicate.Found {
					t.Fatalf("%T on=%v: unknown CRC %+v %v, want a duplicate", m, on, out, err)
				}
				if after, _ := m.Producer(0, 5); after.LastSeq() != 4 {
					t.Fatalf("%T: last seq %d after the refusals, want 4", m, after.LastSeq())
				}
				m.Reset(0)
			}
		}
	}
}

// TestDedupCRCAllocs: the Store's append under DedupCRC allocates nothing,
// a refused foreign batch included.
func TestDedupCRCAllocs(t *testing.T) {
	s := NewStore(Options{DedupCRC: true})
	populate(s, 0, 100)
	b := data(7, 0, 1, 1)
	b.CRC, b.HasCRC = 1, true
	seq, off := int32(1), int64(100) // populate wrote offsets 0..99
	var foreign Batch                // outside the closure: a Batch passed by pointer escapes
	if n := testing.AllocsPerRun(200, func() {
		b.BaseSequence, b.CRC, b.BaseOffset = seq, uint32(seq), off
		off++
		if _, _, err := s.Update(0, Client, &b); err != nil {
			t.Fatal(err)
		}
		seq++
		foreign = b
		foreign.CRC++
		if _, _, err := s.Update(0, Client, &foreign); err != ErrDuplicateCRCMismatch {
			t.Fatalf("foreign: %v", err)
		}
	}); n != 0 {
		t.Fatalf("%v allocs per append", n)
	}
}
