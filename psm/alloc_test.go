package psm

import (
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// The hot paths of the Store do not allocate once its tables and scratch have
// grown: AllocsPerRun's warm-up run does the growing.

func assertNoAllocs(t *testing.T, name string, f func()) {
	t.Helper()
	if n := testing.AllocsPerRun(200, f); n != 0 {
		t.Errorf("%s: %v allocs per run, want 0", name, n)
	}
}

func TestStoreUpdateDoesNotAllocate(t *testing.T) {
	s := NewStore(Options{})
	const producers = 1000
	seq := make([]int32, producers)
	var off int64
	// One Batch reused by every Add: a pointer to a local would escape
	// through the Appender interface and allocate (see Appender.Add).
	b := new(Batch)
	update := func(origin Origin, pid int64) {
		a := s.Begin(0, origin)
		*b = data(pid, 0, seq[pid], 1)
		b.BaseOffset = off
		if _, err := a.Add(b); err != nil {
			t.Fatal(err)
		}
		a.Commit()
		seq[pid]++
		off++
	}
	for pid := range int64(producers) {
		update(Client, pid)
	}
	var pid int64
	assertNoAllocs(t, "client update", func() { update(Client, pid%producers); pid++ })
	held := s.Appender(0) // appendpath's way: the partition's Appender kept, begun per append
	assertNoAllocs(t, "held appender update", func() {
		q := pid % producers
		held.Begin(Client)
		*b = data(q, 0, seq[q], 1)
		b.BaseOffset = off
		if _, err := held.Add(b); err != nil {
			t.Fatal(err)
		}
		held.Commit()
		seq[q]++
		off++
		pid++
	})
	assertNoAllocs(t, "replication update", func() { update(Replication, pid%producers); pid++ })
	one := func(origin Origin, pid int64) {
		*b = data(pid, 0, seq[pid], 1)
		b.BaseOffset = off
		if _, c, err := s.Update(0, origin, b); err != nil || c == nil {
			t.Fatal(c, err)
		}
		seq[pid]++
		off++
	}
	assertNoAllocs(t, "one-call client update", func() { one(Client, pid%producers); pid++ })
	assertNoAllocs(t, "one-call replication update", func() { one(Replication, pid%producers); pid++ })
	assertNoAllocs(t, "one-call duplicate", func() {
		*b = data(5, 0, seq[5]-1, 1)
		if out, c, err := s.Update(0, Client, b); err != nil || !out.Duplicate.Found || c != nil {
			t.Fatalf("%+v %v %v", out, c, err)
		}
	})

	assertNoAllocs(t, "duplicate", func() {
		a := s.Begin(0, Client)
		*b = data(5, 0, seq[5]-1, 1)
		out, err := a.Add(b)
		if err != nil || !out.Duplicate.Found {
			t.Fatalf("%+v %v", out, err)
		}
		a.Abort()
	})
	assertNoAllocs(t, "rejected", func() {
		a := s.Begin(0, Client)
		*b = data(5, 0, seq[5]+3, 1)
		if _, err := a.Add(b); err != kafkaerr.OutOfOrderSequenceNumber {
			t.Fatal(err)
		}
		a.Abort()
	})
	// A replicated fetch of 40 batches from 20 producers uses the pending index.
	assertNoAllocs(t, "multi-batch append", func() {
		a := s.Begin(0, Replication)
		for i := range int64(40) {
			p := i % 20
			*b = data(p, 0, seq[p], 1)
			b.BaseOffset = off
			if _, err := a.Add(b); err != nil {
				t.Fatal(err)
			}
			seq[p]++
			off++
		}
		a.Commit()
	})
	// A fetch's chunk (BeginChunk): 64 batches of 4 producers, and of 64
	// (the pending index), through the held Appender as appendpath does.
	for _, producers := range []int64{4, 64} {
		assertNoAllocs(t, "chunk of "+strconv.FormatInt(producers, 10)+" producers", func() {
			held.BeginChunk(Replication)
			for i := range int64(64) {
				p := i % producers
				*b = data(p, 0, seq[p], 1)
				b.BaseOffset = off
				if _, err := held.Add(b); err != nil {
					t.Fatal(err)
				}
				seq[p]++
				off++
			}
			held.Commit()
		})
	}
	// A transaction: start, abort marker (index entry), HW moves past it.
	assertNoAllocs(t, "transaction", func() {
		a := s.Begin(0, Client)
		*b = txnData(7, 0, seq[7], 1)
		b.BaseOffset = off
		if _, err := a.Add(b); err != nil {
			t.Fatal(err)
		}
		a.Commit()
		seq[7]++
		off++
		a = s.Begin(0, Coordinator)
		*b = marker(7, 0, true, 0)
		b.BaseOffset = off
		if _, err := a.Add(b); err != nil {
			t.Fatal(err)
		}
		if c := a.Commit(); len(c.Aborted) != 1 {
			t.Fatalf("%+v", c)
		}
		off++
		s.OnHighWatermark(0, off)
	})
	assertNoAllocs(t, "barrier append", func() {
		a := s.Begin(1, Replication)
		*b = barrierBatch()
		if _, err := a.Add(b); err != nil {
			t.Fatal(err)
		}
		a.Commit()
	})
}

func TestStoreResetDoesNotAllocate(t *testing.T) {
	s := NewStore(Options{})
	a := s.Begin(0, Replication)
	for pid := range int64(5000) {
		a.Add(ref(data(pid, 0, 0, 1)))
	}
	a.Commit()
	assertNoAllocs(t, "reset", func() { s.Reset(0) })
	if s.ProducerCount(0) != 0 {
		t.Fatal("reset left producers")
	}
}

func TestStoreSnapshotDoesNotAllocate(t *testing.T) {
	s := NewStore(Options{})
	a := s.Begin(0, Replication)
	for pid := range int64(3000) {
		b := txnData(pid, 0, 0, 1)
		b.Transactional = pid%3 == 0
		b.BaseOffset = pid
		a.Add(&b)
	}
	a.Commit()
	buf := s.AppendSnapshot(nil, 0)
	snap := append([]byte(nil), buf...)
	assertNoAllocs(t, "snapshot write", func() { buf = s.AppendSnapshot(buf[:0], 0) })
	assertNoAllocs(t, "snapshot load", func() {
		if err := s.LoadSnapshot(0, snap, 0); err != nil {
			t.Fatal(err)
		}
	})
	assertNoAllocs(t, "corrupt snapshot", func() {
		if err := s.LoadSnapshot(0, snap[:len(snap)-1], 0); err == nil {
			t.Fatal("truncated snapshot accepted")
		}
	})
}

// TestResetIsConstantTime checks structurally that a barrier touches no slot:
// every shard keeps its keys, values and version, and yet no producer is left.
func TestResetIsConstantTime(t *testing.T) {
	s := NewStore(Options{})
	populate(s, 0, 20000)
	sp := s.part(0)
	type shape struct {
		used, version int
		first         slot
	}
	var before [numShards]shape
	for i := range sp.shards {
		sh := &sp.shards[i]
		before[i] = shape{sh.used, int(sh.version), sh.slots[0]}
	}
	s.Reset(0)
	for i := range sp.shards {
		sh := &sp.shards[i]
		if (shape{sh.used, int(sh.version), sh.slots[0]}) != before[i] {
			t.Fatalf("shard %d touched by Reset", i)
		}
	}
	if s.ProducerCount(0) != 0 {
		t.Fatal("producers left")
	}
	for range s.Producers(0) {
		t.Fatal("Producers yields a stale entry")
	}
	if _, ok := s.Producer(0, 123); ok {
		t.Fatal("stale entry found")
	}
	// The stale slots are reused: repopulating does not grow the tables.
	populate(s, 0, 20000)
	for i := range sp.shards {
		if sp.shards[i].used > before[i].used {
			t.Fatalf("shard %d grew from %d to %d used slots", i, before[i].used, sp.shards[i].used)
		}
	}
}
