package appendpath

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// Rules whose edges no other test of the package pins: each test below
// fails on a mutant that results/mutation.md lists.

// A batch the log cleaner emptied keeps its header and no record (LogCleaner
// retains the last batch of a producer so that its sequence survives
// compaction). A follower or a mirror copies such a 61-byte batch like any
// other, and producer state takes the producer's epoch and last sequence
// from its header (ProducerAppendInfo#append under REPLICATION).
func TestReplicaHeaderOnlyBatchKeepsProducerState(t *testing.T) {
	h := codec.BatchHeader{BaseTimestamp: 1700000000000, MaxTimestamp: 1700000000000, ProducerID: 9,
		ProducerEpoch: 1, BaseSequence: 0, LastOffsetDelta: 2}
	b, err := codec.AppendBatch(nil, h, nil, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != codec.HeaderSize || codec.Batch(b).RecordsCount() != 0 {
		t.Fatalf("an emptied batch is %d bytes with %d records, want %d and 0", len(b), codec.Batch(b).RecordsCount(), codec.HeaderSize)
	}
	p := mustOpen(t, Config{})
	r, err := p.AppendReplica(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.FirstOffset != 0 || r.LastOffset != 2 || p.LogEndOffset() != 3 {
		t.Fatalf("appended offsets %d..%d, log end %d, want 0..2 and 3", r.FirstOffset, r.LastOffset, p.LogEndOffset())
	}
	in, ok := p.Producer(9)
	if !ok || in.Epoch != 1 || in.LastSeq() != 2 {
		t.Fatalf("producer 9 after its emptied batch: %+v (found %v), want epoch 1, last sequence 2", in, ok)
	}
}

// The mirror states print Kafka's names (KIP-1279), STOPPED first, and a
// value past the table prints UNKNOWN rather than panicking.
func TestMirrorStateNames(t *testing.T) {
	for s, want := range []string{"STOPPED", "MIRRORING", "STOPPING", "FAILED"} {
		if got := MirrorState(s).String(); got != want {
			t.Errorf("MirrorState(%d) prints %q, want %q", s, got, want)
		}
	}
	if got := (Failed + 1).String(); got != "UNKNOWN" {
		t.Errorf("MirrorState past the table prints %q, want UNKNOWN", got)
	}
}

// Under strategy barrier the promotion step runs after the barrier is
// written and synced: STOPPING's last step follows the barrier step, it is
// not skipped.
func TestStopPromotesAfterBarrier(t *testing.T) {
	p := mirrorWithTwoOpenTxns(t, nil)
	calls := 0
	if err := p.Stop(StopOptions{Promote: func() error { calls++; return nil }}); err != nil || p.State() != Stopped {
		t.Fatalf("Stop: %v, state %s", err, p.State())
	}
	if calls != 1 {
		t.Fatalf("promotion ran %d times after the barrier, want 1", calls)
	}
	if n := p.ProducerCount(); n != 0 {
		t.Fatalf("%d producers after the barrier", n)
	}
}

// A fetch with no batch appends nothing and reports no offsets: Kafka's
// UnifiedLog#append returns the LogAppendInfo of analyzeAndValidateRecords,
// whose first and last offsets stay -1 when no batch was read, and rolls
// no segment for it.
func TestEmptyFetchReportsNoOffsets(t *testing.T) {
	p := mustOpen(t, Config{State: Mirroring, PSMOptions: nonNegOne})
	want := Result{FirstOffset: -1, LastOffset: -1}
	if r, err := p.AppendMirrored(nil, srcA); err != nil || r != want {
		t.Fatalf("AppendMirrored of no batch: %+v, %v; want %+v", r, err, want)
	}
	q := mustOpen(t, Config{})
	if r, err := q.AppendReplica(nil); err != nil || r != want {
		t.Fatalf("AppendReplica of no batch: %+v, %v; want %+v", r, err, want)
	}
	if p.LogEndOffset() != 0 || q.LogEndOffset() != 0 {
		t.Fatalf("log ends %d and %d after empty fetches, want 0", p.LogEndOffset(), q.LogEndOffset())
	}
	// The same when the active segment is full, so that any append, even
	// of nothing, is due a roll: nothing is rolled or written.
	full := mustOpen(t, Config{SegmentBytes: 1})
	if _, err := full.AppendReplica(mkBatch(t, bspec{PID: 7})); err != nil {
		t.Fatal(err)
	}
	if r, err := full.AppendReplica(nil); err != nil || r != want || full.LogEndOffset() != 1 || full.log.Segments() != 1 {
		t.Fatalf("AppendReplica of no batch to a full segment: %+v, %v, log end %d, %d segments; want %+v, 1, 1",
			r, err, full.LogEndOffset(), full.log.Segments(), want)
	}
}

// Batches is a range-over-func iterator: a loop that breaks early ends the
// walk of the log, and the iterator yields nothing after it.
func TestBatchesStopsWhenTheLoopBreaks(t *testing.T) {
	p := mustOpen(t, Config{})
	for i := range int32(3) {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: i})); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for b, err := range p.Batches(0) {
		if err != nil || b.BaseOffset() != 0 {
			t.Fatalf("first batch: offset %d, %v", b.BaseOffset(), err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("%d batches seen before the break, want 1", n)
	}
}

// A checkpoint names no epoch until a batch is mirrored: a stop that
// mirrored nothing persists epoch -1 (RecordBatch.NO_PARTITION_LEADER_EPOCH),
// as a checkpoint clamped to a log with no batch left does
// (TestCheckpointClampedOnRecovery), and a reopen keeps it as written.
func TestCheckpointOfAStopThatMirroredNothing(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, State: Mirroring, PSMOptions: nonNegOne}
	p := mustOpen(t, cfg)
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	want := MirrorCheckpoint{Offset: 0, Epoch: -1, Valid: true}
	if cp := p.Checkpoint(); cp != want {
		t.Fatalf("checkpoint %+v after a stop that mirrored nothing, want %+v", cp, want)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	cfg.State = Stopped
	q := mustOpen(t, cfg)
	if cp := q.Checkpoint(); cp != want {
		t.Fatalf("checkpoint %+v after a reopen, want %+v", cp, want)
	}
	data, err := fs.ReadFile("/l/" + checkpointFile)
	if err != nil || !strings.HasPrefix(string(data), "0 -1 ") {
		t.Fatalf("checkpoint file %q (%v), want offset 0 and epoch -1", data, err)
	}
}

// A RecordError says what and where: the wire error, the rule the first
// record at fault broke, codec's cause when there is one, then the indexes
// of the records at fault, the first MaxRecordErrorIndexes of them and how
// many there were in all when there were more.
func TestRecordErrorText(t *testing.T) {
	eight := []int32{0, 1, 2, 3, 5, 8, 13, 21}
	for _, c := range []struct {
		err  *RecordError
		want string
	}{
		{&RecordError{Err: kafkaerr.UnknownServerError, Reason: ErrUnsupportedCompression},
			"UNKNOWN_SERVER_ERROR (-1): appendpath: unknown compression codec"},
		{&RecordError{Err: kafkaerr.InvalidRecord, Reason: ErrRecordStructure, Cause: codec.ErrBadLength},
			"INVALID_RECORD (87): appendpath: invalid record structure: " + codec.ErrBadLength.Error()},
		{&RecordError{Err: kafkaerr.InvalidRecord, Reason: ErrNullKey, Indexes: []int32{4}, Count: 1},
			"INVALID_RECORD (87): appendpath: null key on a compacted topic (record 4)"},
		{&RecordError{Err: kafkaerr.InvalidTimestamp, Reason: ErrTimestampOutOfRange, Indexes: []int32{0, 6}, Count: 2},
			"INVALID_TIMESTAMP (32): appendpath: record timestamp out of range (record 0, 6)"},
		{&RecordError{Err: kafkaerr.InvalidTimestamp, Reason: ErrTimestampOutOfRange, Indexes: eight, Count: 8},
			"INVALID_TIMESTAMP (32): appendpath: record timestamp out of range (record 0, 1, 2, 3, 5, 8, 13, 21)"},
		{&RecordError{Err: kafkaerr.InvalidTimestamp, Reason: ErrTimestampOutOfRange, Indexes: eight, Count: 40},
			"INVALID_TIMESTAMP (32): appendpath: record timestamp out of range (record 0, 1, 2, 3, 5, 8, 13, 21, … 40 in all)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("RecordError text\n%q, want\n%q", got, c.want)
		}
	}
}

// Truncating at the log end does nothing (UnifiedLog#truncateTo: "has no
// effect as the largest offset in the log is ..."): producer state is not
// reloaded, so a producer that expired since its snapshot was loaded stays
// until expiration removes it, where a reload from that snapshot would drop
// it (ProducerStateManager#loadFromSnapshot skips expired producers).
func TestTruncateAtTheLogEndChangesNothing(t *testing.T) {
	now := testNow()
	cfg := Config{Dir: "/l", FS: vfs.NewMemFS(), Now: func() time.Time { return now },
		PSMOptions: psm.Options{ExpirationMs: 60_000}}
	p := mustOpen(t, cfg)
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7})); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil { // a snapshot at the log end
		t.Fatal(err)
	}
	q := mustOpen(t, cfg)
	defer q.Close()
	if _, ok := q.Producer(7); !ok {
		t.Fatal("producer 7 not loaded from the snapshot")
	}
	now = now.Add(2 * time.Minute)
	if err := q.Truncate(q.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.Producer(7); !ok || q.LogEndOffset() != 1 {
		t.Fatalf("after a truncation at the log end: producer 7 kept %v, log end %d; want kept, 1", ok, q.LogEndOffset())
	}
}

// failingSnapshotFS refuses to write producer snapshots.
type failingSnapshotFS struct{ *vfs.MemFS }

var errSnapshotWrite = errors.New("snapshot write refused")

func (f failingSnapshotFS) WriteFile(name string, data []byte, sync bool) error {
	if strings.Contains(name, storage.SnapshotSuffix) {
		return errSnapshotWrite
	}
	return f.MemFS.WriteFile(name, data, sync)
}

// Close syncs the log, writes a snapshot at its end and closes it; a
// snapshot it cannot write is its error, not lost behind the close that
// follows.
func TestCloseReportsAFailedSnapshot(t *testing.T) {
	p := mustOpen(t, Config{Dir: "/l", FS: failingSnapshotFS{vfs.NewMemFS()}})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7})); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); !errors.Is(err, errSnapshotWrite) {
		t.Fatalf("Close with a snapshot it cannot write: %v, want %v", err, errSnapshotWrite)
	}
}

// Recovery counts the batches a reopen replays into producer state, under
// either barrier application: the prototype's per-segment replay
// (LogLoader#loadProducersFromRecords) as the batch-at-a-time one.
func TestRecoveryCountsReplayedBatchesUnderEitherBarrierApply(t *testing.T) {
	for _, apply := range []psm.BarrierApply{psm.Prototype, psm.Exact} {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, PSMOptions: psm.Options{BarrierApply: apply}}
		p := mustOpen(t, cfg)
		for i := range int32(3) {
			if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: i})); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := fs.Remove(storage.FileName("/l", 3, storage.SnapshotSuffix)); err != nil {
			t.Fatal(err)
		}
		q := mustOpen(t, cfg)
		if r := q.Recovery(); r.Snapshot != -1 || r.Replayed != 3 {
			t.Errorf("barrier apply %v: reopen without a snapshot loaded snapshot %d and replayed %d batches, want -1 and 3",
				apply, r.Snapshot, r.Replayed)
		}
		q.Close()
	}
}

// A reload replays a segment as the KIP-1279 prototype's
// LogLoader#loadProducersFromRecords does under psm.Prototype: every batch
// of the segment through one appender, so a barrier inside the segment
// removes the producers at that point and the batches before it bring them
// back at the commit (docs/producer-state.md, "Resurrection"); under
// psm.Exact the barrier leaves none. Either way the replay writes the
// .txnindex entry of every transaction its markers aborted.
func TestReloadReplaysASegmentWithABarrier(t *testing.T) {
	for _, c := range []struct {
		apply     psm.BarrierApply
		producers int
	}{{psm.Exact, 0}, {psm.Prototype, 3}} {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, State: Mirroring, Strategy: pid.Barrier,
			PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, BarrierApply: c.apply}}
		p := mustOpen(t, cfg)
		if _, err := p.AppendMirrored(twoOpenTxnsChunk(t), srcA); err != nil {
			t.Fatal(err)
		}
		// ABORT markers for 5 and 9, then the barrier: one segment.
		if err := p.Stop(StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if n := p.ProducerCount(); n != 0 {
			t.Fatalf("%v: %d producers after the barrier", c.apply, n)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		removeSnapshots(t, fs, "/l")
		cfg.State = Stopped
		q := mustOpen(t, cfg)
		if q.log.Segments() != 1 {
			t.Fatalf("%v: %d segments, want the one", c.apply, q.log.Segments())
		}
		if n := q.ProducerCount(); n != c.producers {
			t.Errorf("%v: %d producers after the reload, want %d", c.apply, n, c.producers)
		}
		if a := q.AbortedTxns(nil, 0, q.LogEndOffset()); len(a) != 2 {
			t.Errorf("%v: %d aborted transactions indexed by the reload, want 2 (%+v)", c.apply, len(a), a)
		}
		q.Close()
	}
}

// A refusal of the whole batch names no record: an unknown codec
// (CompressionType.forId's IllegalArgumentException) and records that
// decompress past MaxDecompressedBytes are about the batch, so their
// RecordError holds no record index, as for a stream that does not
// decompress (TestValidateCompressedCorruptStream).
func TestBatchLevelRefusalsNameNoRecord(t *testing.T) {
	unknown := vBatch(t, vHeader(0), vRecs(2), codec.CompressionNone)
	codec.Batch(unknown).SetAttributes(6)
	re := mustReject(t, mustOpen(t, Config{}), unknown, kafkaerr.UnknownServerError, ErrUnsupportedCompression)
	wantIndexes(t, re, 0)
	large := vBatch(t, vHeader(0), vRecs(50), codec.CompressionGzip)
	re = mustReject(t, mustOpen(t, Config{MaxDecompressedBytes: 1024}), large, kafkaerr.InvalidRecord, ErrDecompressedTooLarge)
	wantIndexes(t, re, 0)
}

// A chunk indexes a batch only when it starts more than
// IndexIntervalBytes past the last entry (LogSegment#append's
// bytesSinceLastIndexEntry > indexIntervalBytes): in a chunk of 512-byte
// batches the batch at exactly 4096 bytes gets no entry, the next one does.
func TestChunkIndexesPastTheIntervalOnly(t *testing.T) {
	v := 1 // the value size that makes a one-record batch 512 bytes
	for ; len(mkBatch(t, bspec{PID: 7, Value: v})) != 512; v++ {
		if v > 512 {
			t.Fatal("no value size gives a 512-byte batch")
		}
	}
	var batches [][]byte
	for i := range 10 {
		batches = append(batches, testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: int32(i), Value: v}), int64(i), 0))
	}
	p := mustOpen(t, Config{})
	if _, err := p.AppendReplica(chunk(batches...)); err != nil {
		t.Fatal(err)
	}
	want := []storage.OffsetPosition{{Offset: 9, Position: 9 * 512}}
	if got := p.log.OffsetIndex(0, nil); !slices.Equal(got, want) {
		t.Fatalf("offset index %v, want %v: the batch at 4096 bytes is not past the interval", got, want)
	}
	checkMemoryIndex(t, p)
}

// A rebuilt batch refuses a negative record timestamp other than -1
// (MemoryRecordsBuilder#appendWithOffset's "Invalid negative timestamp");
// a timestamp of 0 is not negative and is kept.
func TestValidateRebuildKeepsTimestampZero(t *testing.T) {
	h := vHeader(0)
	h.BaseTimestamp, h.MaxTimestamp = 0, 3
	p := mustOpen(t, Config{})
	mustAccept(t, p, vBatch(t, h, offsetsOff(4), codec.CompressionGzip))
	for r, err := range p.Batches(0) {
		if err != nil || r.BaseTimestamp() != 0 {
			t.Fatalf("rebuilt batch base timestamp %d (%v), want 0", r.BaseTimestamp(), err)
		}
	}
}

// A leader's batch may be as large as max.message.bytes, not larger
// (UnifiedLog#analyzeAndValidateRecords: batchSize > config.maxMessageSize
// is RecordTooLargeException, MESSAGE_TOO_LARGE).
func TestLeaderBatchUpToMaxMessageBytes(t *testing.T) {
	b := mkBatch(t, bspec{PID: 7})
	mustAccept(t, mustOpen(t, Config{MaxMessageBytes: len(b)}), b)
	if _, err := mustOpen(t, Config{MaxMessageBytes: len(b) - 1}).AppendClient(b); !errors.Is(err, kafkaerr.MessageTooLarge) {
		t.Fatalf("a batch one byte over max.message.bytes: %v, want %v", err, kafkaerr.MessageTooLarge)
	}
}

// The same bound holds for a batch LogValidator rebuilds (inner offsets
// renumbered, the same size here): a rebuilt batch of exactly
// max.message.bytes is kept (UnifiedLog#append re-validates
// the sizes after a rebuild with batch.sizeInBytes > maxMessageSize).
func TestRebuiltBatchUpToMaxMessageBytes(t *testing.T) {
	in := vBatch(t, vHeader(0), offsetsOff(4), codec.CompressionGzip)
	p := mustOpen(t, Config{})
	mustAccept(t, p, bytes.Clone(in))
	var size int
	for b, err := range p.Batches(0) {
		if err != nil {
			t.Fatal(err)
		}
		size = len(b)
	}
	if size != len(in) {
		t.Fatalf("the rebuilt batch is %d bytes, the one sent %d: the bound below is not at the rebuilt size", size, len(in))
	}
	mustAccept(t, mustOpen(t, Config{MaxMessageBytes: size}), bytes.Clone(in))
}

// LogValidator's scratch buffers are kept between batches unless they grew
// past retainScratch: the buffer a rebuild wrote is still there, for the
// next rebuild, after a batch that needed none.
func TestValidatorKeepsItsRebuildBufferBelowTheBound(t *testing.T) {
	p := mustOpen(t, Config{})
	mustAccept(t, p, vBatch(t, vHeader(0), offsetsOff(4), codec.CompressionGzip)) // rebuilt
	mustAccept(t, p, mkBatch(t, bspec{PID: 9}))                                   // kept as sent
	if c := cap(p.val.out); c == 0 || c > retainScratch {
		t.Fatalf("rebuild buffer of %d bytes after a batch that needed none, want it kept", c)
	}
}

// A log producer state refuses to replay fails Open with producer state's
// error, under either barrier apply (the prototype's replay, a segment per
// appender, included).
// Such a log is written under the Stock has-producer-id rule, which tracks no
// negative PID (RecordBatch#hasProducerId), and reopened under NonNegativeOne,
// which tracks PID -5: its transactional batch opens a transaction, and its
// plain batch after it is INVALID_TXN_STATE (ProducerAppendInfo#
// appendDataBatch, for every origin).
func TestOpenFailsOnALogItsProducerStateRefuses(t *testing.T) {
	for _, apply := range []psm.BarrierApply{psm.Exact, psm.Prototype} {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, PSMOptions: psm.Options{BarrierApply: apply}}
		p := mustOpen(t, cfg)
		for _, b := range [][]byte{
			mkBatch(t, bspec{PID: -5, Epoch: 0, Seq: 0, Txn: true, Base: 0}),
			mkBatch(t, bspec{PID: -5, Epoch: 0, Seq: 1, Base: 1}),
		} {
			if _, err := p.AppendReplica(b); err != nil {
				t.Fatalf("%v: untracked PID -5: %v", apply, err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		removeSnapshots(t, fs, "/l")
		cfg.PSMOptions.HasProducerID = psm.NonNegativeOne
		cfg.Now = testNow
		if q, err := Open(cfg); !errors.Is(err, kafkaerr.InvalidTxnState) {
			if q != nil {
				q.Close()
			}
			t.Errorf("%v: Open of a log whose replay is refused: %v, want INVALID_TXN_STATE", apply, err)
		}
	}
}
