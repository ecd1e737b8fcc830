package psm

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/mirrorpath/mirrorpath/codec"
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
// append must leave the state unchanged (checked, not printed). A batch line
// is one of
//
//	data pid=P epoch=E seq=S count=N [txn]
//	marker pid=P epoch=E commit|abort coord=C [type=T] [records=0]
//
// (data timestamps are 1000, markers' 2000; type overrides the control type,
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
		var batches []Batch
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			batches = append(batches, parseSeqBatch(t, d, line))
		}
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

// parseSeqBatch reads one batch line of an append (see TestSequences).
func parseSeqBatch(t *testing.T, d *datadriven.TestData, line string) Batch {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		t.Fatalf("%s: empty batch line", d.Pos)
	}
	kv := map[string]string{}
	flags := map[string]bool{}
	for _, f := range fields[1:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		} else {
			flags[f] = true
		}
	}
	num := func(key string, bits int) int64 {
		s, ok := kv[key]
		if !ok {
			t.Fatalf("%s: %q lacks %s=", d.Pos, line, key)
		}
		delete(kv, key)
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			t.Fatalf("%s: %q: %s: %v", d.Pos, line, key, err)
		}
		return n
	}
	var b Batch
	switch fields[0] {
	case "data":
		b = data(num("pid", 64), int16(num("epoch", 16)), int32(num("seq", 32)), int32(num("count", 32)))
		b.Transactional = flags["txn"]
		delete(flags, "txn")
	case "marker":
		if flags["commit"] == flags["abort"] {
			t.Fatalf("%s: %q: a marker is either commit or abort", d.Pos, line)
		}
		b = marker(num("pid", 64), int16(num("epoch", 16)), flags["abort"], int32(num("coord", 32)))
		delete(flags, "commit")
		delete(flags, "abort")
		if _, ok := kv["type"]; ok {
			b.ControlType = codec.ControlType(num("type", 16))
		}
		if _, ok := kv["records"]; ok {
			b.RecordsCount = int32(num("records", 32))
		}
	default:
		t.Fatalf("%s: %q: unknown batch kind %q", d.Pos, line, fields[0])
	}
	for k := range kv {
		t.Fatalf("%s: %q: unknown argument %s=", d.Pos, line, k)
	}
	for f := range flags {
		t.Fatalf("%s: %q: unknown flag %s", d.Pos, line, f)
	}
	return b
}
