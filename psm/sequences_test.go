package psm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testbatch"
)

// TestSequences replays the producer-state sequences in testdata/sequences:
// each file is a run of appends and queries with their expected output,
// played on the reference Model and on the Store at once (their outputs must
// agree). Regenerate the expected output with
//
//	go test ./psm -run TestSequences -rewrite
//
// and review the diff: it is the specification.
//
// Commands:
//
//	append origin=client|coordinator|replication
//	<batch>...
//
// appends the batches (one per input line) in one append and commits, or
// aborts at the first error; it prints where each batch went, what it
// completed, the transaction-index entries to write, or the error. A rejected
// append must leave the state unchanged (checked, not printed). The batch
// lines are internal/testbatch's, without offset= and leader-epoch=:
//
//	data pid=P [epoch=E] [seq=S] [records=N] [txn]
//	marker pid=P [epoch=E] [coord=C] commit|abort [type=T] [records=0]
//
// (data timestamps are 1000, markers' 2000; type names another control type,
// records=0 makes an empty control batch).
//
//	producer pid=P
//
// prints the producer's entry: epoch, coordinator epoch, last timestamp, open
// transaction, last sequence, and its cached batches oldest first.
func TestSequences(t *testing.T) {
	datadriven.Walk(t, "testdata/sequences", func(t *testing.T, path string) {
		impls := []*harness{
			{t: t, m: NewModel(Options{}), p: 3},
			{t: t, m: NewStore(Options{}), p: 3},
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var outs [2]string
			for i, h := range impls {
				h.t = t
				outs[i] = runSequenceCmd(t, h, d)
			}
			if outs[0] != outs[1] {
				t.Errorf("%s: the Model and the Store disagree\nmodel:\n%sstore:\n%s", d.Pos, outs[0], outs[1])
			}
			return outs[0]
		})
	})
}

func runSequenceCmd(t *testing.T, h *harness, d *datadriven.TestData) string {
	switch d.Cmd {
	case "append":
		var name string
		d.ScanArgs(t, "origin", &name)
		origin, ok := map[string]Origin{"client": Client, "coordinator": Coordinator, "replication": Replication}[name]
		if !ok {
			t.Fatalf("%s: unknown origin %q", d.Pos, name)
		}
		batches := seqBatches(t, d)
		before := dumpState(h.m, h.p)
		r := h.append(origin, batches...)
		var b strings.Builder
		if r.err != nil {
			fmt.Fprintf(&b, "error: %v\n", r.err)
			if after := dumpState(h.m, h.p); !equalState(before, after) {
				t.Errorf("%s: a rejected append changed the state:\nbefore %+v\nafter  %+v", d.Pos, before, after)
			}
			return b.String()
		}
		for i, out := range r.outs {
			fmt.Fprintf(&b, "batch %d: ", i+1)
			if dup := out.Duplicate; dup.Found {
				fmt.Fprintf(&b, "duplicate of %d..%d ts=%d\n", dup.FirstOffset, dup.LastOffset, dup.Timestamp)
				continue
			}
			last := r.at[i] + int64(batches[i].LastOffsetDelta)
			fmt.Fprintf(&b, "at %s", offsets(r.at[i], last))
			if out.TxnCompleted {
				c := out.Completed
				fmt.Fprintf(&b, ", completes pid=%d %s %s", c.ProducerID, outcome(c.Aborted), offsets(c.FirstOffset, c.LastOffset))
			}
			if out.Barrier {
				b.WriteString(", barrier")
			}
			b.WriteString("\n")
		}
		for _, a := range r.c.Aborted {
			fmt.Fprintf(&b, "txn index: pid=%d %s lso=%d\n", a.ProducerID, offsets(a.FirstOffset, a.LastOffset), a.LastStableOffset)
		}
		return b.String()
	case "producer":
		var pid int64
		d.ScanArgs(t, "pid", &pid)
		in, ok := h.m.Producer(h.p, pid)
		if !ok {
			return fmt.Sprintf("producer %d: none\n", pid)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "epoch=%d coord-epoch=%d last-ts=%d txn-first=%d last-seq=%d\n",
			in.Epoch, in.CoordinatorEpoch, in.LastTimestamp, in.TxnFirstOffset, in.LastSeq())
		for _, w := range in.Window() {
			seq := "none" // a COORDINATOR batch without sequence numbers
			if w.LastSeq != codec.NoSequence {
				seq = fmt.Sprintf("%d..%d", w.FirstSeq(), w.LastSeq)
			}
			fmt.Fprintf(&b, "  seq %s at %s ts=%d\n", seq, offsets(w.FirstOffset(), w.LastOffset), w.Timestamp)
		}
		return b.String()
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

func offsets(first, last int64) string {
	if first == last {
		return strconv.FormatInt(first, 10)
	}
	return fmt.Sprintf("%d..%d", first, last)
}

func outcome(aborted bool) string {
	if aborted {
		return "abort"
	}
	return "commit"
}

// seqBatches reads the append's batch lines (internal/testbatch's grammar)
// into what producer state reads from them.
func seqBatches(t *testing.T, d *datadriven.TestData) []Batch {
	lines, err := testbatch.Lines(d.Input)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	var out []Batch
	for _, l := range lines {
		if l.Placed {
			t.Fatalf("%s: offset= and leader-epoch= are not for producer state (the harness assigns offsets)", d.Pos)
		}
		if !l.Marker {
			b := data(l.PID, l.Epoch, l.Seq, l.Records)
			b.Transactional = l.Txn
			out = append(out, b)
			continue
		}
		b := marker(l.PID, l.Epoch, l.Abort, l.Coord)
		b.ControlType, b.RecordsCount = l.Type, l.Records
		out = append(out, b)
	}
	return out
}
