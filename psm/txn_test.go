package psm

import (
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/storage"
)

// Transactions and the LSO (docs/producer-state.md).

func TestLastStableOffset(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		if got := h.m.LastStableOffset(h.p, 10); got != 10 {
			t.Fatalf("no txn: LSO %d, want HW", got)
		}
		h.ok(Client, data(9, 0, 0, 2))            // 0-1
		h.ok(Client, txnData(1, 0, 0, 2))         // 2-3, txn A opens at 2
		h.ok(Client, txnData(2, 0, 0, 1))         // 4, txn B opens at 4
		h.ok(Coordinator, marker(1, 0, false, 0)) // 5 commits A
		if fuo, ok := h.m.FirstUnstableOffset(h.p); !ok || fuo != 2 {
			t.Fatalf("FUO %d %v, want 2 (A unreplicated)", fuo, ok)
		}
		for _, c := range []struct{ hw, want int64 }{{1, 1}, {2, 2}, {6, 2}} {
			if got := h.m.LastStableOffset(h.p, c.hw); got != c.want {
				t.Fatalf("HW %d: LSO %d, want %d", c.hw, got, c.want)
			}
		}
		h.m.OnHighWatermark(h.p, 5) // marker at 5 is not below HW 5: A stays
		if got := h.m.LastStableOffset(h.p, 5); got != 2 {
			t.Fatalf("LSO %d, want 2", got)
		}
		h.m.OnHighWatermark(h.p, 6) // A's marker replicated: B (open at 4) is next
		if got := h.m.LastStableOffset(h.p, 6); got != 4 {
			t.Fatalf("LSO %d, want 4", got)
		}
		h.ok(Coordinator, marker(2, 0, true, 0)) // 6
		h.m.OnHighWatermark(h.p, 7)
		if _, ok := h.m.FirstUnstableOffset(h.p); ok {
			t.Fatal("FUO left after every txn completed and replicated")
		}
		if got := h.m.LastStableOffset(h.p, 7); got != 7 {
			t.Fatalf("LSO %d, want HW 7", got)
		}
	})
}

func TestAbortWritesTxnIndexEntry(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 3))             // 0-2 txn of 1
		h.ok(Client, txnData(2, 0, 0, 2))             // 3-4 txn of 2
		r := h.ok(Coordinator, marker(1, 0, true, 0)) // 5
		want := storage.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 5, LastStableOffset: 3}
		if !slices.Equal(r.c.Aborted, []storage.AbortedTxn{want}) {
			t.Fatalf("aborted %+v, want %+v (LSO = other producer's open txn)", r.c.Aborted, want)
		}
		if !r.outs[0].TxnCompleted || r.outs[0].Completed != (CompletedTxn{1, 0, 5, true}) {
			t.Fatalf("outcome %+v", r.outs[0])
		}
		r2 := h.ok(Coordinator, marker(2, 0, true, 0)) // 6: no other open txn -> marker+1
		want2 := storage.AbortedTxn{ProducerID: 2, FirstOffset: 3, LastOffset: 6, LastStableOffset: 7}
		if !slices.Equal(r2.c.Aborted, []storage.AbortedTxn{want2}) {
			t.Fatalf("aborted %+v, want %+v", r2.c.Aborted, want2)
		}
		h.ok(Client, txnData(1, 0, 3, 1))
		if c := h.ok(Coordinator, marker(1, 0, false, 0)).c; len(c.Aborted) != 0 || len(c.Completed) != 1 {
			t.Fatalf("commit wrote index entries: %+v", c)
		}
		// Several completions in one append: in batch order, strictly increasing lastOffsets,
		// each LSO computed after the earlier ones completed.
		h.ok(Client, txnData(3, 0, 0, 1), txnData(4, 0, 0, 1), txnData(5, 0, 0, 1)) // 9, 10, 11
		r3 := h.ok(Coordinator, marker(3, 0, true, 0), marker(4, 0, true, 0), marker(5, 0, true, 0))
		got := r3.c.Aborted
		wantAll := []storage.AbortedTxn{abortedTxn(3, 9, 12, 10), abortedTxn(4, 10, 13, 11), abortedTxn(5, 11, 14, 15)}
		if !slices.Equal(got, wantAll) {
			t.Fatalf("aborted %+v, want %+v", got, wantAll)
		}
		// Each completion's marker is past the one before (the .txnindex order).
		prev := int64(-1)
		for _, e := range append([]storage.AbortedTxn{want, want2}, wantAll...) {
			if e.LastOffset <= prev {
				t.Fatalf("index lastOffsets not increasing at %+v", e)
			}
			prev = e.LastOffset
		}
	})
}

// TestReadCommittedSkipsAborted plays a consumer on the index the PSM produced:
// with (pid, firstOffset) from the aborted entries plus the ABORT markers, a
// READ_COMMITTED reader drops exactly the aborted transactional batches and
// never returns control batches (CompletedFetch.nextFetchedRecord).
func TestReadCommittedSkipsAborted(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		type logged struct {
			b       Batch
			aborted bool // ground truth: a transactional batch of an aborted txn
		}
		var log []logged
		var index []storage.AbortedTxn
		add := func(origin Origin, b Batch, aborted bool) {
			r := h.ok(origin, b)
			b.BaseOffset = r.at[0]
			log = append(log, logged{b, aborted})
			index = append(index, r.c.Aborted...)
		}
		add(Client, txnData(1, 0, 0, 2), true)
		add(Client, data(7, 0, 0, 1), false)
		add(Client, txnData(2, 0, 0, 1), false)
		add(Client, txnData(1, 0, 2, 1), true)
		add(Coordinator, marker(1, 0, true, 0), false)
		add(Coordinator, marker(2, 0, false, 0), false)
		add(Client, txnData(1, 0, 3, 1), false)
		add(Coordinator, marker(1, 0, false, 0), false)

		abortedPIDs := map[int64]bool{}
		next := 0
		var got, want []int64
		for _, l := range log {
			if !l.b.Control && !l.aborted {
				want = append(want, l.b.BaseOffset)
			}
			for next < len(index) && index[next].FirstOffset <= l.b.LastOffset() {
				abortedPIDs[index[next].ProducerID] = true
				next++
			}
			switch {
			case l.b.Control:
				if l.b.ControlType == 0 {
					delete(abortedPIDs, l.b.ProducerID)
				}
			case l.b.Transactional && abortedPIDs[l.b.ProducerID]:
			default:
				got = append(got, l.b.BaseOffset)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("read_committed returned %v, want %v (index %+v)", got, want, index)
		}
	})
}
