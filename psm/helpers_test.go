package psm

import (
	"errors"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage"
)

// forEachImpl runs fn against the reference Model and the Store, each in its
// own subtest, so every rule is checked on both.
func forEachImpl(t *testing.T, opts Options, fn func(t *testing.T, h *harness)) {
	t.Helper()
	for _, impl := range []string{"model", "store"} {
		t.Run("impl="+impl, func(t *testing.T) {
			var m manager = NewModel(opts)
			if impl == "store" {
				m = NewStore(opts)
			}
			fn(t, &harness{t: t, m: m, p: 3})
		})
	}
}

// harness plays a log: it assigns offsets like the append path and commits.
type harness struct {
	t    *testing.T
	m    manager
	p    PartitionID
	next int64 // log end offset
}

func data(pid int64, epoch int16, seq int32, count int32) Batch {
	return Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, LastOffsetDelta: count - 1,
		RecordsCount: count, MaxTimestamp: 1000}
}

func txnData(pid int64, epoch int16, seq int32, count int32) Batch {
	b := data(pid, epoch, seq, count)
	b.Transactional = true
	return b
}

func marker(pid int64, epoch int16, abort bool, coordEpoch int32) Batch {
	t := codec.ControlCommit
	if abort {
		t = codec.ControlAbort
	}
	return Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, RecordsCount: 1, Transactional: true,
		Control: true, ControlType: t, CoordinatorEpoch: coordEpoch, ControlTimestamp: 2000}
}

// ref returns a pointer to a copy of b, for Add.
func ref(b Batch) *Batch { return &b }

// val is *o, or the zero Outcome for nil (Add's answer with an error).
func val(o *Outcome) Outcome {
	if o == nil {
		return Outcome{}
	}
	return *o
}

func barrierBatch() Batch {
	return Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, RecordsCount: 1, Control: true,
		ControlType: codec.ControlMirrorPidReset, ControlTimestamp: 3000}
}

// result of one harness append.
type result struct {
	outs []Outcome
	c    Committed
	err  error
	at   []int64 // base offset assigned to each batch
}

// append adds the batches in one append and commits, or aborts at the first
// error. Accepted non-duplicate batches get consecutive offsets.
func (h *harness) append(origin Origin, batches ...Batch) result {
	h.t.Helper()
	a := h.m.Begin(h.p, origin)
	var r result
	next := h.next
	for _, b := range batches {
		b.BaseOffset = next
		out, err := a.Add(&b)
		if err != nil {
			a.Abort()
			r.err = err
			return r
		}
		r.outs = append(r.outs, *out)
		r.at = append(r.at, next)
		if !out.Duplicate.Found {
			next += int64(b.LastOffsetDelta) + 1
		}
	}
	r.c = *a.Commit()
	r.c.Completed = slices.Clone(r.c.Completed)
	r.c.Aborted = slices.Clone(r.c.Aborted)
	h.next = next
	return r
}

func (h *harness) ok(origin Origin, batches ...Batch) result {
	h.t.Helper()
	r := h.append(origin, batches...)
	if r.err != nil {
		h.t.Fatalf("append %v: %v", origin, r.err)
	}
	return r
}

func (h *harness) fails(want error, origin Origin, batches ...Batch) {
	h.t.Helper()
	before := dumpState(h.m, h.p)
	r := h.append(origin, batches...)
	if !errors.Is(r.err, want) {
		h.t.Fatalf("append %v: got %v, want %v", origin, r.err, want)
	}
	if after := dumpState(h.m, h.p); !equalState(before, after) {
		h.t.Fatalf("rejected append changed state:\nbefore %+v\nafter  %+v", before, after)
	}
}

func (h *harness) producer(pid int64) ProducerInfo {
	h.t.Helper()
	in, ok := h.m.Producer(h.p, pid)
	if !ok {
		h.t.Fatalf("producer %d not found", pid)
	}
	return in
}

// state is everything observable about a partition, in a canonical order.
type state struct {
	producers []ProducerInfo
	open      []TxnInfo
	unrepl    []TxnInfo
	snapshot  []byte
}

func dumpState(m manager, p PartitionID) state {
	var s state
	for in := range m.Producers(p) {
		s.producers = append(s.producers, in)
	}
	slices.SortFunc(s.producers, func(a, b ProducerInfo) int {
		switch {
		case a.ProducerID < b.ProducerID:
			return -1
		case a.ProducerID > b.ProducerID:
			return 1
		}
		return 0
	})
	s.open = m.OpenTxns(nil, p)
	s.unrepl = m.UnreplicatedTxns(nil, p)
	s.snapshot = m.AppendSnapshot(nil, p)
	return s
}

func equalState(a, b state) bool {
	return slices.Equal(a.producers, b.producers) && slices.Equal(a.open, b.open) &&
		slices.Equal(a.unrepl, b.unrepl) && slices.Equal(a.snapshot, b.snapshot)
}

// abortedTxn is the .txnindex entry of producer pid's aborted transaction.
func abortedTxn(pid, first, last, lso int64) storage.AbortedTxn {
	return storage.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: last, LastStableOffset: lso}
}

// verify is StartVerification, failing the test on an error.
func (h *harness) verify(pid int64, seq int32, epoch int16, tv TxnVersion, nowMs int64) Guard {
	h.t.Helper()
	g, err := h.m.StartVerification(h.p, pid, seq, epoch, tv, nowMs)
	if err != nil {
		h.t.Fatalf("StartVerification(%d, seq %d, epoch %d): %v", pid, seq, epoch, err)
	}
	return g
}
