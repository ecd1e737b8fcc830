package psm

import (
	"slices"
	"testing"
)

// The Store's one-batch CLIENT and REPLICATION fast path (Add's fast path, promote, Commit's fast
// branch) must hand over to the general path without a trace: every append
// below starts with a fast-eligible batch and then does something else in
// the same append, or follows a barrier. Each is run on a Model and a Store from the same state,
// and the answers and states must be equal.
func TestFastPathHandOverMatchesModel(t *testing.T) {
	type step struct {
		name    string
		origin  Origin
		batches []Batch
		abort   bool
	}
	steps := []step{
		{"fast alone", Client, []Batch{data(1, 0, 1, 1)}, false},
		{"fast then same producer", Client, []Batch{data(1, 0, 2, 1), data(1, 0, 3, 2)}, false},
		{"fast then gap in same producer", Client, []Batch{data(1, 0, 5, 1), data(1, 0, 9, 1)}, false},
		{"fast then other producer", Client, []Batch{data(2, 0, 1, 1), data(1, 0, 5, 1)}, false},
		{"fast then barrier", Client, []Batch{data(2, 0, 2, 1), barrierBatch(), data(2, 0, 3, 1)}, false},
		{"barrier then fast-eligible", Client, []Batch{barrierBatch(), data(5, 0, 1, 1)}, false},
		{"fast then duplicate of itself", Client, []Batch{data(3, 0, 1, 1), data(3, 0, 1, 1)}, false},
		{"fast then new epoch", Client, []Batch{data(3, 0, 2, 1), data(3, 1, 0, 1)}, false},
		{"fast then transaction", Client, []Batch{data(4, 0, 1, 1), txnData(4, 0, 2, 1)}, false},
		{"fast aborted", Client, []Batch{data(4, 0, 3, 1)}, true},
		{"fast after abort", Client, []Batch{data(4, 0, 3, 1)}, false},
		{"lower epoch", Client, []Batch{data(3, 0, 3, 1)}, false},
		// promote carries the committed entry's coordinator epoch over.
		{"transaction for a coordinator epoch", Client, []Batch{txnData(5, 0, 1, 1)}, false},
		{"its marker", Coordinator, []Batch{marker(5, 0, false, 7)}, false},
		{"fast then same producer after marker", Client, []Batch{data(5, 0, 2, 1), data(5, 0, 3, 1)}, false},
		{"fast then fenced marker", Client, []Batch{data(5, 0, 4, 1), marker(5, 0, true, 6)}, false},
		{"duplicate of committed", Client, []Batch{data(1, 0, 0, 1)}, false},
		// REPLICATION's fast case: no epoch fence, no sequence check.
		{"replica fast", Replication, []Batch{data(6, 0, 1, 1)}, false},
		{"replica sequence gap", Replication, []Batch{data(6, 0, 7, 1)}, false},
		{"replica repeat is no duplicate", Replication, []Batch{data(6, 0, 7, 1)}, false},
		{"replica lower epoch", Replication, []Batch{data(3, 0, 9, 1)}, false},
		{"replica fast then same producer", Replication, []Batch{data(6, 2, 0, 1), data(6, 2, 1, 3)}, false},
		{"replica fast then other producer", Replication, []Batch{data(7, 0, 1, 1), data(6, 1, 4, 1)}, false},
		{"replica fast then barrier", Replication, []Batch{data(7, 0, 2, 1), barrierBatch(), data(7, 0, 3, 1)}, false},
		{"replica open transaction", Replication, []Batch{txnData(8, 0, 1, 1)}, false},
		{"replica data in open transaction", Replication, []Batch{data(8, 0, 2, 1)}, false},
		{"replica fast aborted", Replication, []Batch{data(9, 0, 1, 1)}, true},
		// A REPLICATION append of several batches: the first batch's fast
		// update becomes its producer's pending entry (promote), and every
		// batch after it takes the pending entry's REPLICATION step (addNext).
		{"replica run of three", Replication, []Batch{data(0, 0, 5, 1), data(1, 0, 9, 1), data(2, 0, 7, 2)}, false},
		{"replica run repeats a producer", Replication, []Batch{data(0, 0, 6, 1), data(1, 0, 10, 1), data(0, 0, 7, 1), data(0, 0, 8, 1)}, false},
		{"replica run of seven from one producer", Replication, []Batch{data(0, 0, 9, 1), data(0, 0, 10, 1), data(0, 0, 11, 1),
			data(0, 0, 12, 1), data(0, 0, 13, 1), data(0, 0, 14, 1), data(0, 0, 15, 1)}, false},
		{"replica run then new producer", Replication, []Batch{data(0, 0, 16, 1), data(1, 0, 11, 1), data(0, 0, 17, 1), data(42, 0, 0, 1)}, false},
		{"replica run then epoch up and back", Replication, []Batch{data(1, 0, 12, 1), data(1, 1, 0, 1), data(1, 0, 13, 1)}, false},
		{"replica first batch at a new epoch, then the old", Replication, []Batch{data(2, 1, 0, 1), data(2, 0, 9, 1)}, false},
		{"replica run then transaction", Replication, []Batch{data(0, 0, 18, 1), data(1, 0, 14, 1), txnData(0, 0, 19, 1)}, false},
		{"replica run aborted", Replication, []Batch{data(0, 0, 20, 1), data(1, 0, 15, 1)}, true},
		{"replica run then barrier", Replication, []Batch{data(3, 0, 20, 1), data(4, 0, 15, 1), barrierBatch(), data(3, 0, 21, 1)}, false},
		{"replica run then data in open transaction", Replication, []Batch{data(5, 0, 30, 1), data(0, 0, 21, 1)}, false},
	}
	for _, barrier := range []BarrierApply{Exact, Prototype} {
		opts := Options{BarrierApply: barrier}
		model, store := NewModel(opts), NewStore(opts)
		for _, m := range []manager{model, store} {
			populate(m, 0, 10) // PIDs 0..9 at seq 0, epoch 0
		}
		var next int64 = 10
		for _, st := range steps {
			type answer struct {
				outs []Outcome
				errs []error
				c    Committed
			}
			var got [2]answer
			for k, m := range []manager{model, store} {
				a := m.Begin(0, st.origin)
				off := next
				for _, b := range st.batches {
					b.BaseOffset = off
					out, err := a.Add(&b)
					got[k].outs, got[k].errs = append(got[k].outs, val(out)), append(got[k].errs, err)
					if err == nil && !out.Duplicate.Found && !out.Barrier {
						off += int64(b.LastOffsetDelta) + 1
					}
				}
				if st.abort {
					a.Abort()
					continue
				}
				c := a.Commit()
				got[k].c = Committed{Completed: slices.Clone(c.Completed), Aborted: slices.Clone(c.Aborted),
					Barriers: c.Barriers, KeptOpenTxns: c.KeptOpenTxns}
			}
			next += 10
			if !slices.Equal(got[0].outs, got[1].outs) || !slices.Equal(got[0].errs, got[1].errs) {
				t.Fatalf("%v %s: model %v %v, store %v %v", barrier, st.name, got[0].outs, got[0].errs,
					got[1].outs, got[1].errs)
			}
			if !slices.Equal(got[0].c.Completed, got[1].c.Completed) || got[0].c.Barriers != got[1].c.Barriers ||
				got[0].c.KeptOpenTxns != got[1].c.KeptOpenTxns {
				t.Fatalf("%v %s: commit model %+v, store %+v", barrier, st.name, got[0].c, got[1].c)
			}
			if ms, ss := dumpState(model, 0), dumpState(store, 0); !equalState(ms, ss) {
				t.Fatalf("%v %s: state\nmodel %+v\nstore %+v", barrier, st.name, ms, ss)
			}
		}
	}
}

// The Appender that Store.Appender hands out, begun with its own Begin or
// BeginChunk (the ways appendpath holds it), is BeginAppend's: same answers,
// commits and states as the Model, an append left unfinished (fast,
// general or a chunk's) discarded by the next Begin, and the same pointer
// whichever way it is reached. The chunks mix producers, transactions,
// markers, a barrier and an ABORT in the middle, an epoch change, data
// refused inside an open transaction, and a CLIENT chunk.
func TestHeldAppenderMatchesModel(t *testing.T) {
	for _, barrier := range []BarrierApply{Exact, Prototype} {
		t.Run(barrier.String(), func(t *testing.T) { checkHeldAppender(t, Options{BarrierApply: barrier}) })
	}
}

func checkHeldAppender(t *testing.T, opts Options) {
	model, store := NewModel(opts), NewStore(opts)
	for _, m := range []manager{model, store} {
		populate(m, 0, 4) // PIDs 0..3 at seq 0, epoch 0
	}
	held := store.Appender(0)
	if held != store.BeginAppend(0, Client) || held != store.Appender(0) {
		t.Fatal("Store.Appender is not the partition's one Appender")
	}
	steps := []struct {
		name    string
		origin  Origin
		chunk   bool // begun with BeginChunk
		batches []Batch
		end     string // "commit", "abort" or "drop" (neither: the next Begin discards it)
	}{
		{"fast", Client, false, []Batch{data(0, 0, 1, 1)}, "commit"},
		{"fast dropped", Client, false, []Batch{data(1, 0, 1, 1)}, "drop"},
		{"fast after a dropped one", Client, false, []Batch{data(1, 0, 1, 1)}, "commit"},
		{"general dropped: new producer and a transaction", Client, false, []Batch{data(9, 0, 0, 1), txnData(2, 0, 1, 1)}, "drop"},
		{"fast after a dropped general append", Client, false, []Batch{data(2, 0, 1, 1)}, "commit"},
		{"new producer", Client, false, []Batch{data(9, 0, 0, 1)}, "commit"},
		{"replica run dropped", Replication, false, []Batch{data(0, 0, 5, 1), data(3, 0, 7, 1)}, "drop"},
		{"replica run", Replication, false, []Batch{data(0, 0, 5, 1), data(3, 0, 7, 1)}, "commit"},
		{"rejected then aborted", Client, false, []Batch{data(1, 0, 7, 1)}, "abort"},
		{"fast after abort", Client, false, []Batch{data(1, 0, 2, 1)}, "commit"},
		{"chunk of one batch", Replication, true, []Batch{data(0, 0, 6, 1)}, "commit"},
		{"chunk of mixed producers", Replication, true, []Batch{data(0, 0, 7, 1), data(1, 0, 3, 1), data(0, 0, 8, 2),
			data(2, 0, 2, 1), data(9, 0, 1, 1), data(0, 0, 10, 1), data(1, 0, 4, 1), data(0, 0, 11, 1), data(0, 0, 12, 1),
			data(0, 0, 13, 1)}, "commit"},
		{"chunk dropped", Replication, true, []Batch{data(0, 0, 14, 1), data(3, 0, 8, 1)}, "drop"},
		{"fast after a dropped chunk", Client, false, []Batch{data(0, 0, 14, 1)}, "commit"},
		{"chunk aborted", Replication, true, []Batch{data(1, 0, 5, 1), data(3, 0, 8, 1)}, "abort"},
		{"chunk with transactions and an ABORT in the middle", Replication, true, []Batch{txnData(0, 0, 15, 1),
			data(1, 0, 5, 1), txnData(0, 0, 16, 1), txnData(2, 0, 3, 1), marker(0, 0, true, 1), data(0, 0, 17, 1),
			data(1, 0, 6, 1)}, "commit"},
		{"chunk with data inside an open transaction", Replication, true, []Batch{data(3, 0, 8, 1), data(2, 0, 4, 1),
			txnData(2, 0, 4, 1), data(3, 0, 9, 1), txnData(3, 0, 10, 1), data(3, 0, 11, 1), txnData(3, 0, 11, 1)}, "commit"},
		{"chunk with a COMMIT, then data", Replication, true, []Batch{txnData(2, 0, 5, 1), marker(2, 0, false, 1),
			data(2, 0, 6, 1), data(0, 0, 18, 1)}, "commit"},
		{"chunk with a stale marker", Replication, true, []Batch{txnData(3, 0, 12, 1), marker(3, -1, true, 1),
			data(3, 0, 13, 1)}, "commit"},
		{"chunk with a barrier in the middle", Replication, true, []Batch{data(0, 0, 19, 1), txnData(1, 0, 7, 1),
			data(2, 0, 7, 1), barrierBatch(), data(0, 0, 20, 1), data(2, 0, 8, 1), marker(1, 0, true, 1)}, "commit"},
		{"chunk with epoch changes", Replication, true, []Batch{data(0, 0, 21, 1), data(0, 1, 0, 1), data(2, 1, 0, 1),
			data(2, 0, 9, 1), data(0, 1, 1, 1)}, "commit"},
		{"chunk of an untracked producer", Replication, true, []Batch{data(-1, 0, 0, 1), data(0, 1, 2, 1)}, "commit"},
		{"chunk of twelve new producers", Replication, true, []Batch{data(10, 0, 0, 1), data(11, 0, 0, 1),
			data(12, 0, 0, 1), data(13, 0, 0, 1), data(14, 0, 0, 1), data(15, 0, 0, 1), data(16, 0, 0, 1),
			data(17, 0, 0, 1), data(18, 0, 0, 1), data(19, 0, 0, 1), data(20, 0, 0, 1), data(21, 0, 0, 1)}, "commit"},
		{"chunk of one batch per producer past the linear search, then second batches", Replication, true, []Batch{
			data(10, 0, 1, 1), data(11, 0, 1, 1), data(12, 0, 1, 1), data(13, 0, 1, 1), data(14, 0, 1, 1),
			data(15, 0, 1, 1), data(16, 0, 1, 1), data(17, 0, 1, 1), data(18, 0, 1, 1), data(19, 0, 1, 1),
			data(10, 0, 2, 1), data(11, 1, 0, 1), data(20, 0, 1, 1), txnData(12, 0, 2, 1), data(21, 0, 1, 1),
			data(10, 0, 3, 1)}, "commit"},
		{"chunk of single batches, then a marker", Replication, true, []Batch{data(13, 0, 2, 1), data(14, 0, 2, 1),
			data(15, 0, 2, 1), data(16, 0, 2, 1), data(17, 0, 2, 1), data(18, 0, 2, 1), data(19, 0, 2, 1),
			data(20, 0, 2, 1), data(21, 0, 2, 1), marker(12, 0, true, 1), data(13, 0, 3, 1), data(12, 0, 3, 1),
			data(21, 1, 0, 1)}, "commit"},
		{"chunk of single batches, then a barrier", Replication, true, []Batch{data(13, 0, 4, 1), data(14, 0, 3, 1),
			data(15, 0, 3, 1), data(16, 0, 3, 1), data(17, 0, 3, 1), data(18, 0, 3, 1), data(19, 0, 3, 1),
			data(20, 0, 3, 1), data(21, 1, 1, 1), data(10, 0, 4, 1), barrierBatch(), data(13, 0, 5, 1),
			data(11, 1, 1, 1)}, "commit"},
		{"chunk of single batches, one rejected, one at a new epoch", Replication, true, []Batch{data(0, 0, 30, 1), txnData(1, 0, 30, 1),
			data(2, 0, 30, 1), data(1, 0, 31, 1), data(0, 0, 31, 1), data(16, 1, 0, 1)}, "commit"},
		{"client chunk", Client, true, []Batch{data(0, 1, 3, 1), data(0, 1, 4, 1), data(0, 1, 9, 1), data(5, 0, 0, 1)}, "commit"},
		{"fast after a chunk", Client, false, []Batch{data(0, 1, 5, 1)}, "commit"},
	}
	var next int64 = 10
	for _, st := range steps {
		var got [2][]error
		var pend [2][]pendingInfo // Pending of each batch's producer after its Add
		var com [2]Committed
		for k := range 2 {
			var a Appender
			switch {
			case k == 0:
				a = model.Begin(0, st.origin)
			case st.chunk:
				held.BeginChunk(st.origin)
				a = chunkAdder{held}
			default:
				held.Begin(st.origin)
				a = held
			}
			off := next
			for _, b := range st.batches {
				b.BaseOffset = off
				_, err := a.Add(&b)
				got[k] = append(got[k], err)
				in, ok := a.Pending(b.ProducerID)
				pend[k] = append(pend[k], pendingInfo{in, ok})
				off += int64(b.LastOffsetDelta) + 1
			}
			switch st.end {
			case "commit":
				c := a.Commit()
				com[k] = Committed{Completed: slices.Clone(c.Completed), Aborted: slices.Clone(c.Aborted),
					Barriers: c.Barriers, KeptOpenTxns: c.KeptOpenTxns}
			case "abort":
				a.Abort()
			}
		}
		next += 20
		if !slices.Equal(got[0], got[1]) {
			t.Fatalf("%s: model %v, store %v", st.name, got[0], got[1])
		}
		if !slices.Equal(pend[0], pend[1]) {
			t.Fatalf("%s: Pending after each batch\nmodel %+v\nstore %+v", st.name, pend[0], pend[1])
		}
		if !slices.Equal(com[0].Completed, com[1].Completed) || !slices.Equal(com[0].Aborted, com[1].Aborted) ||
			com[0].Barriers != com[1].Barriers || com[0].KeptOpenTxns != com[1].KeptOpenTxns {
			t.Fatalf("%s: commit model %+v, store %+v", st.name, com[0], com[1])
		}
		if st.end == "drop" {
			continue // the Model's Begin discards it at the next step, the Store's too
		}
		if ms, ss := dumpState(model, 0), dumpState(store, 0); !equalState(ms, ss) {
			t.Fatalf("%s: state\nmodel %+v\nstore %+v", st.name, ms, ss)
		}
	}
}

// pendingInfo is what Appender.Pending answers.
type pendingInfo struct {
	in ProducerInfo
	ok bool
}

// A transactional data batch of a REPLICATION append removes its
// producer's verification entry at Commit, whether the append was begun
// with Begin or BeginChunk, as in the Model (UnifiedLog#updateProducers):
// the next StartVerification at another epoch makes a new entry, with a new
// guard, where a kept entry would hand back the old one.
func TestChunkTransactionalBatchRemovesVerification(t *testing.T) {
	for _, chunk := range []bool{false, true} {
		model, store := NewModel(Options{}), NewStore(Options{})
		var guards [2][2]Guard
		for k, m := range []manager{model, store} {
			populate(m, 0, 4)
			g, err := m.StartVerification(0, 2, 1, 0, TV0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			guards[k][0] = g
			var a Appender
			switch {
			case k == 0:
				a = model.Begin(0, Replication)
			case chunk:
				held := store.Appender(0)
				held.BeginChunk(Replication)
				a = held
			default:
				a = store.Begin(0, Replication)
			}
			for i, b := range []Batch{data(1, 0, 1, 1), txnData(2, 0, 1, 1), data(3, 0, 1, 1)} {
				b.BaseOffset = int64(10 + i)
				if _, err := a.Add(&b); err != nil {
					t.Fatal(err)
				}
			}
			a.Commit()
			if guards[k][1], err = m.StartVerification(0, 2, 0, 1, TV0, 1000); err != nil {
				t.Fatal(err)
			}
		}
		if guards[0][1] == guards[0][0] {
			t.Fatalf("chunk %v: the Model kept the verification entry (guard %d)", chunk, guards[0][0])
		}
		if guards[0] != guards[1] {
			t.Fatalf("chunk %v: guards model %v, store %v", chunk, guards[0], guards[1])
		}
	}
}
