package appendpath

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// The methods of Kafka's ProducerStateManagerTest whose rule a Partition
// reaches (AppendClient, AppendCoordinator, AppendReplica, Truncate, Close
// and Open, that is restart), one subtest of TestKafkaPSMAppendPath each,
// named after the Kafka method. psm/kafka_psm_test.go ports all of them on
// the Model and the Store; psm's TestKafkaPSMChecklist reads the names of
// both tables. Here the snapshots are the ones the partition takes itself
// (on roll, on rebuild, on Close), and a reload replays the log after the
// snapshot, as LogLoader does after ProducerStateManager#truncateAndReload.
var kafkaPSMAppendPathTests = []struct {
	name string
	fn   func(t *testing.T)
}{
	// Sequences are consecutive; a repeat is a duplicate with the original
	// offsets; a new epoch starts at 0; an older epoch is fenced.
	{"testBasicIdMapping", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1}, nil)
		if r := kpClient(t, p, bspec{PID: 1, Seq: 1}, nil); !r.Duplicate || r.FirstOffset != 1 {
			t.Fatalf("repeat of seq 1: %+v, want the duplicate at offset 1", r)
		}
		kpClient(t, p, bspec{PID: 1, Seq: 5}, kafkaerr.OutOfOrderSequenceNumber)
		kpClient(t, p, bspec{PID: 1, Epoch: 1}, nil)
		kpClient(t, p, bspec{PID: 1}, kafkaerr.InvalidProducerEpoch)
	}},
	// A marker of an unknown producer creates its entry at the marker's
	// epoch; older epochs are fenced, the producer restarts at sequence 0.
	{"testAppendTxnMarkerWithNoProducerState", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpCoordinator(t, p, mkMarker(1, 2, 0, false), nil)
		if in := kpProducer(t, p, 1); in.Epoch != 2 || in.LastSeq() != -1 {
			t.Fatalf("entry %+v", in)
		}
		kpClient(t, p, bspec{PID: 1}, kafkaerr.InvalidProducerEpoch)
		kpClient(t, p, bspec{PID: 1, Epoch: 2, Seq: 17}, kafkaerr.OutOfOrderSequenceNumber)
		kpClient(t, p, bspec{PID: 1, Epoch: 2}, nil)
	}},
	// A follower's batch at sequence MaxInt32, then the leader's at 0.
	{"testProducerSequenceWrapAround", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Epoch: 15, Seq: math.MaxInt32, Base: 735}, nil)
		kpClient(t, p, bspec{PID: 1, Epoch: 15}, nil)
		if in := kpProducer(t, p, 1); in.Batches[0].FirstSeq() != math.MaxInt32 || in.LastSeq() != 0 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// After MaxInt32, only 0 is in sequence.
	{"testProducerSequenceInvalidWrapAround", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Epoch: 15, Seq: math.MaxInt32, Base: 735}, nil)
		kpClient(t, p, bspec{PID: 1, Epoch: 15, Seq: 1}, kafkaerr.OutOfOrderSequenceNumber)
	}},
	// Loading a log (a restart with no snapshot left) replays its first
	// batch of a producer at any sequence.
	{"testNoValidationOnFirstEntryWhenLoadingLog", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs})
		kpReplica(t, p, bspec{PID: 1, Epoch: 5, Seq: 16, Base: 735}, nil)
		p = kpRestart(t, p, Config{Dir: "/l", FS: fs}, true)
		if r := p.Recovery(); r.Snapshot != -1 || r.Replayed != 1 {
			t.Fatalf("recovery %+v, want one batch replayed from no snapshot", r)
		}
		in := kpProducer(t, p, 1)
		if in.Epoch != 5 || in.Batches[0].FirstSeq() != 16 || in.LastSeq() != 16 || in.Batches[0].LastOffset != 735 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A marker at a higher epoch bumps the epoch and clears the cached
	// batches; the new epoch starts at 0.
	{"testControlRecordBumpsProducerEpoch", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1}, nil)
		kpCoordinator(t, p, mkMarker(1, 1, 0, true), nil)
		if in := kpProducer(t, p, 1); in.Epoch != 1 || in.NumBatches != 0 || in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
		kpClient(t, p, bspec{PID: 1, Epoch: 1}, nil)
	}},
	// After the bumping marker, the bumped epoch and higher ones start at 0.
	{"testOutOfSequenceAfterControlRecordEpochBump", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 1, 0, true), nil)
		kpClient(t, p, bspec{PID: 1, Epoch: 1, Seq: 2, Txn: true}, kafkaerr.OutOfOrderSequenceNumber)
		kpClient(t, p, bspec{PID: 1, Epoch: 2, Seq: 2, Txn: true}, kafkaerr.OutOfOrderSequenceNumber)
		kpClient(t, p, bspec{PID: 1, Epoch: 1, Txn: true}, nil)
	}},
	// Non-transactional data inside an open transaction.
	{"testNonTransactionalAppendWithOngoingTransaction", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1}, kafkaerr.InvalidTxnState)
	}},
	// A truncation deletes the snapshots past the new log end and, with the
	// log start at 1, the one at it; the rebuild loads the newest left.
	{"testTruncateAndReloadRemovesOutOfRangeSnapshots", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1, RetainSegments: 4})
		for seq := range int32(5) {
			kpClient(t, p, bspec{PID: 1, Seq: seq}, nil)
		}
		if p.LogStartOffset() != 1 || !slices.Equal(p.snaps.Offsets(), []int64{1, 2, 3, 4}) {
			t.Fatalf("log start %d, snapshots %v", p.LogStartOffset(), p.snaps.Offsets())
		}
		if err := p.Truncate(3); err != nil {
			t.Fatal(err)
		}
		if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{2, 3}) {
			t.Fatalf("snapshot files %v, want [2 3]", got)
		}
		kpClient(t, p, bspec{PID: 1, Seq: 3}, nil)
	}},
	// Close writes one non-empty snapshot, at the log end.
	{"testTakeSnapshot", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs})
		kpClient(t, p, bspec{PID: 1}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1}, nil)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{2}) {
			t.Fatalf("snapshot files %v", got)
		}
		if n := fs.Size(storage.FileName("/l", 2, storage.SnapshotSuffix)); n <= 0 {
			t.Fatalf("snapshot of %d bytes", n)
		}
	}},
	// A restart loads the snapshot: its entry holds the newest batch only,
	// with the open transaction, and the producer goes on.
	{"testRecoverFromSnapshotUnfinishedTransaction", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1, Txn: true}, nil)
		p = kpRestart(t, p, cfg, false)
		if r := p.Recovery(); r.Snapshot != 2 || r.Replayed != 0 {
			t.Fatalf("recovery %+v", r)
		}
		in := kpProducer(t, p, 1)
		if in.NumBatches != 1 || in.Batches[0].FirstOffset() != 1 || in.LastSeq() != 1 || in.TxnFirstOffset != 0 {
			t.Fatalf("entry %+v", in)
		}
		kpClient(t, p, bspec{PID: 1, Seq: 2, Txn: true}, nil)
	}},
	// Same after an ABORT: no open transaction.
	{"testRecoverFromSnapshotFinishedTransaction", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 0, 0, true), nil)
		p = kpRestart(t, p, cfg, false)
		in := kpProducer(t, p, 1)
		if in.NumBatches != 1 || in.Batches[0].FirstOffset() != 1 || in.LastSeq() != 1 || in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A producer known only from its marker keeps the marker's timestamp.
	{"testRecoverFromSnapshotEmptyTransaction", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpCoordinator(t, p, mkMarker(1, 0, 0, true), nil)
		p = kpRestart(t, p, cfg, false)
		if in := kpProducer(t, p, 1); in.LastTimestamp != 1700000000500 || in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A restart after producer.id.expiration.ms drops the idle producer
	// from the loaded snapshot: it is new again, to any sequence.
	{"testRemoveExpiredPidsOnReload", func(t *testing.T) {
		p := kpRestartExpired(t, bspec{PID: 1}, bspec{PID: 1, Seq: 1})
		if n := p.ProducerCount(); n != 0 {
			t.Fatalf("%d producers after the reload", n)
		}
		kpClient(t, p, bspec{PID: 1, Seq: 7}, nil)
		if n := p.ProducerCount(); n != 1 {
			t.Fatalf("%d producers", n)
		}
	}},
	// A follower takes a batch of a producer it has no state for.
	{"testAcceptAppendWithoutProducerStateOnReplica", func(t *testing.T) {
		p := kpRestartExpired(t, bspec{PID: 1}, bspec{PID: 1, Seq: 1})
		if _, ok := p.Producer(1); ok {
			t.Fatal("producer known after the reload")
		}
		kpReplica(t, p, bspec{PID: 1, Seq: 2, Base: 2}, nil)
		if in := kpProducer(t, p, 1); in.Batches[0].FirstSeq() != 2 || in.LastSeq() != 2 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// A gap refused from a client is taken from a leader by a follower.
	{"testAcceptAppendWithSequenceGapsOnReplica", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1}, nil)
		kpClient(t, p, bspec{PID: 1, Seq: 3}, kafkaerr.OutOfOrderSequenceNumber)
		kpReplica(t, p, bspec{PID: 1, Seq: 3, Base: 1}, nil)
		if in := kpProducer(t, p, 1); in.LastSeq() != 3 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// Deleting segments deletes the snapshots below the new log start.
	{"testDeleteSnapshotsBefore", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1, RetainSegments: 2})
		for seq := range int32(3) {
			kpClient(t, p, bspec{PID: 1, Seq: seq}, nil)
		}
		if got := kpSnapshotFiles(t, fs); p.LogStartOffset() != 1 || !slices.Equal(got, []int64{1, 2}) {
			t.Fatalf("log start %d, snapshot files %v", p.LogStartOffset(), got)
		}
		kpClient(t, p, bspec{PID: 1, Seq: 3}, nil)
		if got := kpSnapshotFiles(t, fs); p.LogStartOffset() != 2 || !slices.Equal(got, []int64{2, 3}) {
			t.Fatalf("log start %d, snapshot files %v", p.LogStartOffset(), got)
		}
	}},
	// A truncation to the log start leaves no producer and no snapshot;
	// the next one is at the next map end offset.
	{"testTruncateFullyAndStartAt", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1})
		for seq := range int32(3) {
			kpClient(t, p, bspec{PID: 1, Seq: seq}, nil)
		}
		if err := p.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if got := kpSnapshotFiles(t, fs); p.ProducerCount() != 0 || len(got) != 0 {
			t.Fatalf("%d producers, snapshot files %v", p.ProducerCount(), got)
		}
		kpClient(t, p, bspec{PID: 1}, nil)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{1}) {
			t.Fatalf("snapshot files %v", got)
		}
	}},
	// The LSO follows the snapshot a truncation reloads and the replay.
	{"testFirstUnstableOffsetAfterTruncation", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1})
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		if lso := p.LastStableOffset(); lso != 0 {
			t.Fatalf("LSO %d with the transaction at 0 open", lso)
		}
		kpCoordinator(t, p, mkMarker(1, 0, 0, false), nil)
		kpClient(t, p, bspec{PID: 1, Seq: 1}, nil)
		if err := p.Truncate(2); err != nil {
			t.Fatal(err)
		}
		if lso := p.LastStableOffset(); lso != 2 {
			t.Fatalf("LSO %d after truncating to 2, want 2", lso)
		}
		if err := p.Truncate(1); err != nil {
			t.Fatal(err)
		}
		if lso := p.LastStableOffset(); lso != 0 {
			t.Fatalf("LSO %d after truncating the marker away, want 0", lso)
		}
	}},
	// A rebuild at an unchanged log end writes no snapshot.
	{"testSkipSnapshotIfOffsetUnchanged", func(t *testing.T) {
		fs := &kpCountingFS{MemFS: vfs.NewMemFS()}
		p := mustOpen(t, Config{Dir: "/l", FS: fs})
		kpClient(t, p, bspec{PID: 1}, nil)
		if err := p.Rebuild(); err != nil {
			t.Fatal(err)
		}
		if fs.snapshots != 1 {
			t.Fatalf("%d snapshot writes after the first rebuild, want 1", fs.snapshots)
		}
		if err := p.Rebuild(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got := kpSnapshotFiles(t, fs.MemFS); fs.snapshots != 1 || !slices.Equal(got, []int64{1}) {
			t.Fatalf("%d snapshot writes, files %v; want 1 write, [1]", fs.snapshots, got)
		}
	}},
	// A marker of an older producer epoch is fenced.
	{"testOldEpochForControlRecord", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1, Epoch: 5, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 3, 0, false), kafkaerr.InvalidProducerEpoch)
	}},
	// COORDINATOR data has no sequence to check.
	{"testSequenceNotValidatedForGroupMetadataTopic", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpCoordinator(t, p, mkBatch(t, bspec{PID: 1, Seq: -1, Txn: true}), nil)
		kpCoordinator(t, p, mkBatch(t, bspec{PID: 1, Seq: -1, Txn: true}), nil)
	}},
	// Markers may keep or raise the coordinator epoch, not lower it.
	{"testCoordinatorFencing", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpClient(t, p, bspec{PID: 1, Epoch: 5, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 5, 1, false), nil)
		kpCoordinator(t, p, mkMarker(1, 5, 1, false), nil)
		kpCoordinator(t, p, mkMarker(1, 5, 2, false), nil)
		kpCoordinator(t, p, mkMarker(1, 5, 1, false), kafkaerr.TransactionCoordinatorFenced)
	}},
	// The coordinator epoch survives a restart.
	{"testCoordinatorFencedAfterReload", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 0, 1, false), nil)
		p = kpRestart(t, p, cfg, false)
		kpCoordinator(t, p, mkMarker(1, 0, 0, false), kafkaerr.TransactionCoordinatorFenced)
	}},
	// A restart whose newest snapshot is empty, cut or overwritten deletes
	// it, loads the older one and replays the rest.
	{"testLoadFromEmptySnapshotFile", func(t *testing.T) {
		kpLoadFromCorruptSnapshot(t, func(b []byte) []byte { return b[:0] })
	}},
	{"testLoadFromTruncatedSnapshotFile", func(t *testing.T) {
		kpLoadFromCorruptSnapshot(t, func(b []byte) []byte { return b[:len(b)/2] })
	}},
	{"testLoadFromCorruptSnapshotFile", func(t *testing.T) {
		kpLoadFromCorruptSnapshot(t, func(b []byte) []byte { clear(b[:min(37, len(b))]); return b })
	}},
	// A restart keeps the clean shutdown's snapshot (at the log end, above
	// every segment base) and removes a stray one below it.
	{"testRemoveStraySnapshotsKeepCleanShutdownSnapshot", func(t *testing.T) {
		fs, cfg := kpTwoSegments(t)
		kpWriteStray(t, fs, 2)
		p := mustOpen(t, cfg)
		defer p.Close()
		if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{5, 10}) {
			t.Fatalf("snapshot files %v, want [5 10]", got)
		}
		if r := p.Recovery(); r.Snapshot != 10 {
			t.Fatalf("loaded snapshot %d, want the clean shutdown's at 10", r.Snapshot)
		}
	}},
	// Every stray snapshot below the newest segment base goes.
	{"testRemoveAllStraySnapshots", func(t *testing.T) {
		fs, cfg := kpTwoSegments(t)
		kpWriteStray(t, fs, 2)
		kpWriteStray(t, fs, 3)
		p := mustOpen(t, cfg)
		defer p.Close()
		if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{5, 10}) {
			t.Fatalf("snapshot files %v, want [5 10]", got)
		}
	}},
	// A batch whose sequences wrap inside it (MaxInt32-10 .. 9), from a
	// leader.
	{"testProducerSequenceWithWrapAroundBatchRecord", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Epoch: 15, Seq: math.MaxInt32 - 10, Records: 21, Base: 2000}, nil)
		in := kpProducer(t, p, 1)
		if in.Batches[0].FirstSeq() != math.MaxInt32-10 || in.LastSeq() != 9 ||
			in.Batches[0].FirstOffset() != 2000 || in.Batches[0].LastOffset != 2020 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// The first offset of the open transaction bounds the LSO.
	{"testTxnFirstOffsetMetadataCached", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Txn: true, Base: 992342}, nil)
		if lso := p.LastStableOffset(); lso != 992342 {
			t.Fatalf("LSO %d, want the transaction's first offset 992342", lso)
		}
	}},
	// The oldest open transaction decides, on the partition's clock.
	{"testHasLateTransaction", func(t *testing.T) {
		now := time.UnixMilli(1700000000000)
		p := mustOpen(t, Config{Now: func() time.Time { return now }})
		late := time.Duration(psm.DefaultMaxTransactionTimeoutMs+psm.LateTransactionBufferMs) * time.Millisecond
		kpClient(t, p, bspec{PID: 39, Epoch: 2, Txn: true}, nil)
		kpClient(t, p, bspec{PID: 57, Epoch: 9, Txn: true, TS: 1700000000500}, nil)
		if p.HasLateTransaction() {
			t.Fatal("late at once")
		}
		now = now.Add(late + time.Millisecond)
		if !p.HasLateTransaction() {
			t.Fatal("the first transaction is not late")
		}
		kpCoordinator(t, p, mkMarker(39, 2, 0, false), nil)
		if p.HasLateTransaction() {
			t.Fatal("late with only the second transaction open, 499 ms short of its bound")
		}
		now = now.Add(500 * time.Millisecond)
		if !p.HasLateTransaction() {
			t.Fatal("the second transaction is not late")
		}
		kpCoordinator(t, p, mkMarker(57, 9, 0, false), nil)
		if p.HasLateTransaction() {
			t.Fatal("late with no open transaction")
		}
	}},
	// A rejected chunk changes nothing: the batch before the bad one is
	// not applied either.
	{"testPrepareUpdateDoesNotMutate", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Records: 6, Base: 15}, nil)
		before := p.Snapshot()
		good := mkBatch(t, bspec{PID: 1, Seq: 6, Records: 5, Base: 26})
		bad := mkBatch(t, bspec{PID: 1, Seq: 11, Records: 1, Base: 31})
		bad[len(bad)-1] ^= 1 // CRC mismatch
		if _, err := p.AppendReplica(chunk(good, bad)); err == nil {
			t.Fatal("chunk with a corrupt batch accepted")
		}
		if !slices.Equal(p.Snapshot(), before) || p.LogEndOffset() != 21 {
			t.Fatalf("rejected chunk changed producer state or the log (end %d)", p.LogEndOffset())
		}
		if _, err := p.AppendReplica(good); err != nil {
			t.Fatal(err)
		}
		if in := kpProducer(t, p, 1); in.Batches[0].FirstSeq() != 0 || in.LastSeq() != 10 || in.Batches[in.NumBatches-1].LastOffset != 30 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// One fetched chunk: two transactional batches and the COMMIT that
	// closes them at 40; the cached batches stay as the data left them.
	{"updateProducerTransactionState", func(t *testing.T) {
		p := mustOpen(t, Config{})
		kpReplica(t, p, bspec{PID: 1, Base: 9}, nil)
		commit := testlogWithBase(mkMarker(1, 0, 15, false), 40)
		if _, err := p.AppendReplica(chunk(mkBatch(t, bspec{PID: 1, Seq: 1, Records: 5, Txn: true, Base: 16}),
			mkBatch(t, bspec{PID: 1, Seq: 6, Records: 5, Txn: true, Base: 26}), commit)); err != nil {
			t.Fatal(err)
		}
		in := kpProducer(t, p, 1)
		if in.TxnFirstOffset != -1 || in.CoordinatorEpoch != 15 || in.LastSeq() != 10 || in.Batches[in.NumBatches-1].LastOffset != 30 {
			t.Fatalf("entry %+v", in)
		}
		if open := p.OpenTxns(nil); len(open) != 0 {
			t.Fatalf("open %v", open)
		}
	}},
	// A fencing ABORT closes the transaction and clears the cached batches;
	// the entry survives a restart, keeping the fencing epoch.
	{"testProducerStateAfterFencingAbortMarker", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpClient(t, p, bspec{PID: 1, Txn: true}, nil)
		kpCoordinator(t, p, mkMarker(1, 1, 0, true), nil)
		if in := kpProducer(t, p, 1); in.TxnFirstOffset != -1 || in.NumBatches != 0 || in.Epoch != 1 {
			t.Fatalf("entry %+v", in)
		}
		p = kpRestart(t, p, cfg, false)
		kpClient(t, p, bspec{PID: 1, Txn: true}, kafkaerr.InvalidProducerEpoch)
	}},
	// A restart keeps every unexpired producer of the snapshot.
	{"testLoadFromSnapshotRetainsNonExpiredProducers", func(t *testing.T) {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs}
		p := mustOpen(t, cfg)
		kpClient(t, p, bspec{PID: 1}, nil)
		kpClient(t, p, bspec{PID: 2}, nil)
		p = kpRestart(t, p, cfg, false)
		if n := p.ProducerCount(); n != 2 {
			t.Fatalf("%d producers after the restart", n)
		}
		if in := kpProducer(t, p, 2); in.LastSeq() != 0 || in.Batches[0].LastOffset != 1 {
			t.Fatalf("producer 2 %+v", in)
		}
	}},
	// An idle producer is dropped when a restart finds it expired; one
	// with an open transaction is not (testProducersWithOngoingTransactionsDontExpire).
	{"testPidExpirationTimeout", func(t *testing.T) {
		p := kpRestartExpired(t, bspec{PID: 1, Epoch: 5})
		kpClient(t, p, bspec{PID: 1, Epoch: 5, Seq: 1}, nil)
		if n := p.ProducerCount(); n != 1 || kpProducer(t, p, 1).LastSeq() != 1 || p.LogEndOffset() != 2 {
			t.Fatalf("%d producers, end %d", n, p.LogEndOffset())
		}
	}},
	{"testProducersWithOngoingTransactionsDontExpire", func(t *testing.T) {
		p := kpRestartExpired(t, bspec{PID: 1, Epoch: 5, Txn: true})
		if in := kpProducer(t, p, 1); in.TxnFirstOffset != 0 {
			t.Fatalf("entry %+v", in)
		}
		if lso := p.LastStableOffset(); lso != 0 {
			t.Fatalf("LSO %d, want 0", lso)
		}
	}},
	// The LSO with a replicated partition's high watermark: an open
	// transaction bounds it, and a completed one until its marker is
	// below the high watermark.
	{"testFirstUnstableOffset", func(t *testing.T) {
		p := mustOpen(t, Config{ManualHighWatermark: true})
		kpReplica(t, p, bspec{PID: 1, Epoch: 5, Txn: true, Base: 99}, nil)
		kpReplica(t, p, bspec{PID: 2, Epoch: 5, Txn: true, Base: 105}, nil)
		kpReplicaBytes(t, p, testlogWithBase(mkMarker(1, 5, 0, false), 109))
		lso := func(hw, want int64) {
			t.Helper()
			p.SetHighWatermark(hw)
			if got := p.LastStableOffset(); got != want {
				t.Fatalf("LSO %d at high watermark %d, want %d", got, hw, want)
			}
		}
		lso(100, 99)
		lso(110, 105)
		kpReplicaBytes(t, p, testlogWithBase(mkMarker(2, 5, 0, true), 112))
		lso(112, 105)
		lso(113, 113)
	}},
	// A chunk of markers, some closing a transaction and some not, and
	// data opening new ones: only the markers that close one write a
	// .txnindex entry (the ABORT at 28), and the LSO ends at the open 30.
	{"testSkipEmptyTransactions", func(t *testing.T) {
		p := mustOpen(t, Config{})
		m := func(abort bool, at int64) []byte { return testlogWithBase(mkMarker(1, 0, 27, abort), at) }
		kpReplica(t, p, bspec{PID: 1, Records: 5, Txn: true, Base: 16}, nil)
		kpReplicaBytes(t, p, chunk(m(false, 21), m(false, 22), m(true, 23),
			mkBatch(t, bspec{PID: 1, Seq: 5, Records: 4, Txn: true, Base: 24}), m(true, 28), m(true, 29),
			mkBatch(t, bspec{PID: 1, Seq: 9, Records: 2, Txn: true, Base: 30})))
		got := p.AbortedTxns(nil, 0, 32)
		if len(got) != 1 || got[0].FirstOffset != 24 || got[0].LastOffset != 28 {
			t.Fatalf("aborted %v, want one from 24 to 28", got)
		}
		if lso := p.LastStableOffset(); lso != 30 {
			t.Fatalf("LSO %d, want 30", lso)
		}
	}},
	// The LSO of an aborted transaction, in its .txnindex entry: the first
	// offset of the earliest other open transaction, else its end.
	{"testLastStableOffsetCompletedTxn", func(t *testing.T) {
		p := mustOpen(t, Config{})
		const start1 = 992342
		const start2, start3 = start1 + 25, start1 + 57
		kpReplica(t, p, bspec{PID: 1, Txn: true, Base: start1}, nil)
		kpReplica(t, p, bspec{PID: 2, Txn: true, Base: start2}, nil)
		kpReplica(t, p, bspec{PID: 3, Txn: true, Base: start3}, nil)
		last1 := int64(start3 + 15)
		last3 := last1 + 20
		last2 := last3 + 78
		kpReplicaBytes(t, p, testlogWithBase(mkMarker(1, 0, 0, true), last1))
		kpReplicaBytes(t, p, testlogWithBase(mkMarker(3, 0, 0, true), last3))
		kpReplicaBytes(t, p, testlogWithBase(mkMarker(2, 0, 0, true), last2))
		want := []storage.AbortedTxn{ // in marker order
			{ProducerID: 1, FirstOffset: start1, LastOffset: last1, LastStableOffset: start2},
			{ProducerID: 3, FirstOffset: start3, LastOffset: last3, LastStableOffset: start2},
			{ProducerID: 2, FirstOffset: start2, LastOffset: last2, LastStableOffset: last2 + 1},
		}
		if got := p.AbortedTxns(nil, 0, last2+1); !slices.Equal(got, want) {
			t.Fatalf("aborted %v\nwant %v", got, want)
		}
	}},
	// An empty control batch (its marker cleaned away) opens no
	// transaction.
	{"testAppendEmptyControlBatch", func(t *testing.T) {
		p := mustOpen(t, Config{})
		b, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: 15, Attributes: codec.AttrControl | codec.AttrTransactional,
			BaseTimestamp: 1700000000000, ProducerID: 23423, BaseSequence: -1}, nil, codec.CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		kpReplicaBytes(t, p, b)
		if open := p.OpenTxns(nil); len(open) != 0 {
			t.Fatalf("open %v", open)
		}
		if in := kpProducer(t, p, 23423); in.TxnFirstOffset != -1 {
			t.Fatalf("entry %+v", in)
		}
	}},
	// The partition's late-transaction metric after a restart: the
	// loaded open transaction is late.
	{"testHasLateTransactionInitializedAfterReload", func(t *testing.T) {
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs})
		kpClient(t, p, bspec{PID: 39, Epoch: 2, Txn: true}, nil)
		p = kpRestart(t, p, Config{Dir: "/l", FS: fs, Now: kpLateNow}, false)
		if !p.HasLateTransaction() {
			t.Fatal("not late after the restart")
		}
	}},
	// A truncation below a late transaction's start removes it.
	{"testHasLateTransactionUpdatedAfterPartialTruncation", func(t *testing.T) {
		p := mustOpen(t, Config{Now: kpLateNow})
		kpClient(t, p, bspec{PID: 2}, nil)
		kpClient(t, p, bspec{PID: 39, Epoch: 2, Txn: true}, nil)
		if !p.HasLateTransaction() {
			t.Fatal("not late")
		}
		if err := p.Truncate(1); err != nil {
			t.Fatal(err)
		}
		if p.HasLateTransaction() {
			t.Fatal("late after the truncation")
		}
	}},
	// A truncation to the log start removes it too.
	{"testHasLateTransactionUpdatedAfterFullTruncation", func(t *testing.T) {
		p := mustOpen(t, Config{Now: kpLateNow})
		kpClient(t, p, bspec{PID: 39, Epoch: 2, Txn: true}, nil)
		if !p.HasLateTransaction() {
			t.Fatal("not late")
		}
		if err := p.Truncate(p.LogStartOffset()); err != nil {
			t.Fatal(err)
		}
		if p.HasLateTransaction() {
			t.Fatal("late after the full truncation")
		}
	}},
}

func TestKafkaPSMAppendPath(t *testing.T) {
	for _, kt := range kafkaPSMAppendPathTests {
		t.Run(kt.name, kt.fn)
	}
}

// kpExpiredNow is a clock producer.id.expiration.ms past the test batches.
func kpExpiredNow() time.Time {
	return time.UnixMilli(1700000000500 + psm.DefaultExpirationMs)
}

// kpRestartExpired opens a partition, appends the client batches and
// reopens it with the clock at kpExpiredNow, so that the loaded snapshot's
// idle producers have expired.
func kpRestartExpired(t *testing.T, batches ...bspec) *Partition {
	t.Helper()
	fs := vfs.NewMemFS()
	p := mustOpen(t, Config{Dir: "/l", FS: fs})
	for _, b := range batches {
		kpClient(t, p, b, nil)
	}
	return kpRestart(t, p, Config{Dir: "/l", FS: fs, Now: kpExpiredNow}, false)
}

// kpLateNow is a clock just past the late-transaction bound of a test batch.
func kpLateNow() time.Time {
	return time.UnixMilli(1700000000000 + psm.DefaultMaxTransactionTimeoutMs + psm.LateTransactionBufferMs + 1)
}

func kpClient(t *testing.T, p *Partition, s bspec, want error) Result {
	t.Helper()
	r, err := p.AppendClient(mkBatch(t, s))
	kpWant(t, "AppendClient", err, want)
	return r
}

func kpCoordinator(t *testing.T, p *Partition, b []byte, want error) {
	t.Helper()
	_, err := p.AppendCoordinator(b)
	kpWant(t, "AppendCoordinator", err, want)
}

func kpReplicaBytes(t *testing.T, p *Partition, b []byte) {
	t.Helper()
	if _, err := p.AppendReplica(b); err != nil {
		t.Fatalf("AppendReplica: %v", err)
	}
}

// testlogWithBase is b at base offset base (a leader's copy).
func testlogWithBase(b []byte, base int64) []byte { return testlog.WithOffsets(b, base, 0) }

func kpReplica(t *testing.T, p *Partition, s bspec, want error) {
	t.Helper()
	_, err := p.AppendReplica(mkBatch(t, s))
	kpWant(t, "AppendReplica", err, want)
}

func kpWant(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil && err != nil || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

func kpProducer(t *testing.T, p *Partition, pid int64) psm.ProducerInfo {
	t.Helper()
	in, ok := p.Producer(pid)
	if !ok {
		t.Fatalf("producer %d not found", pid)
	}
	return in
}

// kpRestart closes p and opens its log again with cfg, first deleting
// every snapshot file when dropSnapshots is set.
func kpRestart(t *testing.T, p *Partition, cfg Config, dropSnapshots bool) *Partition {
	t.Helper()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if dropSnapshots {
		fs := cfg.FS.(*vfs.MemFS)
		for _, o := range kpSnapshotFiles(t, fs) {
			if err := fs.Remove(storage.FileName(cfg.Dir, o, storage.SnapshotSuffix)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mustOpen(t, cfg)
}

// kpSnapshotFiles lists the offsets of the snapshot files in /l.
func kpSnapshotFiles(t *testing.T, fs *vfs.MemFS) []int64 {
	t.Helper()
	names, err := fs.ReadDir("/l")
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, n := range names {
		if o, ok := storage.ParseFileName(n, storage.SnapshotSuffix); ok {
			out = append(out, o)
		}
	}
	slices.Sort(out)
	return out
}

// kpCountingFS counts the snapshot files written.
type kpCountingFS struct {
	*vfs.MemFS
	snapshots int
}

func (f *kpCountingFS) WriteFile(name string, data []byte, sync bool) error {
	if strings.HasSuffix(name, storage.SnapshotSuffix+vfs.TempSuffix) {
		f.snapshots++
	}
	return f.MemFS.WriteFile(name, data, sync)
}

// kpLoadFromCorruptSnapshot: snapshots at 1 (a roll's) and 2 (Close's);
// the one at 2 damaged; the restart deletes it, loads the one at 1 and
// replays the batch after it.
func kpLoadFromCorruptSnapshot(t *testing.T, damage func([]byte) []byte) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 1}
	p := mustOpen(t, cfg)
	kpClient(t, p, bspec{PID: 1}, nil)
	kpClient(t, p, bspec{PID: 1, Seq: 1}, nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	name := storage.FileName("/l", 2, storage.SnapshotSuffix)
	src, err := fs.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(name, damage(src), true); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, cfg)
	defer p.Close()
	if r := p.Recovery(); r.Snapshot != 1 || r.Replayed != 1 {
		t.Fatalf("recovery %+v, want the snapshot at 1 and one batch replayed", r)
	}
	if in := kpProducer(t, p, 1); in.LastSeq() != 1 {
		t.Fatalf("entry %+v", in)
	}
	// The damaged file was replaced by the rebuild's snapshot at the log end.
	again, err := fs.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := psm.DecodeSnapshot(again); err != nil {
		t.Fatalf("snapshot at 2 after the restart: %v", err)
	}
}

// kpTwoSegments writes segments at 0 and 5 (five records a batch) and
// closes the partition: snapshots at 5 (the roll's) and 10 (Close's).
func kpTwoSegments(t *testing.T) (*vfs.MemFS, Config) {
	t.Helper()
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 1}
	p := mustOpen(t, cfg)
	kpClient(t, p, bspec{PID: 1, Records: 5}, nil)
	kpClient(t, p, bspec{PID: 1, Seq: 5, Records: 5}, nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := kpSnapshotFiles(t, fs); !slices.Equal(got, []int64{5, 10}) {
		t.Fatalf("snapshot files %v, want [5 10]", got)
	}
	return fs, cfg
}

// kpWriteStray puts a copy of the snapshot at 5 at offset o, a segment base
// of no segment.
func kpWriteStray(t *testing.T, fs *vfs.MemFS, o int64) {
	t.Helper()
	src, err := fs.ReadFile(storage.FileName("/l", 5, storage.SnapshotSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(storage.FileName("/l", o, storage.SnapshotSuffix), src, true); err != nil {
		t.Fatal(err)
	}
}
