package psm

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Rules whose edges no other test of the package pins: each test below
// fails on a mutant of the rule that results/mutation.md lists (a bound
// moved by one, a comparison turned around).

// ProducerStateManager#hasLateTransaction: late when the producer of the
// oldest open transaction has a last timestamp above 0 and
// now - lastTimestamp > maxTransactionTimeoutMs + LATE_TRANSACTION_BUFFER_MS,
// strictly: at the bound itself the transaction is not late yet (Kafka's
// testHasLateTransaction steps over the bound; this test stands on it).
// LATE_TRANSACTION_BUFFER_MS is 5 minutes, written out here: a test that
// read the constant would move with it.
func TestHasLateTransactionBoundIsStrict(t *testing.T) {
	const timeout = 60_000
	forEachImpl(t, Options{MaxTransactionTimeoutMs: timeout}, func(t *testing.T, h *harness) {
		const start = int64(1_700_000_000_000)
		b := txnData(7, 0, 0, 1)
		b.MaxTimestamp = start
		h.ok(Client, b)
		bound := start + timeout + 5*60*1000
		if h.m.HasLateTransaction(h.p, bound) {
			t.Fatal("late at now - lastTimestamp = timeout + buffer")
		}
		if !h.m.HasLateTransaction(h.p, bound+1) {
			t.Fatal("not late one millisecond past timeout + buffer")
		}
	})
}

// A last timestamp of 0 (or below) is no timestamp for the late check: such
// a transaction is never late (the oldestTxnLastTimestamp > 0 term).
func TestHasLateTransactionIgnoresTimestampZero(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		b := txnData(7, 0, 0, 1)
		b.MaxTimestamp = 0
		h.ok(Client, b)
		if h.m.HasLateTransaction(h.p, int64(1)<<50) {
			t.Fatal("a transaction whose producer's last timestamp is 0 is late")
		}
	})
}

// producer.id.expiration.ms and transaction.max.timeout.ms take 1, their
// least valid value, as given: only values below 1 mean the default.
func TestOptionsKeepOneMillisecond(t *testing.T) {
	o := Options{ExpirationMs: 1, MaxTransactionTimeoutMs: 1}.withDefaults()
	if o.ExpirationMs != 1 || o.MaxTransactionTimeoutMs != 1 {
		t.Fatalf("withDefaults: ExpirationMs %d, MaxTransactionTimeoutMs %d, want 1 and 1", o.ExpirationMs, o.MaxTransactionTimeoutMs)
	}
	o = Options{}.withDefaults()
	if o.ExpirationMs != DefaultExpirationMs || o.MaxTransactionTimeoutMs != DefaultMaxTransactionTimeoutMs {
		t.Fatalf("withDefaults of zero: ExpirationMs %d, MaxTransactionTimeoutMs %d", o.ExpirationMs, o.MaxTransactionTimeoutMs)
	}
	forEachImpl(t, Options{ExpirationMs: 1}, func(t *testing.T, h *harness) {
		b := data(7, 0, 0, 1)
		b.MaxTimestamp = 5000
		h.ok(Client, b)
		if n := h.m.ExpireProducers(h.p, 5000); n != 0 {
			t.Fatalf("expired %d producers at their last timestamp", n)
		}
		if n := h.m.ExpireProducers(h.p, 5001); n != 1 {
			t.Fatalf("expired %d producers 1 ms after their last timestamp, want 1", n)
		}
	})
}

// Origin and TxnVersion print Kafka's names (AppendOrigin,
// TransactionVersion), and a value past the table prints as unknown rather
// than panicking.
func TestOriginAndTxnVersionNames(t *testing.T) {
	for o, want := range map[Origin]string{Replication: "REPLICATION", Coordinator: "COORDINATOR", Client: "CLIENT",
		Client + 1: "UNKNOWN"} {
		if got := o.String(); got != want {
			t.Errorf("Origin(%d).String() = %q, want %q", o, got, want)
		}
	}
	for v, want := range map[TxnVersion]string{TVUnknown: "TV_UNKNOWN", TV0: "TV0", TV1: "TV1", TV2: "TV2"} {
		if got := v.String(); got != want {
			t.Errorf("TxnVersion(%d).String() = %q, want %q", v, got, want)
		}
	}
}

// A MIRROR_PID_RESET control batch whose record was cleaned away (records
// count 0) is no barrier: like an empty COMMIT or ABORT batch
// (testAppendEmptyControlBatch) it changes no producer state.
func TestEmptyMirrorPidResetIsNoBarrier(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, data(7, 0, 0, 1))
		empty := barrierBatch()
		empty.RecordsCount = 0
		r := h.ok(Replication, empty)
		if r.outs[0].Barrier || r.c.Barriers != 0 {
			t.Fatalf("an empty MIRROR_PID_RESET batch counted as a barrier: %+v, %+v", r.outs[0], r.c)
		}
		if in := h.producer(7); in.Epoch != 0 || in.LastSeq() != 0 {
			t.Fatalf("producer 7 after an empty MIRROR_PID_RESET batch: %+v", in)
		}
	})
}

// VerificationStateEntry#maybeUpdateLowestSequenceAndEpoch: a verification
// at the entry's epoch only ever lowers its lowest sequence; a higher
// sequence at that epoch leaves it, so a batch above the lowest one stays
// out of order. (The port of testSequenceAndEpochInVerificationEntry
// verifies a lower sequence, a higher epoch and a lower epoch, never a
// higher sequence at the same epoch.)
func TestVerificationAtTheSameEpochNeverRaisesTheLowestSequence(t *testing.T) {
	forEachKPSM(t, Options{VerifyTransactions: true}, func(t *testing.T, k *kpsm) {
		g := k.verify(1, 3, 0, TV0, 0)
		if g2 := k.verify(1, 5, 0, TV0, 0); g2 != g {
			t.Fatalf("guard changed to %d from %d", g2, g)
		}
		k.probeLowest(g, 1, 0, 3)
	})
}

// ProducerStateManager#updateOldestTxnTimestamp: when the oldest open
// transaction's producer has no entry (a barrier removed every producer and
// kept the open transactions) the timestamp is -1, and the transaction is
// never late, however far the clock runs.
func TestHasLateTransactionOfAProducerWithNoEntry(t *testing.T) {
	forEachImpl(t, Options{MaxTransactionTimeoutMs: 60_000}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(7, 0, 0, 1))
		if kept := h.m.Reset(h.p); kept != 1 {
			t.Fatalf("barrier kept %d open transactions, want 1", kept)
		}
		if _, ok := h.m.Producer(h.p, 7); ok {
			t.Fatal("producer 7 has an entry after the barrier")
		}
		if h.m.HasLateTransaction(h.p, int64(1)<<50) {
			t.Fatal("a transaction whose producer has no entry is late")
		}
	})
}

// The Store refuses a PartitionID of MaxPartitions or more with a panic that
// names the bound; MaxPartitions-1 is the last it takes.
func TestStorePartitionIDBound(t *testing.T) {
	s := NewStore(Options{})
	if n := s.ProducerCount(MaxPartitions - 1); n != 0 {
		t.Fatalf("partition MaxPartitions-1 holds %d producers", n)
	}
	got := func() (r any) {
		defer func() { r = recover() }()
		s.ProducerCount(MaxPartitions)
		return nil
	}()
	if got != "psm: PartitionID beyond MaxPartitions" {
		t.Fatalf("PartitionID MaxPartitions: recovered %v, want the MaxPartitions panic", got)
	}
}

// A snapshot of more producers than LoadSnapshot prefetches ahead loads into
// a partition that has never held a producer, whose shards have no table
// yet (the prefetch skips an empty shard), and gives back every producer.
func TestStoreLoadsASnapshotIntoEmptyTables(t *testing.T) {
	from := NewStore(Options{})
	for pid := range int64(200) {
		b := data(pid, 0, 0, 1)
		b.BaseOffset = pid
		if _, _, err := from.Update(0, Client, &b); err != nil {
			t.Fatal(err)
		}
	}
	snap := from.AppendSnapshot(nil, 0)
	to := NewStore(Options{})
	if err := to.LoadSnapshot(5, snap, 0); err != nil {
		t.Fatal(err)
	}
	if n := to.ProducerCount(5); n != 200 {
		t.Fatalf("%d producers loaded, want 200", n)
	}
	for pid := range int64(200) {
		if _, ok := to.Producer(5, pid); !ok {
			t.Fatalf("producer %d not loaded", pid)
		}
	}
}

// Appender.Add: a refused batch leaves the append unchanged, also when its
// producer already has a pending entry in the append: the entries of the
// other producers stay, and Commit applies them.
func TestRefusedBatchOfAPendingProducerKeepsTheOthers(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(1, 0, 0, 1), txnData(2, 0, 0, 1)) // offsets 0 and 1
		a := h.m.Begin(h.p, Client)
		for i, b := range []Batch{txnData(1, 0, 1, 1), txnData(2, 0, 1, 1)} {
			b.BaseOffset = 2 + int64(i)
			if _, err := a.Add(&b); err != nil {
				t.Fatal(err)
			}
		}
		bad := txnData(1, 0, 5, 1) // producer 1's next sequence is 2
		bad.BaseOffset = 4
		if _, err := a.Add(&bad); err != kafkaerr.OutOfOrderSequenceNumber {
			t.Fatalf("sequence 5 after 1: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", err)
		}
		a.Commit()
		for _, pid := range []int64{1, 2} {
			if in := h.producer(pid); in.NumBatches != 2 || in.LastSeq() != 1 || in.TxnFirstOffset != pid-1 {
				t.Fatalf("producer %d after the refused batch: %+v", pid, in)
			}
		}
	})
}

// An append of three runs of more producers than the appender scans
// linearly, with a MIRROR_PID_RESET barrier after each of the first two
// (BarrierApply Exact): the entries before the last barrier are dropped,
// and every producer after it, fewer than before, gets its entry with both
// its batches.
func TestBarrierInsideAnAppendOfManyProducers(t *testing.T) {
	forEachImpl(t, Options{BarrierApply: Exact}, func(t *testing.T, h *harness) {
		var batches []Batch
		for pid := range int64(30) {
			batches = append(batches, txnData(pid, 0, 0, 1))
		}
		batches = append(batches, barrierBatch())
		for pid := int64(50); pid < 80; pid++ {
			batches = append(batches, txnData(pid, 0, 0, 1))
		}
		batches = append(batches, barrierBatch())
		for pid := int64(100); pid < 112; pid++ {
			batches = append(batches, txnData(pid, 0, 0, 1), txnData(pid, 0, 1, 1))
		}
		h.ok(Replication, batches...)
		if c := h.m.ProducerCount(h.p); c != 12 {
			t.Fatalf("%d producers after the barrier, want 12", c)
		}
		for pid := int64(100); pid < 112; pid++ {
			if in := h.producer(pid); in.NumBatches != 2 || in.LastSeq() != 1 {
				t.Fatalf("producer %d: %+v", pid, in)
			}
		}
	})
}

// One producer's many batches among more producers than the appender scans
// linearly, in one append: each batch joins the producer's entry (its
// window keeps the last five), and the producers after them get theirs.
func TestManyBatchesOfOneProducerAmongMany(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		var batches []Batch
		for pid := range int64(10) {
			batches = append(batches, txnData(pid, 0, 0, 1))
		}
		for seq := int32(1); seq <= 100; seq++ {
			batches = append(batches, txnData(0, 0, seq, 1))
		}
		batches = append(batches, txnData(10, 0, 0, 1))
		h.ok(Client, batches...)
		if in := h.producer(0); in.LastSeq() != 100 || in.NumBatches != NumBatchesToRetain {
			t.Fatalf("producer 0: %+v", in)
		}
		if c := h.m.ProducerCount(h.p); c != 11 {
			t.Fatalf("%d producers, want 11", c)
		}
	})
}

// One append of many new producers and then of producers already in the
// table: Commit inserts the new ones first, which grows the tables and
// moves the entries already there, and each later producer's batch still
// joins its own entry.
func TestCommitThatGrowsTheTableKeepsEveryProducer(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		var old []Batch
		for pid := range int64(64) {
			old = append(old, txnData(pid, 0, 0, 1))
		}
		h.ok(Client, old...)
		var batches []Batch
		for pid := int64(1000); pid < 3000; pid++ {
			batches = append(batches, txnData(pid, 0, 0, 1))
		}
		for pid := range int64(64) {
			batches = append(batches, txnData(pid, 0, 1, 1))
		}
		h.ok(Client, batches...)
		if c := h.m.ProducerCount(h.p); c != 2064 {
			t.Fatalf("%d producers, want 2064", c)
		}
		for pid := range int64(64) {
			if in := h.producer(pid); in.NumBatches != 2 || in.LastSeq() != 1 || in.TxnFirstOffset != pid {
				t.Fatalf("producer %d: %+v", pid, in)
			}
		}
	})
}

// ScanSnapshot given a size larger than the file: the CRC pass reads what
// is there, and an entry the count promises but the file does not hold is
// io.ErrUnexpectedEOF, not io.EOF, which a reader takes for a clean end.
func TestScanSnapshotOfAFileShorterThanItsSize(t *testing.T) {
	snap := appendSnapshotHeader(nil, 2) // two entries promised, one written
	e := ProducerInfo{ProducerID: 7, Epoch: 3, LastTimestamp: 1700000000000, CoordinatorEpoch: -1, TxnFirstOffset: -1}
	snap = finishSnapshot(appendSnapshotEntry(snap, &e), 0)
	seen := 0
	err := ScanSnapshot(bytes.NewReader(snap), int64(len(snap))+snapshotEntrySize, func(int, *ProducerInfo) { seen++ })
	if !errors.Is(err, io.ErrUnexpectedEOF) || seen != 1 {
		t.Fatalf("ScanSnapshot of a file one entry short of its size: %v after %d entries, want io.ErrUnexpectedEOF after 1", err, seen)
	}
}

// A fetch's chunk (BeginChunk, REPLICATION) of plain data batches: ten new
// producers, then by turns a new producer and one the table holds (whose
// batch waits as a single record), more than the appender's index held at
// first: the index grows with the records, and each producer ends with its
// batch.
func TestChunkOfNewAndKnownProducersInTurn(t *testing.T) {
	s := NewStore(Options{})
	off := int64(0)
	chunk := func(batches ...Batch) {
		a := s.BeginAppend(0, Replication)
		a.BeginChunk(Replication)
		for _, b := range batches {
			b.BaseOffset = off
			off++
			if _, err := a.AddChunk(&b); err != nil {
				t.Fatalf("AddChunk %+v: %v", b, err)
			}
		}
		a.Commit()
	}
	for pid := range int64(60) { // one batch each: no chunk, no index
		b := data(pid, 0, 0, 1)
		b.BaseOffset = off
		off++
		if _, _, err := s.Update(0, Replication, &b); err != nil {
			t.Fatal(err)
		}
	}
	var turns []Batch
	for pid := int64(1000); pid < 1010; pid++ {
		turns = append(turns, data(pid, 0, 0, 1))
	}
	for i := range int64(60) {
		turns = append(turns, data(2000+i, 0, 0, 1), data(i, 0, 1, 1))
	}
	chunk(turns...)
	if c := s.ProducerCount(0); c != 130 {
		t.Fatalf("%d producers, want 130", c)
	}
	for pid := range int64(60) {
		if in, ok := s.Producer(0, pid); !ok || in.NumBatches != 2 || in.LastSeq() != 1 {
			t.Fatalf("producer %d: %+v, %v", pid, in, ok)
		}
	}
}

// A fetch's chunk (BeginChunk, REPLICATION) of one plain data batch for each
// of 100 producers the table holds, the first chunk of the partition's
// appender: every batch waits as a single record, the appender's index is
// built past the linear range and grows with them, and Commit writes each
// into its producer's slot.
func TestChunkOfOneBatchPerKnownProducer(t *testing.T) {
	s := NewStore(Options{})
	a := s.BeginAppend(0, Replication)
	a.BeginChunk(Replication)
	for pid := range int64(100) {
		b := data(pid, 0, 0, 1)
		b.BaseOffset = pid
		if _, _, err := s.Update(0, Replication, &b); err != nil {
			t.Fatal(err)
		}
	}
	a = s.BeginAppend(0, Replication)
	a.BeginChunk(Replication)
	for pid := range int64(100) {
		b := data(pid, 0, 1, 1)
		b.BaseOffset = 100 + pid
		if _, err := a.AddChunk(&b); err != nil {
			t.Fatalf("AddChunk %+v: %v", b, err)
		}
	}
	a.Commit()
	for pid := range int64(100) {
		if in, ok := s.Producer(0, pid); !ok || in.NumBatches != 2 || in.LastSeq() != 1 || in.Batches[1].LastOffset != 100+pid {
			t.Fatalf("producer %d: %+v, %v", pid, in, ok)
		}
	}
}

// A fetch's chunk (BeginChunk, REPLICATION) over producers the table holds:
// a plain batch of each (a single record), a transactional batch of each
// (its pending entry, made from the record) and each one's COMMIT marker
// leave the Store as the Model's append of the same batches leaves it.
func TestChunkOfSingleRecordsThenTransactionsMatchesModel(t *testing.T) {
	const n = 40
	var batches []Batch
	for pid := range int64(n) {
		batches = append(batches, data(pid, 0, 1, 1))
	}
	for pid := range int64(n) {
		batches = append(batches, txnData(pid, 0, 2, 1))
	}
	for pid := range int64(n) {
		batches = append(batches, marker(pid, 0, false, 0))
	}
	chunkMatchesModel(t, n, batches)
}

// A fetch's chunk (BeginChunk, REPLICATION) that opens a transaction for
// each of 60 new producers, then commits each: the markers find the
// entries the transactional batches made, as in the Model. The PIDs are
// drawn at random (seeded), so that some share a first probe slot of the
// appender's index, as consecutive PIDs seldom do.
func TestChunkOfNewTransactionsThenMarkersMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pids []int64
	for range 60 {
		pids = append(pids, rng.Int64N(1<<40))
	}
	var batches []Batch
	for _, pid := range pids {
		batches = append(batches, txnData(pid, 0, 0, 1))
	}
	for _, pid := range pids {
		batches = append(batches, marker(pid, 0, false, 0))
	}
	chunkMatchesModel(t, 0, batches)
}

// chunkMatchesModel gives producers 0 to known-1 one plain batch each in
// the Model and the Store, then appends batches in one append of each: on
// the Store a chunk (BeginChunk, AddChunk), REPLICATION. Every answer and
// the state after it must be the same.
func chunkMatchesModel(t *testing.T, known int64, batches []Batch) {
	t.Helper()
	model, store := NewModel(Options{}), NewStore(Options{})
	ma := model.Begin(0, Replication)
	for pid := range known {
		b := data(pid, 0, 0, 1)
		b.BaseOffset = pid
		if _, _, err := store.Update(0, Replication, &b); err != nil {
			t.Fatal(err)
		}
		if _, err := ma.Add(&b); err != nil {
			t.Fatal(err)
		}
	}
	ma.Commit()
	ma = model.Begin(0, Replication)
	sa := store.BeginAppend(0, Replication)
	sa.BeginChunk(Replication)
	for i, b := range batches {
		b.BaseOffset = known + int64(i)
		mo, merr := ma.Add(&b)
		so, serr := sa.AddChunk(&b)
		if merr != nil || serr != nil || val(mo) != val(so) {
			t.Fatalf("batch %d %+v: model %+v %v, store %+v %v", i, b, val(mo), merr, val(so), serr)
		}
	}
	ma.Commit()
	sa.Commit()
	if m, s := dumpState(model, 0), dumpState(store, 0); !equalState(m, s) {
		t.Fatalf("after the chunk:\nmodel %+v\nstore %+v", m, s)
	}
}

// A fetch's chunk (BeginChunk, REPLICATION) of one plain batch for each of
// eight producers the table holds (single records, within the appender's
// linear range), then a second batch of the first, whose pending entry
// takes the appender past that range, then more producers: the index the
// appender builds there holds every record, as in the Model.
func TestChunkPassesTheLinearRangeOnASecondBatch(t *testing.T) {
	var batches []Batch
	for pid := range int64(8) {
		batches = append(batches, data(pid, 0, 1, 1))
	}
	batches = append(batches, data(0, 0, 2, 1))
	for pid := int64(100); pid < 120; pid++ {
		batches = append(batches, data(pid, 0, 0, 1))
	}
	for pid := range int64(8) {
		batches = append(batches, data(pid, 0, 3, 1))
	}
	chunkMatchesModel(t, 8, batches)
}

// Update of a partition the Store has not made yet, whose ID is the length
// of the Store's partition directory: the partition is made and takes the
// batch.
func TestUpdateOfTheNextNewPartition(t *testing.T) {
	s := NewStore(Options{})
	for p := range PartitionID(3) {
		b := data(7, 0, 0, 1)
		if _, _, err := s.Update(p, Client, &b); err != nil {
			t.Fatalf("Update of partition %d: %v", p, err)
		}
		if in, ok := s.Producer(p, 7); !ok || in.LastSeq() != 0 {
			t.Fatalf("partition %d: producer 7 %+v, %v", p, in, ok)
		}
	}
}

// ProducerAppendInfo#append: a plain data batch of a producer whose
// transaction is open is INVALID_TXN_STATE, also through Update's one-batch
// path (after a plain append of a producer the table holds) and when the
// transaction began at offset 0.
func TestUpdateRefusesPlainBatchInTransactionAtOffsetZero(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		h.ok(Client, txnData(7, 0, 0, 1)) // offset 0
		h.ok(Client, data(8, 0, 0, 1))
		h.ok(Client, data(8, 0, 1, 1))
		b := data(7, 0, 1, 1)
		b.BaseOffset = h.next
		if _, _, err := h.m.Update(h.p, Client, &b); err != kafkaerr.InvalidTxnState {
			t.Fatalf("plain batch in the transaction begun at offset 0: %v, want INVALID_TXN_STATE", err)
		}
	})
}

// An append of one transactional batch for each of eight producers, as many
// pending entries as the appender scans linearly, then a second batch of
// each: every second batch joins its producer's entry, and each producer
// has one open transaction.
func TestSecondBatchesAfterEightPendingEntries(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		var batches []Batch
		for pid := range int64(8) {
			batches = append(batches, txnData(pid, 0, 0, 1))
		}
		for pid := range int64(8) {
			batches = append(batches, txnData(pid, 0, 1, 1))
		}
		h.ok(Client, batches...)
		if open := h.m.OpenTxns(nil, h.p); len(open) != 8 {
			t.Fatalf("open transactions %+v, want one for each of 8 producers", open)
		}
		for pid := range int64(8) {
			if in := h.producer(pid); in.NumBatches != 2 || in.LastSeq() != 1 || in.TxnFirstOffset != pid {
				t.Fatalf("producer %d: %+v", pid, in)
			}
		}
	})
}

// Two appends on one partition, each of more producers than the appender
// scans linearly: the index the first built serves the second, and holds
// every producer of the second from the first one past the linear range
// on, so that each second batch, the first of them right after that
// producer, joins its producer's entry.
func TestSecondAppendOfManyProducersReusesTheIndex(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		var first, second []Batch
		for pid := range int64(30) {
			first = append(first, txnData(pid, 0, 0, 1))
		}
		h.ok(Client, first...)
		for pid := int64(100); pid < 109; pid++ { // nine: one past the linear range
			second = append(second, txnData(pid, 0, 0, 1))
		}
		for pid := int64(100); pid < 109; pid++ {
			second = append(second, txnData(pid, 0, 1, 1))
		}
		for pid := int64(109); pid < 112; pid++ {
			second = append(second, txnData(pid, 0, 0, 1), txnData(pid, 0, 1, 1))
		}
		h.ok(Client, second...)
		if open := h.m.OpenTxns(nil, h.p); len(open) != 42 {
			t.Fatalf("%d open transactions, want 42", len(open))
		}
		for pid := int64(100); pid < 112; pid++ {
			if in := h.producer(pid); in.NumBatches != 2 || in.LastSeq() != 1 {
				t.Fatalf("producer %d: %+v", pid, in)
			}
		}
	})
}

// ProducerAppendInfo#checkSequence's sequence-0 rule of transaction version 2
// (KAFKA-18202) holds only while the producer's committed entry caches no
// batch: a producer whose entry holds a plain batch continues its sequence
// in a TV2-verified transaction.
func TestTV2VerifiedProducerWithABatchContinuesItsSequence(t *testing.T) {
	forEachImpl(t, Options{Release: Kafka41, VerifyTransactions: true}, func(t *testing.T, h *harness) {
		h.ok(Client, data(1, 0, 0, 1))
		g := h.verify(1, 1, 0, TV2, 0)
		a := h.m.Begin(h.p, Client)
		a.SetGuard(g)
		b := txnData(1, 0, 1, 1)
		b.BaseOffset = h.next
		if _, err := a.Add(&b); err != nil {
			t.Fatalf("sequence 1 after 0 in a TV2-verified transaction: %v", err)
		}
		a.Commit()
	})
}

// ProducerStateManager#isProducerExpired subtracts in long arithmetic:
// currentTimeMs - lastTimestamp >= producerIdExpirationMs, wrapping as Java
// (and Go) do. A producer whose last timestamp is MaxInt64 has expired at
// now -10 (the difference wraps to a large positive value), and the Store's
// shard bounds, which let ExpireProducers skip a shard, must not hide it.
func TestExpireProducerOfTimestampMaxInt64AtNegativeNow(t *testing.T) {
	forEachImpl(t, Options{}, func(t *testing.T, h *harness) {
		b := data(7, 0, 0, 1)
		b.MaxTimestamp = math.MaxInt64
		h.ok(Client, b)
		if n := h.m.ExpireProducers(h.p, -10); n != 1 {
			t.Fatalf("expired %d producers, want 1", n)
		}
	})
}

// A rehash recomputes a shard's lastTS bounds from the producers with no
// open transaction only: ProducerStateManager#removeExpiredProducers skips
// a producer with an open transaction, so its timestamp must not narrow the
// bounds that prove nothing in the shard has expired. Here one producer of
// the shard is old and idle, one holds an open transaction at a later time,
// and new producers of the same shard make it rehash: the old one expires.
func TestRehashKeepsTheBoundsOfIdleProducers(t *testing.T) {
	const expiration = 1000
	sp := NewStore(Options{}).part(3) // the harness's partition: the same seed
	shardOf := func(pid int64) uint64 { return sp.hash(pid) >> shardShift }
	var pids []int64 // 2 + 7 producers of the shard of pid 1: the seventh insert rehashes
	for pid := int64(1); len(pids) < 9; pid++ {
		if shardOf(pid) == shardOf(1) {
			pids = append(pids, pid)
		}
	}
	forEachImpl(t, Options{ExpirationMs: expiration}, func(t *testing.T, h *harness) {
		old := data(pids[0], 0, 0, 1)
		old.MaxTimestamp = 1000
		h.ok(Client, old)
		open := txnData(pids[1], 0, 0, 1)
		open.MaxTimestamp = 5000
		h.ok(Client, open)
		for _, pid := range pids[2:] {
			b := data(pid, 0, 0, 1)
			b.MaxTimestamp = 5000
			h.ok(Client, b)
		}
		if n := h.m.ExpireProducers(h.p, 5000); n != 1 {
			t.Fatalf("expired %d producers at 5000, want 1 (last seen at 1000)", n)
		}
		if in, ok := h.m.Producer(h.p, pids[0]); ok {
			t.Fatalf("producer %d last seen at 1000 is still held: %+v", pids[0], in)
		}
	})
}
