package psm

import (
	"math"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
)

// Producer-state corner cases that failure reports of other brokers turned
// up, each checked against Kafka's rule on the Model and on the Store. The
// scenarios that drive the same cases through a whole broker are
// scenarios/70-… to 75-….

// restart is a broker restart from snap: a new Manager of h's kind, so that
// nothing that lives in memory only (verification entries) survives.
func restart(t *testing.T, h *harness, opts Options, snap []byte, nowMs int64) {
	t.Helper()
	var m manager = NewModel(opts)
	if _, ok := h.m.(*Store); ok {
		m = NewStore(opts)
	}
	if err := m.LoadSnapshot(h.p, snap, nowMs); err != nil {
		t.Fatal(err)
	}
	h.m = m
}

// replay is log recovery after a snapshot: each batch at its own offset,
// REPLICATION origin, one at a time (LogLoader's per-batch replay).
func replay(t *testing.T, h *harness, batches ...Batch) []CompletedTxn {
	t.Helper()
	var done []CompletedTxn
	for _, b := range batches {
		_, c, err := h.m.Update(h.p, Replication, &b)
		if err != nil {
			t.Fatalf("replay %+v: %v", b, err)
		}
		if c != nil {
			done = append(done, c.Completed...)
		}
	}
	return done
}

func at(b Batch, offset int64) Batch { b.BaseOffset = offset; return b }

// A transaction the coordinator has opened, with the partition added
// (AddPartitionsToTxn verified it) but no data batch on the partition yet, is
// no transaction of the partition: ProducerStateManager tracks a transaction
// from its first data batch (ProducerAppendInfo#appendDataBatch sets
// currentTxnFirstOffset), so the snapshot holds none and the LSO is not held
// back, before or after a restart. The verification entry is memory only
// (ProducerStateManager#verificationStates): after the restart the first
// batch needs a fresh guard, and it opens the transaction at its own offset.
func TestCornerOpenTxnNoDataAcrossRestart(t *testing.T) {
	opts := Options{VerifyTransactions: true}
	forEachImpl(t, opts, func(t *testing.T, h *harness) {
		g := h.verify(1, 0, 0, TV0, 0)
		a := h.m.Begin(h.p, Client)
		a.SetGuard(g)
		b := at(txnData(1, 0, 0, 2), 0)
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
		a.Commit()
		h.next = 2
		h.ok(Coordinator, marker(1, 0, false, 0)) // offset 2: the first transaction committed
		h.m.OnHighWatermark(h.p, h.next)
		// The second transaction: added to the partition, no data yet.
		stale := h.verify(1, 2, 0, TV0, 0)
		if stale == 0 {
			t.Fatal("no guard for a producer with no open transaction")
		}
		snap := h.m.AppendSnapshot(nil, h.p)
		restart(t, h, opts, snap, 0)
		if open := h.m.OpenTxns(nil, h.p); len(open) != 0 {
			t.Fatalf("open transactions after restart %+v, want none: no data batch was written", open)
		}
		if _, ok := h.m.FirstUnstableOffset(h.p); ok {
			t.Fatal("first unstable offset after restart with no data batch")
		}
		if lso := h.m.LastStableOffset(h.p, h.next); lso != h.next {
			t.Fatalf("LSO %d, want the high watermark %d", lso, h.next)
		}
		if in := h.producer(1); in.Epoch != 0 || in.LastSeq() != 1 || in.TxnFirstOffset != -1 {
			t.Fatalf("entry after restart %+v", in)
		}
		// The guard handed out before the restart is gone with its entry.
		a = h.m.Begin(h.p, Client)
		a.SetGuard(stale)
		b = at(txnData(1, 0, 2, 1), h.next)
		if _, err := a.Add(&b); err != kafkaerr.InvalidTxnState {
			t.Fatalf("pre-restart guard: %v, want %v", err, kafkaerr.InvalidTxnState)
		}
		a.Abort()
		g = h.verify(1, 2, 0, TV0, 0)
		a = h.m.Begin(h.p, Client)
		a.SetGuard(g)
		if _, err := a.Add(&b); err != nil {
			t.Fatalf("re-verified first batch: %v", err)
		}
		a.Commit()
		first := h.next
		h.next++
		if fuo, ok := h.m.FirstUnstableOffset(h.p); !ok || fuo != first {
			t.Fatalf("first unstable offset %d %v, want %d", fuo, ok, first)
		}
		r := h.ok(Coordinator, marker(1, 0, false, 0))
		if !slices.Equal(r.c.Completed, []CompletedTxn{{ProducerID: 1, FirstOffset: first, LastOffset: first + 1}}) {
			t.Fatalf("commit completed %+v", r.c.Completed)
		}
		h.m.OnHighWatermark(h.p, h.next)
		if lso := h.m.LastStableOffset(h.p, h.next); lso != h.next {
			t.Fatalf("LSO %d after the commit, want %d", lso, h.next)
		}
	})
}

// A snapshot taken while a transaction is open holds its first offset
// (ProducerStateManager#writeSnapshot: currentTxnFirstOffset), and a rebuild
// from it (#loadProducerEntry puts it back into ongoingTxns) replays the log
// after the snapshot: the COMMIT marker there closes the transaction, even
// when compaction has removed the transaction's data, because the cleaner
// keeps the marker (LogCleaner retains a marker until its delete horizon,
// which the transaction's data must reach first). A log whose marker is gone
// leaves the transaction open for good: the LSO stays at its first offset.
func TestCornerSnapshotInOpenTxnCommitCompacted(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 2)) // offsets 0-1, the open transaction
		h.ok(Client, data(2, 0, 0, 1))    // 2
		snap := h.m.AppendSnapshot(nil, h.p)
		commit := at(marker(1, 0, false, 0), 3)
		later := at(data(2, 0, 1, 1), 4)
		if r := h.ok(Coordinator, marker(1, 0, false, 0)); len(r.c.Completed) != 1 {
			t.Fatalf("commit %+v", r.c)
		}
		h.ok(Client, data(2, 0, 1, 1))
		want := dumpState(h.m, h.p)
		// Compaction dropped offsets 0-2 (superseded keys); the marker and
		// pid 2's last batch stay. The crash loses the log-end snapshot: the
		// rebuild starts from the one taken at offset 3.
		restart(t, h, Options{}, snap, 0)
		if open := h.m.OpenTxns(nil, h.p); !slices.Equal(open, []TxnInfo{{ProducerID: 1, FirstOffset: 0, LastOffset: -1}}) {
			t.Fatalf("snapshot loaded open transactions %+v, want pid 1's at 0", open)
		}
		done := replay(t, h, commit, later)
		if !slices.Equal(done, []CompletedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 3}}) {
			t.Fatalf("replayed commit completed %+v", done)
		}
		h.m.OnHighWatermark(h.p, 5)
		if lso := h.m.LastStableOffset(h.p, 5); lso != 5 {
			t.Fatalf("LSO %d after the rebuild, want 5", lso)
		}
		got := dumpState(h.m, h.p)
		if !slices.Equal(got.producers, want.producers) || len(got.open) != 0 {
			t.Fatalf("rebuilt state\n got %+v\nwant %+v", got, want)
		}
		// Without the marker (a cleaner that removed it) nothing closes the
		// transaction: this is what keeping the marker prevents.
		restart(t, h, Options{}, snap, 0)
		replay(t, h, later)
		if lso := h.m.LastStableOffset(h.p, 5); lso != 0 {
			t.Fatalf("LSO %d with the marker gone, want 0 (pinned)", lso)
		}
	})
}

// Prefix truncation (DeleteRecords, retention) past a producer's last batch
// does not touch producer state: ProducerStateManager
// #onLogStartOffsetIncremented drops only unreplicated transactions below the
// new log start, so the entry and its window stay until the producer expires.
// A retry of the deleted batch is a duplicate acknowledged at its original
// offsets (ProducerStateEntry#findDuplicateBatch), before and after a
// snapshot reload, and the producer's next sequence still follows it.
func TestCornerPrefixTruncationKeepsDedup(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 5))   // 0-4
		h.ok(Client, data(2, 0, 0, 5))   // 5-9
		h.m.OnHighWatermark(h.p, h.next) // the log start moves to 10: nothing to tell the PSM
		for round := range 2 {
			r := h.ok(Client, data(1, 0, 0, 5))
			if d := r.outs[0].Duplicate; !d.Found || d.FirstOffset != 0 || d.LastOffset != 4 {
				t.Fatalf("round %d: retry below the log start: %+v, want a duplicate at 0-4", round, d)
			}
			restart(t, h, Options{}, h.m.AppendSnapshot(nil, h.p), 0)
		}
		h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 0, 7, 1))
		h.ok(Client, data(1, 0, 5, 1))
	})
}

// The coordinator fences an open transaction at epoch 32766 by bumping the
// epoch to Short.MAX_VALUE (TransactionMetadata#prepareFenceProducerEpoch;
// the next InitProducerId finds 32767 exhausted, #isEpochExhausted, and
// rotates to a new PID). The ABORT marker at 32767 can land after more data
// of the old instance at 32766 (the markers are written asynchronously): that
// data joins the open transaction and the marker aborts it all
// (ProducerAppendInfo#checkProducerEpoch: a marker may carry a higher epoch).
// After the marker, 32766 is fenced; so is -32768, what 32767 + 1 wraps to:
// epochs compare as signed 16-bit values, with no wrap-around.
func TestCornerEpochExhaustionDelayedMarker(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		const e = math.MaxInt16 - 1
		h.ok(Client, txnData(1, e, 0, 2))               // 0-1
		h.ok(Client, txnData(1, e, 2, 1))               // 2: before the delayed marker
		r := h.ok(Coordinator, marker(1, e+1, true, 0)) // 3
		if !slices.Equal(r.c.Completed, []CompletedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 3, Aborted: true}}) {
			t.Fatalf("fence marker completed %+v", r.c.Completed)
		}
		if !slices.Equal(r.c.Aborted, []storage.AbortedTxn{abortedTxn(1, 0, 3, 4)}) {
			t.Fatalf(".txnindex %+v", r.c.Aborted)
		}
		for round := range 2 {
			if in := h.producer(1); in.Epoch != math.MaxInt16 || in.TxnFirstOffset != -1 {
				t.Fatalf("round %d: entry %+v, want epoch 32767 and no open transaction", round, in)
			}
			h.fails(kafkaerr.InvalidProducerEpoch, Client, txnData(1, e, 3, 1))
			h.fails(kafkaerr.InvalidProducerEpoch, Client, data(1, math.MinInt16, 0, 1))
			h.fails(kafkaerr.InvalidProducerEpoch, Coordinator, marker(1, e, true, 0))
			restart(t, h, Options{}, h.m.AppendSnapshot(nil, h.p), 0)
		}
		// The coordinator's retry of the same marker closes nothing.
		if r := h.ok(Coordinator, marker(1, math.MaxInt16, true, 0)); len(r.c.Completed) != 0 {
			t.Fatalf("repeated marker completed %+v", r.c.Completed)
		}
		// The rotated PID starts at epoch 0.
		h.ok(Client, txnData(2, 0, 0, 1))
		if _, ok := h.m.FirstUnstableOffset(h.p); !ok {
			t.Fatal("rotated PID's transaction not open")
		}
	})
}

// PIDs within 1000 of MaxInt64 are producers like any other under both
// HasProducerID rules (they are positive): tracked, snapshotted and
// reloaded, so a failover scan of producer state sees them (the allocator
// strategy's highest PID).
func TestCornerPIDsNearMaxInt64(t *testing.T) {
	for _, rule := range []HasProducerIDRule{Stock, NonNegativeOne} {
		opts := Options{HasProducerID: rule}
		forEachImpl(t, opts, func(t *testing.T, h *harness) {
			pids := []int64{math.MaxInt64 - 1000, math.MaxInt64 - 999, math.MaxInt64 - 1, math.MaxInt64}
			for _, pid := range pids {
				h.ok(Client, data(pid, 0, 0, 2))
			}
			restart(t, h, opts, h.m.AppendSnapshot(nil, h.p), 0)
			var got []int64
			for in := range h.m.Producers(h.p) {
				got = append(got, in.ProducerID)
			}
			slices.Sort(got)
			if !slices.Equal(got, pids) {
				t.Fatalf("producers %v, want %v", got, pids)
			}
			h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(math.MaxInt64, 0, 3, 1))
		})
	}
}

// Batches of the old message formats (magic 0 and 1) carry no producer ID;
// as v2 batches (what LogValidator up-converts them to) they have producer
// ID -1, epoch -1 and sequence -1. They build no producer entry under either
// HasProducerID rule (RecordBatch#hasProducerId), on any origin, and a
// barrier after them finds nothing to clear and keeps the open transactions
// of the producers that have IDs.
func TestCornerNoProducerIDBatches(t *testing.T) {
	for _, rule := range []HasProducerIDRule{Stock, NonNegativeOne} {
		opts := Options{HasProducerID: rule}
		forEachImpl(t, opts, func(t *testing.T, h *harness) {
			old := data(-1, -1, -1, 3)
			h.ok(Replication, old, old)
			h.ok(Client, old)
			if n := h.m.ProducerCount(h.p); n != 0 {
				t.Fatalf("%d entries from batches with no producer ID", n)
			}
			h.ok(Replication, txnData(5, 0, 0, 1)) // 9: a producer with an ID, transaction open
			h.ok(Replication, old)
			if kept := h.m.Reset(h.p); kept != 1 {
				t.Fatalf("barrier kept %d open transactions, want 1", kept)
			}
			if n := h.m.ProducerCount(h.p); n != 0 {
				t.Fatalf("%d entries after the barrier", n)
			}
			if fuo, ok := h.m.FirstUnstableOffset(h.p); !ok || fuo != 9 {
				t.Fatalf("first unstable offset %d %v, want 9", fuo, ok)
			}
			h.ok(Replication, old)
			if n := h.m.ProducerCount(h.p); n != 0 {
				t.Fatalf("%d entries after the barrier and another batch with no ID", n)
			}
		})
	}
}
