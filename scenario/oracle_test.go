package scenario

import (
	"strings"
	"testing"
)

// stubReplica answers the oracle's state questions with fixed values; it
// holds no log. Only the oracle tests use it.
type stubReplica struct {
	replica // nil: any other method panics
	lso, hw int64
	state   string
	entries []producerEntry
	txns    []openTxn
}

func (s *stubReplica) OpenTxns() []openTxn { return append([]openTxn(nil), s.txns...) }

func (s *stubReplica) LogEndOffset() int64        { return s.hw }
func (s *stubReplica) HighWatermark() int64       { return s.hw }
func (s *stubReplica) LastStableOffset() int64    { return s.lso }
func (s *stubReplica) State() string              { return s.state }
func (s *stubReplica) Producers() []producerEntry { return append([]producerEntry(nil), s.entries...) }

func stubPartition(w *world, reps ...replica) *partition {
	cl := &cluster{name: "B", txn: txnCoordinator{ids: map[string]*txnState{}}}
	p := &partition{c: cl, topic: "t", key: "t/0", reps: reps, mirroredPIDs: map[int64]pidOrigin{},
		localPIDs: pidProducers{}, mirroredBy: pidProducers{}}
	cl.parts = []*partition{p}
	w.clusters = append(w.clusters, cl)
	return p
}

func codesOf(o *oracle) string {
	var cs []string
	for _, v := range o.violations {
		cs = append(cs, string(v.Code))
	}
	return strings.Join(cs, ",")
}

func TestOracleM6(t *testing.T) {
	w := newWorld("barrier", DefaultOptions())
	r := &stubReplica{lso: 3, hw: 10, state: stateStopped}
	p := stubPartition(w, r)
	p.state = stateStopped
	// A local transaction open on the partition explains the pinned LSO.
	t1 := &txnState{id: "tx", open: true, parts: []*partition{p}}
	p.c.txn.order = append(p.c.txn.order, t1)
	w.or.checkLSO(p)
	if got := codesOf(w.or); got != "" {
		t.Fatalf("open local txn: %q, want nothing", got)
	}
	t1.open = false
	w.or.checkLSO(p)
	if got := codesOf(w.or); got != "M6" || !strings.Contains(w.or.violations[0].Detail, "LSO 3") {
		t.Fatalf("no txn open: %q %+v, want M6", got, w.or.violations)
	}
	// A mirroring partition's LSO follows its source: not checked.
	w2 := newWorld("barrier", DefaultOptions())
	p2 := stubPartition(w2, r)
	p2.state = stateMirroring
	w2.or.checkLSO(p2)
	if got := codesOf(w2.or); got != "" {
		t.Errorf("mirroring: %q", got)
	}
}

func TestOracleI2(t *testing.T) {
	w := newWorld("verbatim", DefaultOptions())
	e := producerEntry{PID: 5, Epoch: 0, LastSeq: 9, TxnFirstOffset: -1}
	lead := &stubReplica{entries: []producerEntry{e}}
	same := &stubReplica{entries: []producerEntry{e}}
	stubPartition(w, lead, same)
	w.or.checkReplicasAgree()
	if got := codesOf(w.or); got != "" {
		t.Fatalf("agreeing replicas: %q", got)
	}
	e.LastSeq = 4
	stubPartition(w, lead, &stubReplica{entries: []producerEntry{e}})
	w.or.checkReplicasAgree()
	if got := codesOf(w.or); got != "I2" {
		t.Fatalf("diverging replicas: %q, want I2", got)
	}
}

// TestOracleI2WholeEntries: replicas that agree on PID, epoch, last sequence
// and transaction start but differ anywhere else in an entry, or in the set
// of open transactions, are I2.
func TestOracleI2WholeEntries(t *testing.T) {
	base := producerEntry{PID: 5, Epoch: 0, LastSeq: 9, TxnFirstOffset: -1, CoordinatorEpoch: 0, LastTimestamp: 100,
		Window: []cachedBatch{{LastOffset: 4, Timestamp: 90, LastSeq: 4, OffsetDelta: 4},
			{LastOffset: 9, Timestamp: 100, LastSeq: 9, OffsetDelta: 4}}}
	window := base
	window.Window = []cachedBatch{{LastOffset: 9, Timestamp: 100, LastSeq: 9, OffsetDelta: 9}}
	coord := base
	coord.CoordinatorEpoch = 3
	ts := base
	ts.LastTimestamp = 99
	cases := []struct {
		name     string
		follower *stubReplica
	}{
		{"window", &stubReplica{entries: []producerEntry{window}}},
		{"coordinator epoch", &stubReplica{entries: []producerEntry{coord}}},
		{"last timestamp", &stubReplica{entries: []producerEntry{ts}}},
		{"open transactions", &stubReplica{entries: []producerEntry{base},
			txns: []openTxn{{PID: 5, FirstOffset: 0, LastOffset: 4}}}},
	}
	for _, c := range cases {
		w := newWorld("verbatim", DefaultOptions())
		stubPartition(w, &stubReplica{entries: []producerEntry{base}}, c.follower)
		w.or.checkReplicasAgree()
		if got := codesOf(w.or); got != "I2" {
			t.Errorf("%s differs: %q, want I2", c.name, got)
		}
	}
	// A replica that loaded a snapshot keeps only the newest batch of each
	// window: a suffix of the other's window agrees.
	suffix := base
	suffix.Window = base.Window[1:]
	for _, f := range []producerEntry{base, suffix} {
		w := newWorld("verbatim", DefaultOptions())
		stubPartition(w, &stubReplica{entries: []producerEntry{base}}, &stubReplica{entries: []producerEntry{f}})
		w.or.checkReplicasAgree()
		if got := codesOf(w.or); got != "" {
			t.Errorf("agreeing replicas (window %v): %q", f.Window, got)
		}
	}
	// A replica that loaded a snapshot after an end marker and then
	// appended the batch at 9: its oldest batch carries the marker's
	// timestamp, whatever it is (a broker's clock can stand behind the
	// clients'). A lone batch may carry any timestamp too: an end marker
	// after the snapshot moved the entry's last timestamp past the one the
	// snapshot gave the batch. A different timestamp on a newer batch is
	// no snapshot's: I2.
	for _, c := range []struct {
		window []cachedBatch
		want   string
	}{
		{[]cachedBatch{{LastOffset: 4, Timestamp: 95, LastSeq: 4, OffsetDelta: 4}, base.Window[1]}, ""},
		{[]cachedBatch{{LastOffset: 4, Timestamp: 0, LastSeq: 4, OffsetDelta: 4}, base.Window[1]}, ""},
		{[]cachedBatch{{LastOffset: 4, Timestamp: 95, LastSeq: 3, OffsetDelta: 4}, base.Window[1]}, "I2"},
		{[]cachedBatch{base.Window[0], {LastOffset: 9, Timestamp: 99, LastSeq: 9, OffsetDelta: 4}}, "I2"},
		{[]cachedBatch{{LastOffset: 9, Timestamp: 99, LastSeq: 9, OffsetDelta: 4}}, ""},
		{[]cachedBatch{{LastOffset: 9, Timestamp: 99, LastSeq: 8, OffsetDelta: 4}}, "I2"},
	} {
		reloaded := base
		reloaded.Window = c.window
		w := newWorld("verbatim", DefaultOptions())
		stubPartition(w, &stubReplica{entries: []producerEntry{base}}, &stubReplica{entries: []producerEntry{reloaded}})
		w.or.checkReplicasAgree()
		if got := codesOf(w.or); got != c.want {
			t.Errorf("reloaded window %v: %q, want %q", c.window, got, c.want)
		}
	}
}

func TestOracleReportsOnce(t *testing.T) {
	w := newWorld("verbatim", DefaultOptions())
	p := stubPartition(w, &stubReplica{})
	w.step = 3
	w.or.report("M1", p, "first")
	w.step = 4
	w.or.report("M1", p, "second")
	w.or.clientError("q", p.c, p, "OUT_OF_ORDER_SEQUENCE_NUMBER")
	w.or.clientError("r", p.c, nil, "OUT_OF_ORDER_SEQUENCE_NUMBER")
	w.or.clientError("r", p.c, nil, "INVALID_PRODUCER_EPOCH")
	if got := codesOf(w.or); got != "M1,ERR,ERR" {
		t.Fatalf("codes %q, want M1,ERR,ERR", got)
	}
	if v := w.or.violations[0]; v.Step != 3 || v.Detail != "first" {
		t.Errorf("M1 reported at step %d (%q), want the first step", v.Step, v.Detail)
	}
	if len(w.or.clientErrors) != 3 {
		t.Errorf("client errors %d, want every one listed", len(w.or.clientErrors))
	}
}
