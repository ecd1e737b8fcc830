package psm

import (
	"errors"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// Apache Kafka's ProducerStateManagerTest, one subtest of TestKafkaPSM per
// Kafka test method (testdata/kafka-producerstatemanagertest.txt lists them;
// TestKafkaPSMChecklist checks that each is ported here or in appendpath's
// kafka_psm_test.go, or listed in kafkaPSMNotApplicable). Each runs on the
// Model and on the Store.
//
// How Kafka's API maps onto ours:
//   - ProducerStateManager#prepareUpdate + ProducerAppendInfo#append* +
//     #update is one Appender (Begin, Add, Commit); toEntry is Pending.
//   - lastEntry(pid).firstSeq / firstDataOffset are the oldest cached
//     batch's, lastSeq / lastDataOffset the newest's (firstSeq, lastSeq,
//     firstOffset, lastOffset below).
//   - firstUndecidedOffset is the first of OpenTxns; firstUnstableOffset is
//     FirstUnstableOffset (an offset: we keep no LogOffsetMetadata).
//   - MockTime is the explicit nowMs of ExpireProducers, HasLateTransaction,
//     StartVerification and LoadSnapshot, and the batches' timestamps.
//   - Snapshot files are storage.SnapshotDir's (on a vfs.MemFS here); the
//     snapshot bytes are AppendSnapshot's. kpsm below composes the two the
//     way ProducerStateManager#takeSnapshot, #truncateAndReload and
//     #truncateFullyAndStartAt do; appendpath's rebuild composes them the
//     same way plus the log replay, and appendpath/kafka_psm_test.go runs the
//     methods that reach it through a Partition.
//   - "new ProducerStateManager(logDir)" is a fresh Manager of the same kind
//     over the same directory (kpsm.reopen).

// kafkaPSMTest is one ported method: its Kafka name, the options of the
// managers it runs on (Kafka's test builds its manager with transaction
// verification on; ours need VerifyTransactions only where a guard is
// handed out), and its body.
type kafkaPSMTest struct {
	name string
	opts Options
	// params are the variants of a @ParameterizedTest, by name; each
	// replaces opts.
	params map[string]Options
	fn     func(t *testing.T, k *kpsm)
}

func TestKafkaPSM(t *testing.T) {
	for _, kt := range kafkaPSMTests {
		t.Run(kt.name, func(t *testing.T) {
			if kt.params == nil {
				forEachKPSM(t, kt.opts, kt.fn)
				return
			}
			for _, name := range slices.Sorted(maps.Keys(kt.params)) {
				t.Run(name, func(t *testing.T) { forEachKPSM(t, kt.params[name], kt.fn) })
			}
		})
	}
}

// kpsm is one ProducerStateManager of Kafka's test: a harness (Manager,
// partition, map end offset next) and its snapshot directory.
type kpsm struct {
	*harness
	impl string
	opts Options
	fs   *vfs.MemFS
	dir  *storage.SnapshotDir
}

const kpsmDir = "/log"

func forEachKPSM(t *testing.T, opts Options, fn func(t *testing.T, k *kpsm)) {
	t.Helper()
	for _, impl := range []string{"model", "store"} {
		t.Run("impl="+impl, func(t *testing.T) {
			k := &kpsm{impl: impl, opts: opts, fs: vfs.NewMemFS()}
			k.harness = &harness{t: t, m: kpNewManager(impl, opts), p: 3}
			k.openDir()
			fn(t, k)
		})
	}
}

func kpNewManager(impl string, opts Options) manager {
	if impl == "store" {
		return NewStore(opts)
	}
	return NewModel(opts)
}

func (k *kpsm) openDir() {
	d, err := storage.OpenSnapshotDir(k.fs, kpsmDir)
	if err != nil {
		k.t.Fatal(err)
	}
	k.dir = d
}

// reopen is a new ProducerStateManager over the same log directory: a fresh
// Manager, the snapshot files listed again, map end offset 0.
func (k *kpsm) reopen() *kpsm {
	n := &kpsm{impl: k.impl, opts: k.opts, fs: k.fs}
	n.harness = &harness{t: k.t, m: kpNewManager(k.impl, k.opts), p: k.p}
	n.openDir()
	return n
}

// at sets the offset the next appended batch gets.
func (k *kpsm) at(offset int64) *kpsm { k.next = offset; return k }

// takeSnapshot writes the state as of the map end offset
// (ProducerStateManager#takeSnapshot).
func (k *kpsm) takeSnapshot() {
	k.t.Helper()
	if err := k.dir.Write(k.next, k.m.AppendSnapshot(nil, k.p)); err != nil {
		k.t.Fatal(err)
	}
}

// truncateAndReload is ProducerStateManager#truncateAndReload: the snapshots
// out of (logStart, logEnd] are deleted, the state cleared, and the newest
// snapshot left loaded (a corrupt one is deleted and the next older tried),
// producers expired at nowMs dropped. The map end offset becomes the loaded
// snapshot's offset, or logStart. (Kafka skips the reload when logEnd is
// already the map end offset; the state it would load is then the one it
// has, and appendpath's rebuild always reloads.)
func (k *kpsm) truncateAndReload(logStart, logEnd, nowMs int64) {
	k.t.Helper()
	if err := k.dir.RemoveAbove(logEnd); err != nil {
		k.t.Fatal(err)
	}
	if err := k.dir.RemoveBelow(logStart + 1); err != nil {
		k.t.Fatal(err)
	}
	k.m.Clear(k.p)
	o, err := k.dir.LoadNewest(logStart+1, logEnd, func(data []byte) error {
		return k.m.LoadSnapshot(k.p, data, nowMs)
	}, func(err error) bool { return errors.Is(err, ErrCorruptSnapshot) })
	if err != nil {
		k.t.Fatal(err)
	}
	k.next = logStart
	if o >= 0 {
		k.next = o
	}
}

// truncateFullyAndStartAt is ProducerStateManager#truncateFullyAndStartAt:
// every snapshot deleted, the state cleared, the map end offset set.
func (k *kpsm) truncateFullyAndStartAt(offset int64) {
	k.t.Helper()
	if err := k.dir.RemoveAbove(math.MinInt64); err != nil {
		k.t.Fatal(err)
	}
	k.m.Clear(k.p)
	k.next = offset
}

// files lists the snapshot offsets actually in the directory
// (currentSnapshotOffsets of Kafka's test).
func (k *kpsm) files() []int64 {
	k.t.Helper()
	names, err := k.fs.ReadDir(kpsmDir)
	if err != nil {
		k.t.Fatal(err)
	}
	var out []int64
	for _, n := range names {
		o, ok := storage.ParseFileName(n, storage.SnapshotSuffix)
		if !ok {
			k.t.Fatalf("file %q in the log directory", n)
		}
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

func (k *kpsm) wantFiles(want ...int64) {
	k.t.Helper()
	if got := k.files(); !slices.Equal(got, want) {
		k.t.Fatalf("snapshot files at %v, want %v", got, want)
	}
	if got := k.dir.Offsets(); !slices.Equal(got, want) {
		k.t.Fatalf("SnapshotDir lists %v, want %v", got, want)
	}
}

func (k *kpsm) snapFile(offset int64) string {
	return storage.FileName(kpsmDir, offset, storage.SnapshotSuffix)
}

// firstUndecided is ProducerStateManager#firstUndecidedOffset: the first
// offset of the earliest open transaction.
func (k *kpsm) firstUndecided() (int64, bool) {
	open := k.m.OpenTxns(nil, k.p)
	if len(open) == 0 {
		return 0, false
	}
	return open[0].FirstOffset, true
}

func (k *kpsm) wantUndecided(want int64, ok bool) {
	k.t.Helper()
	if got, gotOK := k.firstUndecided(); got != want || gotOK != ok {
		k.t.Fatalf("firstUndecidedOffset %d,%v want %d,%v", got, gotOK, want, ok)
	}
}

func (k *kpsm) wantUnstable(want int64, ok bool) {
	k.t.Helper()
	if got, gotOK := k.m.FirstUnstableOffset(k.p); got != want || gotOK != ok {
		k.t.Fatalf("firstUnstableOffset %d,%v want %d,%v", got, gotOK, want, ok)
	}
}

// probeLowest checks that pid's verification entry, reached with guard g,
// has lowest sequence want: a transactional batch of epoch one above it is
// refused, one at it accepted. The append is aborted, so nothing changes.
func (k *kpsm) probeLowest(g Guard, pid int64, epoch int16, want int32) {
	k.t.Helper()
	a := k.m.Begin(k.p, Client)
	defer a.Abort()
	a.SetGuard(g)
	b := txnData(pid, epoch, want+1, 1)
	b.BaseOffset = k.next
	if _, err := a.Add(&b); err != kafkaerr.OutOfOrderSequenceNumber {
		k.t.Fatalf("seq %d above the lowest verified %d: %v, want OUT_OF_ORDER_SEQUENCE_NUMBER", want+1, want, err)
	}
	b = txnData(pid, epoch, want, 1)
	b.BaseOffset = k.next
	if _, err := a.Add(&b); err != nil {
		k.t.Fatalf("seq %d, the lowest verified, with its guard: %v", want, err)
	}
}

func kpAt(b Batch, ts int64) Batch {
	b.MaxTimestamp, b.ControlTimestamp = ts, ts
	return b
}

// Kafka's lastEntry accessors on a copy of an entry.
func kpFirstSeq(in ProducerInfo) int32 {
	if in.NumBatches == 0 {
		return -1
	}
	return in.Batches[0].FirstSeq()
}

func kpFirstOffset(in ProducerInfo) int64 {
	if in.NumBatches == 0 {
		return -1
	}
	return in.Batches[0].FirstOffset()
}

func kpLastOffset(in ProducerInfo) int64 {
	if in.NumBatches == 0 {
		return -1
	}
	return in.Batches[in.NumBatches-1].LastOffset
}

// wantEntry compares the fields of Kafka's assertions on one entry.
func kpWantEntry(t *testing.T, in ProducerInfo, epoch int16, first, last int32, firstOff, lastOff int64) {
	t.Helper()
	if in.Epoch != epoch || kpFirstSeq(in) != first || in.LastSeq() != last || kpFirstOffset(in) != firstOff || kpLastOffset(in) != lastOff {
		t.Fatalf("entry epoch %d seq %d..%d offsets %d..%d, want epoch %d seq %d..%d offsets %d..%d (%+v)",
			in.Epoch, kpFirstSeq(in), in.LastSeq(), kpFirstOffset(in), kpLastOffset(in), epoch, first, last, firstOff, lastOff, in)
	}
}

const kpLateTimeoutMs = 5 * 60 * 1000 // the test's maxTransactionTimeoutMs

// kpLateGoneAfter is the body of the testHasLateTransactionUpdatedAfter*
// methods: a transaction at offset 100 is late, and no longer after
// truncate(now), described by what.
func kpLateGoneAfter(t *testing.T, k *kpsm, what string, truncate func(now int64)) {
	t.Helper()
	now := int64(1_700_000_000_000)
	k.at(100).ok(Client, kpAt(txnData(39, 2, 0, 1), now))
	now += kpLateTimeoutMs + LateTransactionBufferMs + 1
	if !k.m.HasLateTransaction(k.p, now) {
		t.Fatal("not late")
	}
	truncate(now)
	if k.m.HasLateTransaction(k.p, now) {
		t.Fatalf("late after %s", what)
	}
}

var kafkaPSMTests = []kafkaPSMTest{
	// Sequences within an epoch are consecutive, a new epoch starts at 0,
	// an older epoch is fenced. Kafka's ProducerAppendInfo refuses the
	// repeat of sequence 1 as out of order ("duplicates are checked
	// separately", by UnifiedLog#analyzeAndValidateProducerState before
	// ProducerAppendInfo runs); our CLIENT Appender holds that lookup too,
	// so the repeat is answered as a duplicate of the batch at offset 1 and
	// not applied.
	{name: "testBasicIdMapping", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Client, data(1, 0, 1, 1))
		if r := k.ok(Client, data(1, 0, 1, 1)); !r.outs[0].Duplicate.Found || r.outs[0].Duplicate.FirstOffset != 1 {
			t.Fatalf("repeat of seq 1: %+v, want the duplicate at offset 1", r.outs[0])
		}
		k.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 0, 5, 1))
		k.ok(Client, data(1, 1, 0, 1))
		k.fails(kafkaerr.InvalidProducerEpoch, Client, data(1, 0, 0, 1))
	}},
	// A marker of a producer with no state creates its entry at the
	// marker's epoch with no sequence: older epochs are fenced, and the
	// producer must start again at sequence 0.
	{name: "testAppendTxnMarkerWithNoProducerState", fn: func(t *testing.T, k *kpsm) {
		k.at(27).ok(Coordinator, marker(1, 2, false, 0))
		in := k.producer(1)
		if in.ProducerID != 1 || in.Epoch != 2 || in.LastSeq() != -1 {
			t.Fatalf("entry after the marker %+v", in)
		}
		k.fails(kafkaerr.InvalidProducerEpoch, Client, data(1, 0, 0, 1))
		k.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 2, 17, 1))
		k.ok(Client, data(1, 2, 0, 1))
		if in := k.producer(1); in.Epoch != 2 || in.LastSeq() != 0 {
			t.Fatalf("entry after seq 0 %+v", in)
		}
	}},
	// Sequence MaxInt32 is followed by 0.
	{name: "testProducerSequenceWrapAround", fn: func(t *testing.T, k *kpsm) {
		k.at(735).ok(Replication, data(1, 15, math.MaxInt32, 1))
		k.at(1235).ok(Client, data(1, 15, 0, 1))
		in := k.producer(1)
		if in.Epoch != 15 || kpFirstSeq(in) != math.MaxInt32 || in.LastSeq() != 0 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A batch whose sequences wrap inside it (MaxInt32-10 .. 9) is cached
	// with those bounds, and nothing is visible before the update.
	{name: "testProducerSequenceWithWrapAroundBatchRecord", fn: func(t *testing.T, k *kpsm) {
		a := k.m.Begin(k.p, Replication)
		b := data(1, 15, math.MaxInt32-10, 21)
		b.BaseOffset = 2000
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
		if _, ok := k.m.Producer(k.p, 1); ok {
			t.Fatal("entry visible before Commit")
		}
		a.Commit()
		kpWantEntry(t, k.producer(1), 15, math.MaxInt32-10, 9, 2000, 2020)
	}},
	// After MaxInt32 only 0 is in sequence.
	{name: "testProducerSequenceInvalidWrapAround", fn: func(t *testing.T, k *kpsm) {
		k.at(735).ok(Replication, data(1, 15, math.MaxInt32, 1))
		k.at(1235).fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 15, 1, 1))
	}},
	// REPLICATION takes a first batch at any sequence.
	{name: "testNoValidationOnFirstEntryWhenLoadingLog", fn: func(t *testing.T, k *kpsm) {
		k.at(735).ok(Replication, data(1, 5, 16, 1))
		kpWantEntry(t, k.producer(1), 5, 16, 16, 735, 735)
	}},
	// A marker at a higher epoch bumps the entry's epoch and clears its
	// cached batches; the new epoch starts at sequence 0.
	{name: "testControlRecordBumpsProducerEpoch", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Coordinator, marker(1, 1, true, 0))
		in := k.producer(1)
		if in.Epoch != 1 || in.TxnFirstOffset != -1 || kpFirstSeq(in) != -1 || in.LastSeq() != -1 {
			t.Fatalf("entry after the bumping marker %+v", in)
		}
		k.ok(Client, data(1, 1, 0, 1))
		if in := k.producer(1); kpFirstSeq(in) != 0 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// The first offset of a transaction is the first unstable offset.
	// Kafka also keeps its LogOffsetMetadata (segment and position); we keep
	// offsets only, so the port checks the offset.
	{name: "testTxnFirstOffsetMetadataCached", fn: func(t *testing.T, k *kpsm) {
		k.at(992342).ok(Client, txnData(1, 0, 0, 1))
		k.wantUnstable(992342, true)
	}},
	// A transaction is late when its producer's last timestamp is more
	// than the max timeout plus the buffer ago; the oldest open one decides.
	{name: "testHasLateTransaction", opts: Options{MaxTransactionTimeoutMs: kpLateTimeoutMs}, fn: func(t *testing.T, k *kpsm) {
		now := int64(1_700_000_000_000)
		late := int64(kpLateTimeoutMs + LateTransactionBufferMs)
		k.at(100).ok(Client, kpAt(txnData(39, 2, 0, 1), now))
		if k.m.HasLateTransaction(k.p, now) {
			t.Fatal("late at once")
		}
		now += 500
		k.at(150).ok(Client, kpAt(txnData(57, 9, 0, 1), now))
		if k.m.HasLateTransaction(k.p, now) {
			t.Fatal("late at once")
		}
		now += late - 500 + 1
		if !k.m.HasLateTransaction(k.p, now) {
			t.Fatal("the first transaction is not late")
		}
		now += 500
		if !k.m.HasLateTransaction(k.p, now) {
			t.Fatal("neither is late")
		}
		k.at(200).ok(Coordinator, kpAt(marker(39, 2, false, 0), now))
		if !k.m.HasLateTransaction(k.p, now) {
			t.Fatal("the second transaction is not late")
		}
		k.at(250).ok(Coordinator, kpAt(marker(57, 9, false, 0), now))
		if k.m.HasLateTransaction(k.p, now) {
			t.Fatal("late with no open transaction")
		}
	}},
	// The open transactions of a loaded snapshot are late as they were.
	{name: "testHasLateTransactionInitializedAfterReload", opts: Options{MaxTransactionTimeoutMs: kpLateTimeoutMs}, fn: func(t *testing.T, k *kpsm) {
		now := int64(1_700_000_000_000)
		late := int64(kpLateTimeoutMs + LateTransactionBufferMs)
		k.at(100).ok(Client, kpAt(txnData(39, 2, 0, 1), now))
		now += 500
		k.at(150).ok(Client, kpAt(txnData(57, 9, 0, 1), now))
		if k.m.HasLateTransaction(k.p, now) {
			t.Fatal("late at once")
		}
		k.takeSnapshot()
		now += late - 500 + 1
		if !k.m.HasLateTransaction(k.p, now) {
			t.Fatal("not late before the reload")
		}
		r := k.reopen()
		r.truncateAndReload(0, k.next, now)
		if !r.m.HasLateTransaction(r.p, now) {
			t.Fatal("not late after the reload")
		}
	}},
	// A truncation below a late transaction's start removes it.
	{name: "testHasLateTransactionUpdatedAfterPartialTruncation", opts: Options{MaxTransactionTimeoutMs: kpLateTimeoutMs}, fn: func(t *testing.T, k *kpsm) {
		kpLateGoneAfter(t, k, "the truncation below its start", func(now int64) { k.truncateAndReload(0, 80, now) })
	}},
	// A full truncation removes a late transaction.
	{name: "testHasLateTransactionUpdatedAfterFullTruncation", opts: Options{MaxTransactionTimeoutMs: kpLateTimeoutMs}, fn: func(t *testing.T, k *kpsm) {
		kpLateGoneAfter(t, k, "the full truncation", func(int64) { k.truncateFullyAndStartAt(150) })
	}},
	// An append changes nothing committed until it is committed.
	{name: "testPrepareUpdateDoesNotMutate", fn: func(t *testing.T, k *kpsm) {
		a := k.m.Begin(k.p, Client)
		b := data(1, 0, 0, 6)
		b.BaseOffset = 15
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
		if _, ok := k.m.Producer(k.p, 1); ok {
			t.Fatal("entry before Commit")
		}
		a.Commit()
		k.producer(1)
		a = k.m.Begin(k.p, Client)
		b = data(1, 0, 6, 5)
		b.BaseOffset = 26
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
		in := k.producer(1)
		if kpFirstSeq(in) != 0 || in.LastSeq() != 5 || kpLastOffset(in) != 20 {
			t.Fatalf("committed entry changed by an uncommitted append: %+v", in)
		}
		a.Commit()
		in = k.producer(1)
		if kpFirstSeq(in) != 0 || in.LastSeq() != 10 || kpLastOffset(in) != 30 {
			t.Fatalf("entry after Commit %+v", in)
		}
	}},
	// Within one append: transactional batches extend the pending entry and
	// open the transaction at the first one's offset; the marker closes it
	// (CompletedTxn first 16, last 40) without touching the cached batches.
	{name: "updateProducerTransactionState", fn: func(t *testing.T, k *kpsm) {
		k.at(9).ok(Client, data(1, 0, 0, 1))
		a := k.m.Begin(k.p, Client)
		add := func(b Batch, offset int64) *Outcome {
			t.Helper()
			b.BaseOffset = offset
			out, err := a.Add(&b)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		pending := func(first, last int32, firstOff, lastOff, txn int64) {
			t.Helper()
			in, ok := a.Pending(1)
			if !ok {
				t.Fatal("no pending entry")
			}
			kpWantEntry(t, in, 0, first, last, firstOff, lastOff)
			if in.TxnFirstOffset != txn {
				t.Fatalf("pending transaction at %d, want %d", in.TxnFirstOffset, txn)
			}
		}
		add(txnData(1, 0, 1, 5), 16)
		pending(1, 5, 16, 20, 16)
		add(txnData(1, 0, 6, 5), 26)
		pending(1, 10, 16, 30, 16)
		out := add(marker(1, 0, false, 15), 40)
		if !out.TxnCompleted || out.Completed != (CompletedTxn{ProducerID: 1, FirstOffset: 16, LastOffset: 40}) {
			t.Fatalf("marker outcome %+v", out)
		}
		pending(1, 10, 16, 30, -1)
		c := a.Commit()
		if len(c.Completed) != 1 || len(k.m.OpenTxns(nil, k.p)) != 0 {
			t.Fatalf("committed %+v, open %v", c, k.m.OpenTxns(nil, k.p))
		}
		// The one transaction this append started, now completed.
		if got := k.m.UnreplicatedTxns(nil, k.p); !slices.Equal(got, []TxnInfo{{ProducerID: 1, FirstOffset: 16, LastOffset: 40}}) {
			t.Fatalf("transactions %v", got)
		}
	}},
	// After a marker bumps the epoch, the bumped epoch and any higher one
	// must start at sequence 0.
	{name: "testOutOfSequenceAfterControlRecordEpochBump", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, txnData(1, 0, 0, 1))
		k.ok(Client, txnData(1, 0, 1, 1))
		k.ok(Coordinator, marker(1, 1, true, 0))
		k.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(1, 1, 2, 1))
		k.fails(kafkaerr.OutOfOrderSequenceNumber, Client, txnData(1, 2, 2, 1))
		k.ok(Client, txnData(1, 1, 0, 1))
		if in := k.producer(1); in.Epoch != 1 || in.LastSeq() != 0 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// Non-transactional data while the producer's transaction is open.
	{name: "testNonTransactionalAppendWithOngoingTransaction", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, txnData(1, 0, 0, 1))
		k.fails(kafkaerr.InvalidTxnState, Client, data(1, 0, 1, 1))
	}},
	// A reload to (1, 3] deletes the snapshots outside it.
	{name: "testTruncateAndReloadRemovesOutOfRangeSnapshots", fn: func(t *testing.T, k *kpsm) {
		for seq := range int32(5) {
			k.ok(Client, data(1, 0, seq, 1))
			k.takeSnapshot()
		}
		k.truncateAndReload(1, 3, 1000)
		if o := k.dir.Offsets(); o[0] != 2 || k.dir.Newest() != 3 {
			t.Fatalf("snapshots %v, want oldest 2 and newest 3", o)
		}
		k.wantFiles(2, 3)
	}},
	// A snapshot is one non-empty file, holding the producer.
	{name: "testTakeSnapshot", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Client, data(1, 0, 1, 1))
		k.takeSnapshot()
		k.wantFiles(2)
		src, err := k.fs.ReadFile(k.snapFile(2))
		if err != nil {
			t.Fatal(err)
		}
		if es, err := DecodeSnapshot(src); err != nil || len(es) != 1 || es[0].ProducerID != 1 || es[0].LastSeq() != 1 {
			t.Fatalf("snapshot %v, %v", es, err)
		}
	}},
	// The snapshot keeps only the newest cached batch; the open
	// transaction survives, and the producer goes on at the next sequence.
	{name: "testRecoverFromSnapshotUnfinishedTransaction", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, txnData(1, 0, 0, 1))
		k.ok(Client, txnData(1, 0, 1, 1))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, 3, 1000)
		in := r.producer(1)
		kpWantEntry(t, in, 0, 1, 1, 1, 1)
		if in.TxnFirstOffset != 0 {
			t.Fatalf("open transaction at %d, want 0", in.TxnFirstOffset)
		}
		r.ok(Client, txnData(1, 0, 2, 1))
	}},
	// Same, after an ABORT: no open transaction.
	{name: "testRecoverFromSnapshotFinishedTransaction", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, txnData(1, 0, 0, 1))
		k.ok(Client, txnData(1, 0, 1, 1))
		k.ok(Coordinator, marker(1, 0, true, 0))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, 3, 2000)
		in := r.producer(1)
		kpWantEntry(t, in, 0, 1, 1, 1, 1)
		if in.TxnFirstOffset != -1 {
			t.Fatalf("open transaction at %d after the ABORT", in.TxnFirstOffset)
		}
	}},
	// A producer known only from a marker keeps the marker's timestamp.
	{name: "testRecoverFromSnapshotEmptyTransaction", fn: func(t *testing.T, k *kpsm) {
		const ts = 1_700_000_000_000
		k.ok(Coordinator, kpAt(marker(1, 0, true, 0), ts))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, 1, ts)
		if in := r.producer(1); in.LastTimestamp != ts || in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A fencing ABORT (higher epoch) closes the transaction and clears the
	// cached batches; the entry stays, so the fencing epoch is kept.
	{name: "testProducerStateAfterFencingAbortMarker", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, txnData(1, 0, 0, 1))
		k.ok(Coordinator, marker(1, 1, true, 0))
		in := k.producer(1)
		if in.TxnFirstOffset != -1 || kpLastOffset(in) != -1 || kpFirstOffset(in) != -1 {
			t.Fatalf("entry %+v", in)
		}
		k.m.ExpireProducers(k.p, in.LastTimestamp)
		k.producer(1)
	}},
	// Kafka's name says expiry, but what empties the state is the reload
	// to log end 1: the only snapshot (at 2) is past it and deleted. The
	// producer is then unknown and sequence 2 is accepted.
	// testPidExpirationTimeout is the expiry proper.
	{name: "testRemoveExpiredPidsOnReload", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, kpAt(data(1, 0, 0, 1), 0))
		k.ok(Client, kpAt(data(1, 0, 1, 1), 1))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, 1, 70000)
		if n := r.m.ProducerCount(r.p); n != 0 {
			t.Fatalf("%d producers after the reload", n)
		}
		r.at(2).ok(Client, kpAt(data(1, 0, 2, 1), 70001))
		if n := r.m.ProducerCount(r.p); n != 1 || r.producer(1).LastSeq() != 2 || r.next != 3 {
			t.Fatalf("%d producers, entry %+v, map end %d", n, r.producer(1), r.next)
		}
	}},
	// A replica takes a batch of a producer it has no state for, and
	// creates the entry from it.
	{name: "testAcceptAppendWithoutProducerStateOnReplica", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, kpAt(data(1, 0, 0, 1), 0))
		k.ok(Client, kpAt(data(1, 0, 1, 1), 1))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, 1, 70000)
		if _, ok := r.m.Producer(r.p, 1); ok {
			t.Fatal("producer known after the reload")
		}
		r.at(2).ok(Replication, kpAt(data(1, 0, 2, 1), 70001))
		in := r.producer(1)
		if in.Epoch != 0 || kpFirstSeq(in) != 2 || in.LastSeq() != 2 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A sequence gap refused from a client is taken from replication.
	{name: "testAcceptAppendWithSequenceGapsOnReplica", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.fails(kafkaerr.OutOfOrderSequenceNumber, Client, data(1, 0, 3, 1))
		if in := k.producer(1); in.LastSeq() != 0 {
			t.Fatalf("entry %+v", in)
		}
		k.ok(Replication, data(1, 0, 3, 1))
		if in := k.producer(1); in.LastSeq() != 3 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// Deleting the snapshots below an offset.
	{name: "testDeleteSnapshotsBefore", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Client, data(1, 0, 1, 1))
		k.takeSnapshot()
		k.wantFiles(2)
		k.ok(Client, data(1, 0, 2, 1))
		k.takeSnapshot()
		k.wantFiles(2, 3)
		if err := k.dir.RemoveBelow(3); err != nil {
			t.Fatal(err)
		}
		k.wantFiles(3)
		if err := k.dir.RemoveBelow(4); err != nil {
			t.Fatal(err)
		}
		k.wantFiles()
	}},
	// A full truncation deletes every snapshot and forgets the producers.
	{name: "testTruncateFullyAndStartAt", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Client, data(1, 0, 1, 1))
		k.takeSnapshot()
		k.wantFiles(2)
		k.ok(Client, data(1, 0, 2, 1))
		k.takeSnapshot()
		k.wantFiles(2, 3)
		k.truncateFullyAndStartAt(0)
		k.wantFiles()
		if n := k.m.ProducerCount(k.p); n != 0 {
			t.Fatalf("%d producers after the full truncation", n)
		}
		k.ok(Client, data(1, 0, 0, 1))
		k.takeSnapshot()
		k.wantFiles(1)
	}},
	// truncateFullyAndReloadSnapshots: after a full truncation the
	// directory is listed again and finds a file put back into it.
	{name: "testReloadSnapshots", fn: func(t *testing.T, k *kpsm) {
		k.at(1).ok(Client, data(1, 0, 1, 1))
		k.ok(Client, data(1, 0, 2, 1))
		k.takeSnapshot()
		saved, err := k.fs.ReadFile(k.snapFile(3))
		if err != nil {
			t.Fatal(err)
		}
		k.ok(Client, data(1, 0, 3, 1))
		k.ok(Client, data(1, 0, 4, 1))
		k.takeSnapshot()
		k.wantFiles(3, 5)
		k.truncateAndReload(3, 5, 1000)
		k.wantFiles(5)
		if err := k.fs.WriteFile(k.snapFile(3), saved, true); err != nil {
			t.Fatal(err)
		}
		k.truncateFullyAndStartAt(0)
		k.openDir()
		if k.dir.Newest() != 3 {
			t.Fatalf("newest snapshot %d, want 3", k.dir.Newest())
		}
		k.wantFiles(3)
	}},
	// The first unstable offset follows the snapshot a truncation reloads.
	{name: "testFirstUnstableOffsetAfterTruncation", fn: func(t *testing.T, k *kpsm) {
		k.at(99).ok(Client, txnData(1, 0, 0, 1))
		k.wantUnstable(99, true)
		k.takeSnapshot()
		k.at(105).ok(Coordinator, marker(1, 0, false, 0))
		k.m.OnHighWatermark(k.p, 106)
		k.wantUnstable(0, false)
		k.takeSnapshot()
		k.ok(Client, data(1, 0, 1, 1))
		k.truncateAndReload(0, 106, 2000)
		k.wantUnstable(0, false)
		k.truncateAndReload(0, 100, 2000)
		k.wantUnstable(99, true)
	}},
	// A reload keeps every unexpired producer of the snapshot.
	{name: "testLoadFromSnapshotRetainsNonExpiredProducers", fn: func(t *testing.T, k *kpsm) {
		k.ok(Client, data(1, 0, 0, 1))
		k.ok(Client, data(2, 0, 0, 1))
		k.takeSnapshot()
		if n := k.m.ProducerCount(k.p); n != 2 {
			t.Fatalf("%d producers", n)
		}
		k.truncateAndReload(1, 2, 1000)
		if n := k.m.ProducerCount(k.p); n != 2 {
			t.Fatalf("%d producers after the reload", n)
		}
		if in := k.producer(1); in.LastSeq() != 0 || kpLastOffset(in) != 0 {
			t.Fatalf("producer 1 %+v", in)
		}
		if in := k.producer(2); in.LastSeq() != 0 || kpLastOffset(in) != 1 {
			t.Fatalf("producer 2 %+v", in)
		}
	}},
	// A producer idle past producer.id.expiration.ms is removed, and is
	// then new to any sequence.
	{name: "testPidExpirationTimeout", fn: func(t *testing.T, k *kpsm) {
		k.at(1).ok(Client, data(1, 5, 0, 1))
		k.m.ExpireProducers(k.p, 1000+DefaultExpirationMs+1)
		if n := k.m.ProducerCount(k.p); n != 0 {
			t.Fatalf("%d producers after expiry", n)
		}
		k.ok(Client, data(1, 5, 1, 1))
		if n := k.m.ProducerCount(k.p); n != 1 || k.producer(1).LastSeq() != 1 || k.next != 3 {
			t.Fatalf("%d producers, entry %+v, map end %d", n, k.producer(1), k.next)
		}
	}},
	// Undecided: the earliest open transaction. Unstable: also the completed
	// ones whose marker is not below the high watermark.
	{name: "testFirstUnstableOffset", fn: func(t *testing.T, k *kpsm) {
		k.wantUndecided(0, false)
		k.at(99).ok(Client, txnData(1, 5, 0, 1))
		k.wantUndecided(99, true)
		k.wantUnstable(99, true)
		k.at(105).ok(Client, txnData(2, 5, 0, 1))
		k.wantUndecided(99, true)
		k.wantUnstable(99, true)
		k.at(109).ok(Coordinator, marker(1, 5, false, 0))
		k.wantUndecided(105, true)
		k.wantUnstable(99, true)
		k.m.OnHighWatermark(k.p, 100)
		k.wantUnstable(99, true)
		k.m.OnHighWatermark(k.p, 110)
		k.wantUnstable(105, true)
		k.at(112).ok(Coordinator, marker(2, 5, true, 0))
		k.wantUndecided(0, false)
		k.wantUnstable(105, true)
		k.m.OnHighWatermark(k.p, 113)
		k.wantUnstable(0, false)
	}},
	// A producer with an open transaction never expires.
	{name: "testProducersWithOngoingTransactionsDontExpire", fn: func(t *testing.T, k *kpsm) {
		k.at(99).ok(Client, txnData(1, 5, 0, 1))
		k.wantUndecided(99, true)
		k.m.ExpireProducers(k.p, 1000+DefaultExpirationMs+1)
		k.producer(1)
		k.wantUndecided(99, true)
		k.m.ExpireProducers(k.p, 1000+DefaultExpirationMs+1)
		k.producer(1)
	}},
	// COORDINATOR data (the group coordinator's transactional offset
	// commits) has no sequence to check. Kafka's test picks the origin
	// through the __consumer_offsets partition; the origin is what decides.
	{name: "testSequenceNotValidatedForGroupMetadataTopic", fn: func(t *testing.T, k *kpsm) {
		k.at(99).ok(Coordinator, txnData(1, 0, -1, 1))
		k.ok(Coordinator, txnData(1, 0, -1, 1))
	}},
	// A marker of an older epoch is fenced.
	{name: "testOldEpochForControlRecord", fn: func(t *testing.T, k *kpsm) {
		k.wantUndecided(0, false)
		k.at(99).ok(Client, txnData(1, 5, 0, 1))
		k.fails(kafkaerr.InvalidProducerEpoch, Coordinator, marker(1, 3, false, 0))
	}},
	// Markers may keep or raise the coordinator epoch, not lower it.
	{name: "testCoordinatorFencing", fn: func(t *testing.T, k *kpsm) {
		k.at(99).ok(Client, txnData(1, 5, 0, 1))
		k.ok(Coordinator, marker(1, 5, false, 1))
		if in := k.producer(1); in.CoordinatorEpoch != 1 {
			t.Fatalf("coordinator epoch %d", in.CoordinatorEpoch)
		}
		k.ok(Coordinator, marker(1, 5, false, 1))
		k.ok(Coordinator, marker(1, 5, false, 2))
		k.fails(kafkaerr.TransactionCoordinatorFenced, Coordinator, marker(1, 5, false, 1))
	}},
	// The coordinator epoch survives a snapshot reload. Kafka's test
	// appends the fenced marker to the manager it snapshotted, not to the
	// reloaded one (whose reload to log end 2 deletes the snapshot at 101);
	// the port reloads the snapshot and asks the reloaded manager, which is
	// what the method's name says.
	{name: "testCoordinatorFencedAfterReload", fn: func(t *testing.T, k *kpsm) {
		k.at(99).ok(Client, txnData(1, 0, 0, 1))
		k.ok(Coordinator, marker(1, 0, false, 1))
		k.takeSnapshot()
		r := k.reopen()
		r.truncateAndReload(0, k.next, 2000)
		r.fails(kafkaerr.TransactionCoordinatorFenced, Coordinator, marker(1, 0, false, 0))
		k.fails(kafkaerr.TransactionCoordinatorFenced, Coordinator, marker(1, 0, false, 0))
	}},
	// An empty newest snapshot is deleted and the older one loaded.
	{name: "testLoadFromEmptySnapshotFile", fn: func(t *testing.T, k *kpsm) {
		kafkaLoadFromCorruptSnapshot(t, k, func(b []byte) []byte { return b[:0] })
	}},
	// Same for a snapshot cut in half.
	{name: "testLoadFromTruncatedSnapshotFile", fn: func(t *testing.T, k *kpsm) {
		kafkaLoadFromCorruptSnapshot(t, k, func(b []byte) []byte { return b[:len(b)/2] })
	}},
	// Same for 37 zero bytes written over its start.
	{name: "testLoadFromCorruptSnapshotFile", fn: func(t *testing.T, k *kpsm) {
		kafkaLoadFromCorruptSnapshot(t, k, func(b []byte) []byte {
			if len(b) < 37 {
				t.Fatalf("snapshot of %d bytes", len(b))
			}
			clear(b[:37])
			return b
		})
	}},
	// An empty control batch (its marker cleaned away by compaction) opens
	// no transaction; the producer's entry exists afterwards.
	{name: "testAppendEmptyControlBatch", fn: func(t *testing.T, k *kpsm) {
		b := Batch{ProducerID: 23423, BaseSequence: -1, Control: true, Transactional: true, RecordsCount: 0}
		k.at(15).ok(Client, b)
		if in := k.producer(23423); in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// removeStraySnapshots with one segment at 5: the snapshot at 2 is a
	// stray, the one at 42 (a clean shutdown's, above every segment base)
	// is kept.
	{name: "testRemoveStraySnapshotsKeepCleanShutdownSnapshot", fn: func(t *testing.T, k *kpsm) {
		kafkaStraySnapshots(t, k, []int64{5}, 5, 42)
	}},
	// removeStraySnapshots with one segment at 42: every other snapshot goes.
	{name: "testRemoveAllStraySnapshots", fn: func(t *testing.T, k *kpsm) {
		kafkaStraySnapshots(t, k, []int64{42}, 42)
	}},
	// A second verification of a producer reuses its entry and guard; a
	// transactional append clears the entry.
	{name: "testEntryForVerification", opts: Options{VerifyTransactions: true}, fn: func(t *testing.T, k *kpsm) {
		g := k.verify(1, 0, 0, TV0, 0)
		if g == 0 {
			t.Fatal("sentinel guard")
		}
		if g2 := k.verify(1, 0, 0, TV0, 0); g2 != g {
			t.Fatalf("second verification guard %d, want %d", g2, g)
		}
		a := k.m.Begin(k.p, Client)
		a.SetGuard(g)
		b := txnData(1, 0, 0, 1)
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
		a.Commit()
		k.next = 1
		// Cleared: once the transaction is closed, a verification makes a
		// new entry with a new guard, and the old guard verifies nothing.
		k.ok(Coordinator, marker(1, 0, false, 0))
		g3 := k.verify(1, 1, 0, TV0, 0)
		if g3 == 0 || g3 == g {
			t.Fatalf("guard %d after the entry was cleared (old %d)", g3, g)
		}
		a = k.m.Begin(k.p, Client)
		defer a.Abort()
		a.SetGuard(g)
		b = txnData(1, 0, 1, 1)
		b.BaseOffset = k.next
		if _, err := a.Add(&b); err != kafkaerr.InvalidTxnState {
			t.Fatalf("the cleared entry's guard: %v, want INVALID_TXN_STATE", err)
		}
	}},
	// The verification entry keeps the lowest sequence seen at its epoch;
	// a higher epoch replaces the sequence, a lower one is ignored; the
	// guard never changes.
	{name: "testSequenceAndEpochInVerificationEntry", opts: Options{VerifyTransactions: true}, fn: func(t *testing.T, k *kpsm) {
		g := k.verify(1, 1, 0, TV0, 0)
		k.probeLowest(g, 1, 0, 1)
		for _, step := range []struct {
			seq, wantSeq     int32
			epoch, wantEpoch int16
		}{{0, 0, 0, 0}, {2, 2, 1, 1}, {0, 2, 0, 1}} {
			if g2 := k.verify(1, step.seq, step.epoch, TV0, 0); g2 != g {
				t.Fatalf("guard changed to %d from %d", g2, g)
			}
			k.probeLowest(g, 1, step.wantEpoch, step.wantSeq)
		}
	}},
	// The verification entry's sequence bound applies whether verification
	// is on or (Kafka: dynamically) off, and a refused append leaves the
	// entry as it was.
	{name: "testThrowOutOfOrderSequenceWithVerificationSequenceCheck", params: map[string]Options{
		"dynamicallyDisable=false": {VerifyTransactions: true},
		"dynamicallyDisable=true":  {VerifyTransactions: false},
	}, fn: func(t *testing.T, k *kpsm) {
		g := k.verify(1, 0, 0, TV0, 0)
		a := k.m.Begin(k.p, Client)
		a.SetGuard(g)
		b := txnData(1, 0, 4, 1)
		if _, err := a.Add(&b); err != kafkaerr.OutOfOrderSequenceNumber {
			t.Fatalf("seq 4 above the verified 0: %v", err)
		}
		a.Abort()
		if g2 := k.verify(1, 0, 0, TV0, 0); g2 != g {
			t.Fatalf("entry replaced: guard %d, was %d", g2, g)
		}
		k.probeLowest(g, 1, 0, 0)
	}},
	// Verification entries expire after producer.id.expiration.ms from
	// their creation.
	{name: "testVerificationStateEntryExpiration", opts: Options{VerifyTransactions: true}, fn: func(t *testing.T, k *kpsm) {
		const t0 = 1_700_000_000_000
		g := k.verify(1, 0, 0, TV0, t0)
		k.m.ExpireProducers(k.p, t0+DefaultExpirationMs/2)
		k.probeLowest(g, 1, 0, 0)
		k.m.ExpireProducers(k.p, t0+DefaultExpirationMs+1)
		a := k.m.Begin(k.p, Client)
		defer a.Abort()
		a.SetGuard(g)
		b := txnData(1, 0, 0, 1)
		if _, err := a.Add(&b); err != kafkaerr.InvalidTxnState {
			t.Fatalf("expired entry's guard: %v, want INVALID_TXN_STATE", err)
		}
	}},
	// The LSO of a completed transaction is the first offset of the
	// earliest other open transaction, else the marker's offset + 1. Kafka
	// asks lastStableOffset(completedTxn) for COMMITs directly; here the
	// answer is read where it is used, the .txnindex entry of an ABORT.
	{name: "testLastStableOffsetCompletedTxn", fn: func(t *testing.T, k *kpsm) {
		const start1 = 992342
		const start2, start3 = start1 + 25, start1 + 57
		k.at(start1).ok(Client, txnData(1, 0, 0, 1))
		k.at(start2).ok(Client, txnData(2, 0, 0, 1))
		k.at(start3).ok(Client, txnData(3, 0, 0, 1))
		complete := func(pid, first, last, wantLSO int64) {
			t.Helper()
			r := k.at(last).ok(Coordinator, marker(pid, 0, true, 0))
			if want := []storage.AbortedTxn{abortedTxn(pid, first, last, wantLSO)}; !slices.Equal(r.c.Aborted, want) {
				t.Fatalf("aborted %v, want %v", r.c.Aborted, want)
			}
			k.m.OnHighWatermark(k.p, last+1)
		}
		last1 := int64(start3 + 15)
		complete(1, start1, last1, start2)
		k.wantUnstable(start2, true)
		last3 := last1 + 20
		complete(3, start3, last3, start2)
		k.wantUnstable(start2, true)
		last2 := last3 + 78
		complete(2, start2, last2, last2+1)
		k.wantUnstable(0, false)
	}},
	// In one append, markers of a producer with no open transaction
	// complete nothing; each data batch after a marker opens a new one.
	{name: "testSkipEmptyTransactions", fn: func(t *testing.T, k *kpsm) {
		m := func(abort bool) Batch { return marker(1, 0, abort, 27) }
		k.at(16).ok(Client, txnData(1, 0, 0, 5))
		if got := k.m.OpenTxns(nil, k.p); !slices.Equal(got, []TxnInfo{{ProducerID: 1, FirstOffset: 16, LastOffset: -1}}) {
			t.Fatalf("open %v", got)
		}
		k.m.OnHighWatermark(k.p, 21)
		k.wantUnstable(16, true)
		r := k.ok(Client, m(false), m(false), m(true), txnData(1, 0, 5, 4), m(true), m(true), txnData(1, 0, 9, 2))
		completes := []bool{true, false, false, false, true, false, false}
		for i, out := range r.outs {
			if out.TxnCompleted != completes[i] {
				t.Fatalf("batch %d at %d completed %v, want %v", i, r.at[i], out.TxnCompleted, completes[i])
			}
		}
		want := []CompletedTxn{{ProducerID: 1, FirstOffset: 16, LastOffset: 21}, {ProducerID: 1, FirstOffset: 24, LastOffset: 28, Aborted: true}}
		if !slices.Equal(r.c.Completed, want) {
			t.Fatalf("completed %v, want %v", r.c.Completed, want)
		}
		// The append started the transactions at 24 and 30.
		if got := k.m.OpenTxns(nil, k.p); !slices.Equal(got, []TxnInfo{{ProducerID: 1, FirstOffset: 30, LastOffset: -1}}) {
			t.Fatalf("open %v", got)
		}
		if got := k.m.UnreplicatedTxns(nil, k.p); len(got) != 2 || got[1].FirstOffset != 24 {
			t.Fatalf("unreplicated %v", got)
		}
		k.m.OnHighWatermark(k.p, 32)
		k.wantUnstable(30, true)
	}},
	// A snapshot's entries read back as written: one with a cached batch and
	// an open transaction, one with neither.
	{name: "testReadWriteSnapshot", fn: func(t *testing.T, k *kpsm) {
		e1 := ProducerInfo{ProducerID: 1, Epoch: 2, CoordinatorEpoch: 3, LastTimestamp: -1, TxnFirstOffset: 100, NumBatches: 1}
		e1.Batches[0] = BatchMetadata{LastSeq: 1, LastOffset: 2, OffsetDelta: 3, Timestamp: -1}
		e2 := ProducerInfo{ProducerID: 11, Epoch: 12, CoordinatorEpoch: 13, LastTimestamp: 123456, TxnFirstOffset: -1}
		src := appendSnapshotHeader(nil, 2)
		src = appendSnapshotEntry(src, &e1)
		src = appendSnapshotEntry(src, &e2)
		src = finishSnapshot(src, 0)
		if err := k.m.LoadSnapshot(k.p, src, 123456); err != nil {
			t.Fatal(err)
		}
		var got []ProducerInfo
		for in := range k.m.Producers(k.p) {
			got = append(got, in)
		}
		slices.SortFunc(got, func(a, b ProducerInfo) int { return int(a.ProducerID - b.ProducerID) })
		if !slices.Equal(got, []ProducerInfo{e1, e2}) {
			t.Fatalf("read %+v\nwant %+v", got, []ProducerInfo{e1, e2})
		}
		if out := k.m.AppendSnapshot(nil, k.p); !slices.Equal(out, src) {
			t.Fatalf("written again:\n%x\nwant\n%x", out, src)
		}
	}},
}

// kafkaLoadFromCorruptSnapshot is testLoadFromCorruptSnapshot: snapshots at
// 1 and 2, the one at 2 damaged by damage; a reload deletes it and loads
// the one at 1.
func kafkaLoadFromCorruptSnapshot(t *testing.T, k *kpsm, damage func([]byte) []byte) {
	t.Helper()
	k.ok(Client, data(1, 0, 0, 1))
	k.takeSnapshot()
	k.ok(Client, data(1, 0, 1, 1))
	k.takeSnapshot()
	if k.dir.Newest() != 2 {
		t.Fatalf("newest snapshot %d", k.dir.Newest())
	}
	src, err := k.fs.ReadFile(k.snapFile(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.fs.WriteFile(k.snapFile(2), damage(src), true); err != nil {
		t.Fatal(err)
	}
	r := k.reopen()
	r.truncateAndReload(0, 20, 1000)
	r.wantFiles(1)
	if in := r.producer(1); kpLastOffset(in) != 0 {
		t.Fatalf("loaded entry %+v, want the snapshot at 1's", in)
	}
}

// kafkaStraySnapshots creates empty snapshot files at 5, 2 and 42, removes
// the strays for segments at bases and wants the files at want left.
func kafkaStraySnapshots(t *testing.T, k *kpsm, bases []int64, want ...int64) {
	t.Helper()
	for _, o := range []int64{5, 2, 42} {
		if err := k.fs.WriteFile(k.snapFile(o), nil, true); err != nil {
			t.Fatal(err)
		}
	}
	k.openDir()
	if err := k.dir.RemoveStray(bases); err != nil {
		t.Fatal(err)
	}
	k.wantFiles(want...)
	if o := k.dir.Offsets(); o[0] != want[0] || k.dir.Newest() != want[len(want)-1] {
		t.Fatalf("oldest and newest snapshot %v, want %d and %d", o, want[0], want[len(want)-1])
	}
}
