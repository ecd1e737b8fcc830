package psm

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testhex"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
)

// Expiration, snapshots and recovery (ProducerStateManager#removeExpiredProducers,
// #loadFromSnapshot, #truncateAndReload; docs/producer-state.md).

func TestExpiration(t *testing.T) {
	forEachImpl(t, Options{ExpirationMs: 100}, func(t *testing.T, h *harness) {
		b := data(1, 0, 0, 1)
		b.MaxTimestamp = 5000 // lastTimestamp is the batch maxTimestamp
		h.ok(Client, b)
		h.ok(Client, txnData(2, 0, 0, 1)) // ts 1000, open txn
		h.ok(Client, data(3, 0, 0, 1))    // ts 1000
		h.ok(Client, txnData(4, 0, 0, 1))
		h.ok(Coordinator, marker(4, 0, false, 0)) // marker ts 2000
		if in := h.producer(4); in.LastTimestamp != 2000 {
			t.Fatalf("marker timestamp %d", in.LastTimestamp)
		}
		if n := h.m.ExpireProducers(h.p, 1099); n != 0 {
			t.Fatalf("expired %d at 1099", n)
		}
		if n := h.m.ExpireProducers(h.p, 1100); n != 1 || h.m.ProducerCount(h.p) != 3 {
			t.Fatalf("at 1100 expired %d, left %d; want 3 gone only", n, h.m.ProducerCount(h.p))
		}
		if _, ok := h.m.Producer(h.p, 3); ok {
			t.Fatal("producer 3 survived")
		}
		if n := h.m.ExpireProducers(h.p, 1_000_000); n != 2 {
			t.Fatalf("expired %d, want 1 and 4", n)
		}
		if _, ok := h.m.Producer(h.p, 2); !ok {
			t.Fatal("producer with an open transaction expired")
		}
		// An expired producer is unknown again: any sequence is accepted.
		h.ok(Client, data(3, 0, 77, 1))
	})
}

func TestSegmentDeletionKeepsProducers(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		dir, err := storage.OpenSnapshotDir(nil, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		h.ok(Client, data(1, 0, 0, 10))
		if err := dir.Write(10, h.m.AppendSnapshot(nil, h.p)); err != nil {
			t.Fatal(err)
		}
		h.ok(Client, data(2, 0, 0, 10))
		if err := dir.Write(20, h.m.AppendSnapshot(nil, h.p)); err != nil {
			t.Fatal(err)
		}
		// The segment [0, 20) is deleted: its snapshot files go, the producers stay.
		if err := dir.RemoveBelow(20); err != nil {
			t.Fatal(err)
		}
		if offs := dir.Offsets(); !slices.Equal(offs, []int64{20}) {
			t.Fatalf("snapshots left %v", offs)
		}
		if h.m.ProducerCount(h.p) != 2 {
			t.Fatalf("segment deletion removed producers: %d left", h.m.ProducerCount(h.p))
		}
	})
}

// snapshotState builds a partition with every kind of entry.
func snapshotState(h *harness) {
	h.ok(Client, data(5, 2, 0, 3), data(5, 2, 3, 2)) // two batches, only the last is kept
	h.ok(Client, txnData(9, 0, 0, 1))                // open txn
	h.ok(Coordinator, marker(7, 4, false, 11))       // marker only: no batch
	h.ok(Client, data(-1, -1, -1, 1))                // no producer
}

func TestSnapshotRoundTrip(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		snapshotState(h)
		snap := h.m.AppendSnapshot(nil, h.p)
		if len(snap) != 10+3*snapshotEntrySize || snapshotEntrySize != 46 {
			t.Fatalf("snapshot size %d", len(snap))
		}
		if be.Uint16(snap) != 1 || be.Uint32(snap[2:]) != codec.Checksum(snap[6:]) || be.Uint32(snap[6:]) != 3 {
			t.Fatalf("header %x", snap[:10])
		}
		// First entry (sorted by PID): producer 5.
		golden := testhex.Unhex(t, `
			0000000000000005   # +0  producerId 5
			0002               # +8  epoch 2
			00000004           # +10 lastSequence 4
			0000000000000004   # +14 lastOffset 4
			00000001           # +22 offsetDelta 1
			00000000000003e8   # +26 timestamp 1000
			ffffffff           # +34 coordinatorEpoch -1
			ffffffffffffffff   # +38 currentTxnFirstOffset none
		`)
		if !bytes.Equal(snap[10:10+46], golden) {
			t.Fatalf("entry 0\n got %x\nwant %x", snap[10:56], golden)
		}
		for _, into := range []manager{NewModel(Options{}), NewStore(Options{})} {
			into.Begin(0, Client).Commit()
			if err := into.LoadSnapshot(0, snap, 0); err != nil {
				t.Fatal(err)
			}
			if got := into.AppendSnapshot(nil, 0); !bytes.Equal(got, snap) {
				t.Fatalf("%T: reloaded snapshot differs", into)
			}
			in, _ := into.Producer(0, 5)
			if in.NumBatches != 1 || in.Batches[0] != (BatchMetadata{LastOffset: 4, Timestamp: 1000, LastSeq: 4, OffsetDelta: 1}) {
				t.Fatalf("%T: reloaded entry %+v", into, in)
			}
			if in, _ := into.Producer(0, 7); in.NumBatches != 0 || in.CoordinatorEpoch != 11 || in.Epoch != 4 {
				t.Fatalf("%T: reloaded marker-only entry %+v", into, in)
			}
			if open := into.OpenTxns(nil, 0); !slices.Equal(open, []TxnInfo{{9, 5, -1}}) {
				t.Fatalf("%T: open txns after load %+v", into, open)
			}
			if lso := into.LastStableOffset(0, 100); lso != 5 {
				t.Fatalf("%T: LSO after load %d", into, lso)
			}
		}
		// Expired entries are dropped on load; the open txn never expires.
		fresh := NewStore(Options{})
		if err := fresh.LoadSnapshot(0, snap, 2000+DefaultExpirationMs); err != nil {
			t.Fatal(err)
		}
		if fresh.ProducerCount(0) != 1 {
			t.Fatalf("after expiring load %d producers, want the open-txn one", fresh.ProducerCount(0))
		}
	})
}

func TestCorruptSnapshotFallsBack(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		dir := t.TempDir()
		snapshotState(h)
		good := h.m.AppendSnapshot(nil, h.p)
		write := func(o int64, b []byte) {
			if err := os.WriteFile(storage.FileName(dir, o, storage.SnapshotSuffix), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(10, good)
		flipped := slices.Clone(good)
		flipped[len(flipped)-1] ^= 1
		write(20, flipped)
		write(30, nil)
		write(40, good[:len(good)-1])
		version0 := slices.Clone(good)
		version0[1] = 0
		write(50, version0)
		for _, c := range []struct {
			b    []byte
			want error
		}{{flipped, ErrSnapshotCRC}, {nil, ErrSnapshotTruncated}, {good[:9], ErrSnapshotTruncated}, {version0, ErrSnapshotVersion}} {
			if err := h.m.LoadSnapshot(h.p, c.b, 0); !errors.Is(err, c.want) || !errors.Is(err, ErrCorruptSnapshot) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
		}
		// A truncated entry list with a valid CRC.
		short := slices.Clone(good[:len(good)-snapshotEntrySize])
		be.PutUint32(short[2:], codec.Checksum(short[6:]))
		if err := h.m.LoadSnapshot(h.p, short, 0); !errors.Is(err, ErrSnapshotTruncated) {
			t.Fatalf("count beyond the file: %v", err)
		}
		before := dumpState(h.m, h.p)
		if err := h.m.LoadSnapshot(h.p, flipped, 0); err == nil || !equalState(before, dumpState(h.m, h.p)) {
			t.Fatal("a corrupt snapshot changed the state")
		}

		// The newest snapshot that loads wins; the corrupt ones above it go.
		into := NewStore(Options{})
		into.Begin(0, Client).Commit()
		snaps, err := storage.OpenSnapshotDir(nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		load := func(b []byte) error { return into.LoadSnapshot(0, b, 0) }
		corrupt := func(err error) bool { return errors.Is(err, ErrCorruptSnapshot) }
		if off, err := snaps.LoadNewest(0, 100, load, corrupt); err != nil || off != 10 {
			t.Fatalf("LoadNewest = %d %v", off, err)
		}
		if !bytes.Equal(into.AppendSnapshot(nil, 0), good) {
			t.Fatal("loaded the wrong state")
		}
		if offs := snaps.Offsets(); !slices.Equal(offs, []int64{10}) {
			t.Fatalf("corrupt files not deleted: %v", offs)
		}
		if again, _ := storage.OpenSnapshotDir(nil, dir); !slices.Equal(again.Offsets(), []int64{10}) {
			t.Fatalf("corrupt files left on disk: %v", again.Offsets())
		}
	})
}

func TestReloadDedupOnlyLastBatch(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 2))
		h.ok(Client, data(1, 0, 2, 2))
		h.ok(Client, data(1, 0, 4, 2))
		if r := h.ok(Client, data(1, 0, 2, 2)); !r.outs[0].Duplicate.Found {
			t.Fatal("not a duplicate before the reload")
		}
		if err := h.m.LoadSnapshot(h.p, h.m.AppendSnapshot(nil, h.p), 0); err != nil {
			t.Fatal(err)
		}
		if r := h.ok(Client, data(1, 0, 4, 2)); !r.outs[0].Duplicate.Found || r.outs[0].Duplicate.FirstOffset != 4 {
			t.Fatalf("last batch not deduplicated after reload: %+v", r.outs)
		}
		h.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 0, 2, 2))
	})
}

// TestRebuildReplicationToleratesRegressions replays a log the way
// loadProducersFromRecords does: one REPLICATION append over the whole chunk.
// Epoch and coordinator-epoch regressions are accepted (KAFKA-9144).
func TestRebuildReplicationToleratesRegressions(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		log := []Batch{
			txnData(1, 3, 0, 2),
			marker(1, 3, false, 10),
			txnData(1, 3, 2, 1),
			marker(1, 3, true, 8), // coordinator epoch went back
			data(1, 2, 50, 1),     // producer epoch went back
			data(2, 0, 9, 1),
		}
		r := h.ok(Replication, log...)
		if in := h.producer(1); in.Epoch != 2 || in.CoordinatorEpoch != 8 || in.NumBatches != 1 || in.LastSeq() != 50 {
			t.Fatalf("rebuilt entry %+v", in)
		}
		if len(r.c.Completed) != 2 || !slices.Equal(r.c.Aborted, []storage.AbortedTxn{abortedTxn(1, 3, 4, 5)}) {
			t.Fatalf("rebuild completions %+v", r.c)
		}
		// The same log through CLIENT/COORDINATOR is refused at the regressions.
		h2 := &harness{t: t, m: NewModel(Options{}), p: 0}
		h2.ok(Client, log[0])
		h2.ok(Coordinator, log[1])
		h2.ok(Client, log[2])
		h2.fails(kafkaerr.TransactionCoordinatorFenced, Coordinator, log[3])
	})
}

// The MIRROR_PID_RESET barrier (docs/producer-state.md, docs/strategies.md).

func TestBarrierClearsProducersKeepsOpenTxns(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Replication, data(1, 0, 0, 1), txnData(2, 0, 0, 1)) // 0, 1
		r := h.ok(Replication, barrierBatch())                   // 2
		if !r.outs[0].Barrier || r.c.Barriers != 1 || r.c.KeptOpenTxns != 1 {
			t.Fatalf("barrier commit %+v", r.c)
		}
		if n := h.m.ProducerCount(h.p); n != 0 {
			t.Fatalf("%d producers after the barrier", n)
		}
		if lso := h.m.LastStableOffset(h.p, 3); lso != 1 {
			t.Fatalf("LSO %d, want pinned at 1", lso)
		}
		// The marker now finds no open transaction in the (new) entry: nothing
		// completes and the LSO stays pinned for ever (M6).
		r = h.ok(Replication, marker(2, 0, false, 0))
		if len(r.c.Completed) != 0 || h.m.LastStableOffset(h.p, 10) != 1 {
			t.Fatalf("marker after barrier: %+v, LSO %d", r.c, h.m.LastStableOffset(h.p, 10))
		}
		if kept := h.m.Reset(h.p); kept != 1 {
			t.Fatalf("Reset kept %d", kept)
		}
		// A barrier batch is one whatever its producer fields say.
		b := barrierBatch()
		b.ProducerID = 42
		h.ok(Replication, data(3, 0, 0, 1))
		h.ok(Client, b)
		if h.m.ProducerCount(h.p) != 0 {
			t.Fatal("barrier with a PID did not clear")
		}
	})
}

func TestBarrierExactOrderInAppend(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Replication, data(3, 0, 0, 1), data(1, 0, 0, 1))
		batches := []Batch{data(1, 0, 1, 1), txnData(4, 0, 0, 1), barrierBatch(), data(2, 5, 7, 1), data(1, 9, 3, 1)}
		r := h.ok(Replication, batches...)
		if r.c.KeptOpenTxns != 1 {
			t.Fatalf("kept %d open txns, want 4's", r.c.KeptOpenTxns)
		}
		got := dumpState(h.m, h.p)
		var pids []int64
		for _, in := range got.producers {
			pids = append(pids, in.ProducerID)
		}
		if !slices.Equal(pids, []int64{1, 2}) {
			t.Fatalf("producers %v, want 1 and 2 from after the barrier", pids)
		}
		if in := h.producer(1); in.Epoch != 9 || in.NumBatches != 1 || in.Batches[0].LastSeq != 3 {
			t.Fatalf("post-barrier entry %+v", in)
		}
		// Equal to applying the same batches one append at a time.
		var one manager = NewModel(Options{})
		if _, ok := h.m.(*Store); ok {
			one = NewStore(Options{})
		}
		h1 := &harness{t: t, m: one, p: h.p}
		h1.ok(Replication, data(3, 0, 0, 1), data(1, 0, 0, 1))
		for _, b := range batches {
			h1.ok(Replication, b)
		}
		if !equalState(got, dumpState(one, h.p)) {
			t.Fatalf("multi-batch append %+v\n!= one by one %+v", got, dumpState(one, h.p))
		}
	})
}

func TestBarrierPrototypeResurrects(t *testing.T) {
	forEachImpl(t, Options{BarrierApply: Prototype}, func(t *testing.T, h *harness) {
		h.ok(Replication, data(3, 0, 0, 1), data(1, 0, 0, 1))
		h.ok(Replication, data(1, 0, 1, 1), barrierBatch(), data(2, 0, 0, 1))
		var pids []int64
		for _, in := range dumpState(h.m, h.p).producers {
			pids = append(pids, in.ProducerID)
		}
		if !slices.Equal(pids, []int64{1, 2}) {
			t.Fatalf("producers %v, want 1 resurrected and 2", pids)
		}
		if in := h.producer(1); in.NumBatches != 1 || in.Batches[0].LastSeq != 1 {
			t.Fatalf("resurrected entry %+v", in)
		}
	})
}

func TestTwoBarriersEqualOne(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		build := func(m manager) *harness {
			x := &harness{t: t, m: m, p: 0}
			x.ok(Replication, data(1, 0, 0, 1), txnData(2, 0, 0, 1))
			return x
		}
		newM := func() manager {
			if _, ok := h.m.(*Store); ok {
				return NewStore(Options{})
			}
			return NewModel(Options{})
		}
		one, two, twice := build(newM()), build(newM()), build(newM())
		r1 := one.ok(Replication, barrierBatch())
		r2 := two.ok(Replication, barrierBatch(), barrierBatch())
		twice.ok(Replication, barrierBatch())
		r3 := twice.ok(Replication, barrierBatch())
		if r1.c.KeptOpenTxns != r2.c.KeptOpenTxns || r1.c.KeptOpenTxns != r3.c.KeptOpenTxns {
			t.Fatalf("kept %d %d %d", r1.c.KeptOpenTxns, r2.c.KeptOpenTxns, r3.c.KeptOpenTxns)
		}
		s1 := dumpState(one.m, 0)
		if !equalState(s1, dumpState(two.m, 0)) || !equalState(s1, dumpState(twice.m, 0)) {
			t.Fatal("two barriers differ from one")
		}
		if one.m.Reset(0) != two.m.Reset(0) || !equalState(dumpState(one.m, 0), s1) {
			t.Fatal("Reset after a barrier changed the state")
		}
	})
}

func TestHasProducerIDRule(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		// Stock: a negated PID is "no producer" (M5): no entry, no transaction, LSO = HW.
		h.ok(Client, txnData(-7, 0, 0, 1))
		h.ok(Client, data(-7, 0, 9, 1))
		if h.m.ProducerCount(h.p) != 0 || h.m.LastStableOffset(h.p, 2) != 2 {
			t.Fatalf("stock rule tracked a negative PID")
		}
	})
	forEachImpl(t, Options{HasProducerID: NonNegativeOne}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(-7, 0, 0, 1))
		h.fails(kafkaerr.InvalidTxnState, Client, data(-7, 0, 1, 1))
		h.ok(Client, data(-1, 0, 0, 1)) // -1 is never a producer
		if h.m.ProducerCount(h.p) != 1 || h.m.LastStableOffset(h.p, 2) != 0 {
			t.Fatalf("count %d LSO %d", h.m.ProducerCount(h.p), h.m.LastStableOffset(h.p, 2))
		}
	})
}
