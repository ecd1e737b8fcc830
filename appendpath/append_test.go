package appendpath

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
)

func TestAppendClientAssignsOffsetsInLogCopy(t *testing.T) {
	p := mustOpen(t, Config{LeaderEpoch: 7})
	b1 := mkBatch(t, bspec{PID: 5, Seq: 0, Records: 3})
	orig := bytes.Clone(b1)
	r, err := p.AppendClient(b1)
	if err != nil {
		t.Fatal(err)
	}
	if r.FirstOffset != 0 || r.LastOffset != 2 || r.Duplicate || r.Batches != 1 {
		t.Fatalf("result %+v", r)
	}
	if !bytes.Equal(b1, orig) {
		t.Fatal("caller's batch was modified")
	}
	r, err = p.AppendClient(mkBatch(t, bspec{PID: 5, Seq: 3, Records: 2}))
	if err != nil || r.FirstOffset != 3 || r.LastOffset != 4 {
		t.Fatalf("second append %+v %v", r, err)
	}
	if p.LogEndOffset() != 5 || p.HighWatermark() != 5 || p.LastStableOffset() != 5 {
		t.Fatalf("LEO %d HW %d LSO %d", p.LogEndOffset(), p.HighWatermark(), p.LastStableOffset())
	}
	all := readAll(t, p)
	if len(all) != 2 {
		t.Fatalf("%d batches", len(all))
	}
	b := codec.Batch(all[1])
	if b.BaseOffset() != 3 || b.PartitionLeaderEpoch() != 7 || b.VerifyCRC() != nil {
		t.Fatalf("stored batch base %d epoch %d crc %v", b.BaseOffset(), b.PartitionLeaderEpoch(), b.VerifyCRC())
	}
	// Only the fields outside the CRC differ from what the client sent.
	if !bytes.Equal(all[0][codec.CRCStart:], orig[codec.CRCStart:]) {
		t.Fatal("payload changed")
	}
	e, ok := p.Producer(5)
	if !ok || e.LastSeq() != 4 || e.NumBatches != 2 {
		t.Fatalf("producer %+v", e)
	}
}

func TestAppendClientRejections(t *testing.T) {
	good := mkBatch(t, bspec{PID: 5, Seq: 0, Records: 2})
	mod := func(f func(b codec.Batch)) []byte {
		c := bytes.Clone(good)
		f(codec.Batch(c))
		codec.Batch(c).UpdateCRC()
		return c
	}
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 1
	big := mkBatch(t, bspec{PID: 5, Seq: 0, Value: 2000})
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"base offset not 0", testlog.WithOffsets(good, 9, -1), kafkaerr.InvalidRecord},
		{"two batches", chunk(good, good), kafkaerr.InvalidRecord},
		{"empty", nil, kafkaerr.InvalidRecord},
		{"truncated", good[:len(good)-3], kafkaerr.CorruptMessage},
		{"crc", badCRC, kafkaerr.CorruptMessage},
		{"too large", big, kafkaerr.MessageTooLarge},
		{"count != lastOffsetDelta+1", mod(func(b codec.Batch) {
			b[codec.OffRecordsCount+3] = 5
		}), kafkaerr.InvalidRecord},
		{"count 0", mod(func(b codec.Batch) {
			b[codec.OffRecordsCount+3] = 0
			b[codec.OffLastOffsetDelta+3] = 0xff
			b[codec.OffLastOffsetDelta] = 0xff
			b[codec.OffLastOffsetDelta+1] = 0xff
			b[codec.OffLastOffsetDelta+2] = 0xff
		}), kafkaerr.InvalidRecord}, // LogValidator#validateBatch, not a framing error
		{"count MinInt32, lastOffsetDelta MaxInt32", mod(func(b codec.Batch) {
			binary.BigEndian.PutUint32(b[codec.OffRecordsCount:], 1<<31)
			binary.BigEndian.PutUint32(b[codec.OffLastOffsetDelta:], 1<<31-1)
		}), kafkaerr.InvalidRecord},
		{"lastOffsetDelta -1, count 1", mod(func(b codec.Batch) {
			binary.BigEndian.PutUint32(b[codec.OffRecordsCount:], 1)
			binary.BigEndian.PutUint32(b[codec.OffLastOffsetDelta:], 0xffffffff)
		}), kafkaerr.InvalidRecord},
		{"control", mkMarker(5, 0, 0, true), kafkaerr.InvalidRecord},
		{"pid without sequence", mkBatch(t, bspec{PID: 5, Seq: -1}), kafkaerr.InvalidRecord},
		{"sequence gap after first", nil, nil}, // placeholder replaced below
	}
	cases = cases[:len(cases)-1]
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustOpen(t, Config{MaxMessageBytes: 1000})
			before := p.Snapshot()
			_, err := p.AppendClient(c.in)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if p.LogEndOffset() != 0 || !bytes.Equal(before, p.Snapshot()) {
				t.Fatal("rejected append changed the partition")
			}
		})
	}
}

func TestAppendClientProducerStateErrorsChangeNothing(t *testing.T) {
	p := mustOpen(t, Config{})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 5, Epoch: 2, Seq: 0, Records: 2})); err != nil {
		t.Fatal(err)
	}
	before, leo := p.Snapshot(), p.LogEndOffset()
	for _, c := range []struct {
		b    []byte
		want error
	}{
		{mkBatch(t, bspec{PID: 5, Epoch: 2, Seq: 5}), kafkaerr.OutOfOrderSequenceNumber},
		{mkBatch(t, bspec{PID: 5, Epoch: 1, Seq: 2}), kafkaerr.InvalidProducerEpoch},
		{mkBatch(t, bspec{PID: 5, Epoch: 3, Seq: 1}), kafkaerr.OutOfOrderSequenceNumber},
	} {
		if _, err := p.AppendClient(c.b); !errors.Is(err, c.want) {
			t.Fatalf("got %v want %v", err, c.want)
		}
		if p.LogEndOffset() != leo || !bytes.Equal(before, p.Snapshot()) {
			t.Fatal("rejected append changed the partition")
		}
	}
}

func TestAppendClientDuplicateWritesNothing(t *testing.T) {
	p := mustOpen(t, Config{})
	b := mkBatch(t, bspec{PID: 9, Seq: 0, Records: 4})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 1, Seq: 0})); err != nil {
		t.Fatal(err)
	}
	r1, err := p.AppendClient(b)
	if err != nil {
		t.Fatal(err)
	}
	leo := p.LogEndOffset()
	r2, err := p.AppendClient(b)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Duplicate || r2.FirstOffset != r1.FirstOffset || r2.LastOffset != r1.LastOffset {
		t.Fatalf("duplicate answered %+v, original %+v", r2, r1)
	}
	if p.LogEndOffset() != leo || len(readAll(t, p)) != 2 {
		t.Fatal("duplicate was written")
	}
}

func TestTransactionsIndexAndLSO(t *testing.T) {
	p := mustOpen(t, Config{})
	mustClient := func(b []byte) Result {
		t.Helper()
		r, err := p.AppendClient(b)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	mustClient(mkBatch(t, bspec{PID: 1, Seq: 0}))                        // 0
	mustClient(mkBatch(t, bspec{PID: 2, Seq: 0, Txn: true}))             // 1: txn of 2 opens
	mustClient(mkBatch(t, bspec{PID: 3, Seq: 0, Txn: true, Records: 2})) // 2-3: txn of 3 opens
	if got := p.LastStableOffset(); got != 1 {
		t.Fatalf("LSO %d, want 1", got)
	}
	r, err := p.AppendCoordinator(mkMarker(2, 0, 4, true)) // 4: abort 2
	if err != nil || r.FirstOffset != 4 {
		t.Fatalf("marker %+v %v", r, err)
	}
	if got := p.LastStableOffset(); got != 2 {
		t.Fatalf("LSO %d, want 2", got)
	}
	want := []storage.AbortedTxn{{ProducerID: 2, FirstOffset: 1, LastOffset: 4, LastStableOffset: 2}}
	if got := p.AbortedTxns(nil, 0, 100); !slices.Equal(got, want) {
		t.Fatalf("txn index %+v, want %+v", got, want)
	}
	if _, err := p.AppendCoordinator(mkMarker(3, 0, 3, false)); !errors.Is(err, kafkaerr.TransactionCoordinatorFenced) {
		// coordinator epoch 3 < 4 is fine for a different producer: expect success
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := p.LastStableOffset(); got != p.LogEndOffset() {
		t.Fatalf("LSO %d, LEO %d", got, p.LogEndOffset())
	}
	// Non-transactional data while a txn is open: INVALID_TXN_STATE, nothing written.
	mustClient(mkBatch(t, bspec{PID: 7, Seq: 0, Txn: true}))
	leo := p.LogEndOffset()
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: 1})); !errors.Is(err, kafkaerr.InvalidTxnState) {
		t.Fatalf("got %v", err)
	}
	if p.LogEndOffset() != leo {
		t.Fatal("written")
	}
}

var nonNegOne = psm.Options{HasProducerID: psm.NonNegativeOne}

var srcA = [16]byte{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
var srcB = [16]byte{0xb1, 0xb2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xff}

func TestAppendMirroredStrategies(t *testing.T) {
	src := chunk(
		testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0, Records: 2}), 0, 3),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 6, Seq: 0}), 2, 3),
		testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Seq: -1}), 3, 3),
	)
	bitfield5, _ := pid.MapBitfield(pid.Region(srcA), 5, pid.Reject)
	for _, c := range []struct {
		s    pid.Strategy
		want []int64
	}{
		{pid.Verbatim, []int64{5, 6, -1}},
		{pid.Barrier, []int64{5, 6, -1}},
		{pid.Negate, []int64{-7, -8, -1}},
		{pid.NegateSkip, []int64{-7, -8, -1}},
		{pid.Bitfield, []int64{bitfield5, bitfield5 + 1, -1}},
	} {
		for _, fix := range []pid.CRCFix{pid.Full, pid.Patch} {
			t.Run(c.s.String()+"/"+fix.String(), func(t *testing.T) {
				p := mustOpen(t, Config{State: Mirroring, Strategy: c.s, CRCFix: fix,
					PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne}})
				in := bytes.Clone(src)
				r, err := p.AppendMirrored(in, srcA)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(in, src) {
					t.Fatal("caller's chunk was modified")
				}
				if r.FirstOffset != 0 || r.LastOffset != 3 || r.Batches != 3 {
					t.Fatalf("result %+v", r)
				}
				for i, b := range readAll(t, p) {
					cb := codec.Batch(b)
					if cb.ProducerID() != c.want[i] || cb.VerifyCRC() != nil || cb.PartitionLeaderEpoch() != 3 {
						t.Fatalf("batch %d: pid %d crc %v epoch %d", i, cb.ProducerID(), cb.VerifyCRC(), cb.PartitionLeaderEpoch())
					}
				}
				if _, ok := p.Producer(c.want[0]); !ok {
					t.Fatal("producer state not keyed by the mapped PID")
				}
				if _, err := p.AppendClient(mkBatch(t, bspec{PID: 100, Seq: 0})); !errors.Is(err, kafkaerr.ReadOnlyTopic) {
					t.Fatalf("client append while MIRRORING: %v", err)
				}
			})
		}
	}
}

func TestAppendMirroredRejectedChunkWritesNothing(t *testing.T) {
	for _, s := range []pid.Strategy{pid.Verbatim, pid.Negate, pid.Bitfield} {
		t.Run(s.String(), func(t *testing.T) {
			p := mustOpen(t, Config{State: Mirroring, Strategy: s, CRCFix: pid.Patch, PSMOptions: nonNegOne})
			first := testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0, Txn: true}), 0, 0)
			if _, err := p.AppendMirrored(first, srcA); err != nil {
				t.Fatal(err)
			}
			before, leo := p.Snapshot(), p.LogEndOffset()
			logBefore := readAll(t, p)
			// Batch 2 of 3 is non-transactional data of a producer with an open
			// transaction: INVALID_TXN_STATE on REPLICATION too.
			bad := chunk(
				testlog.WithOffsets(mkBatch(t, bspec{PID: 8, Seq: 0}), 1, 0),
				testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 1}), 2, 0),
				testlog.WithOffsets(mkBatch(t, bspec{PID: 9, Seq: 0}), 3, 0),
			)
			in := bytes.Clone(bad)
			_, err := p.AppendMirrored(in, srcA)
			var be *BatchError
			if !errors.Is(err, kafkaerr.InvalidTxnState) || !errors.As(err, &be) || be.Index != 1 {
				t.Fatalf("got %v", err)
			}
			if !bytes.Equal(in, bad) {
				t.Fatal("caller's chunk was modified on rejection")
			}
			if p.LogEndOffset() != leo || !bytes.Equal(before, p.Snapshot()) {
				t.Fatal("rejected chunk changed the partition")
			}
			after := readAll(t, p)
			if len(after) != len(logBefore) || !bytes.Equal(after[0], logBefore[0]) {
				t.Fatal("log bytes changed")
			}
			// Offsets going backwards are refused the same way.
			if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 8, Seq: 0}), 0, 0), srcA); !errors.Is(err, ErrOffsetsOutOfOrder) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestBitfieldUnmappableFails(t *testing.T) {
	p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Bitfield})
	in := chunk(testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0}), 0, 0), testlog.WithOffsets(mkBatch(t, bspec{PID: 1<<31 + 5, Seq: 0}), 1, 0))
	_, err := p.AppendMirrored(in, srcA)
	if !errors.Is(err, kafkaerr.UnmappableProducerID) {
		t.Fatalf("got %v", err)
	}
	if p.State() != Failed || p.LogEndOffset() != 0 || p.ProducerCount() != 0 {
		t.Fatalf("state %s LEO %d producers %d", p.State(), p.LogEndOffset(), p.ProducerCount())
	}
	if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0}), 0, 0), srcA); !errors.Is(err, kafkaerr.MirrorPartitionFailed) {
		t.Fatalf("got %v", err)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 5, Seq: 0})); !errors.Is(err, kafkaerr.ReadOnlyTopic) {
		t.Fatalf("got %v", err)
	}
	// Alias keeps the low bits instead.
	q := mustOpen(t, Config{State: Mirroring, Strategy: pid.Bitfield, Policy: pid.Alias, PSMOptions: nonNegOne})
	if _, err := q.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	if q.ProducerCount() != 1 {
		t.Fatalf("alias: %d producers, want the conflated 1", q.ProducerCount())
	}
}

func TestBarrierExactOrderInChunk(t *testing.T) {
	barrier := codec.AppendBarrier(nil, 0, "src", 1700000000000)
	in := chunk(
		testlog.WithOffsets(mkBatch(t, bspec{PID: 1, Seq: 0}), 0, 0),
		testlog.WithOffsets(barrier, 1, 0),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 2, Seq: 0}), 2, 0),
	)
	p := mustOpen(t, Config{})
	if _, err := p.AppendReplica(in); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Producer(1); ok {
		t.Fatal("entry before the barrier survived")
	}
	if _, ok := p.Producer(2); !ok {
		t.Fatal("entry after the barrier missing")
	}
	// A rebuild replays the same order.
	if err := p.Truncate(2); err != nil {
		t.Fatal(err)
	}
	if p.ProducerCount() != 0 || p.LogEndOffset() != 2 {
		t.Fatalf("after truncate: %d producers, LEO %d", p.ProducerCount(), p.LogEndOffset())
	}
}

func TestReadWholeBatches(t *testing.T) {
	p := mustOpen(t, Config{SegmentBytes: 300})
	var sizes []int
	for i := range 10 {
		b := mkBatch(t, bspec{PID: 1, Seq: int32(2 * i), Records: 2})
		sizes = append(sizes, len(b))
		if _, err := p.AppendClient(b); err != nil {
			t.Fatal(err)
		}
	}
	if p.log.Segments() < 3 {
		t.Fatalf("%d segments: no roll", p.log.Segments())
	}
	got, err := p.Read(5, 1) // inside batch 2 (offsets 4-5): at least one batch
	if err != nil || len(got) != sizes[2] || codec.Batch(got).BaseOffset() != 4 {
		t.Fatalf("read %d bytes base %d err %v", len(got), codec.Batch(got).BaseOffset(), err)
	}
	got, err = p.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range sizes {
		total += s
	}
	if len(got) != total {
		t.Fatalf("read all: %d bytes, want %d", len(got), total)
	}
	got, _ = p.Read(0, sizes[0]+sizes[1]+sizes[2]-1)
	if len(got) != sizes[0]+sizes[1] {
		t.Fatalf("budget: %d bytes", len(got))
	}
	if got, err := p.Read(20, 100); got != nil || err != nil {
		t.Fatal("read at LEO")
	}
}

func TestAppendClientRecordStructure(t *testing.T) {
	b := mkBatch(t, bspec{PID: 5, Seq: 0, Records: 3})
	// Claim one record fewer than the batch holds, keeping count ==
	// lastOffsetDelta+1: bytes are left after the last record.
	binary.BigEndian.PutUint32(b[codec.OffRecordsCount:], 2)
	binary.BigEndian.PutUint32(b[codec.OffLastOffsetDelta:], 1)
	codec.Batch(b).UpdateCRC()
	p := mustOpen(t, Config{})
	if _, err := p.AppendClient(b); !errors.Is(err, kafkaerr.InvalidRecord) {
		t.Fatalf("got %v", err)
	}
	// The same bytes mirrored are not parsed (REPLICATION skips LogValidator).
	q := mustOpen(t, Config{State: Mirroring})
	if _, err := q.AppendMirrored(b, srcA); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyFetchIsNoop(t *testing.T) {
	p := mustOpen(t, Config{State: Mirroring})
	r, err := p.AppendMirrored(nil, srcA)
	if err != nil || r.Batches != 0 || p.LogEndOffset() != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := p.AppendReplica([]byte{}); err != nil || r.Batches != 0 {
		t.Fatalf("%+v %v", r, err)
	}
}

// TestAppendMirroredMixedSizes: a fetch mixing batches under and over
// fuseMin (small ones copied in runs, large ones copied in the CRC's pass)
// lands byte for byte, in memory and in files, with and without a rewrite;
// one flipped byte deep in the last large batch rejects the fetch and leaves
// the log as it was, and a roll due before the append takes the two-pass way.
func TestAppendMirroredMixedSizes(t *testing.T) {
	bs := []bspec{
		{PID: 5, Seq: 0},
		{PID: 6, Seq: 0, Records: 40, Value: 64},
		{PID: 5, Seq: 1},
		{PID: 7, Seq: 0, Records: 3},
		{PID: 8, Seq: 0, Records: 90, Value: 100},
		{PID: 7, Seq: 3, Records: 2},
	}
	var src []byte
	var off int64
	lastBig := 0 // where batch 4 starts
	for i, s := range bs {
		if i == 4 {
			lastBig = len(src)
		}
		src = append(src, testlog.WithOffsets(mkBatch(t, s), off, 2)...)
		off += int64(max(s.Records, 1))
	}
	if len(src) < 2*fuseMin {
		t.Fatalf("fetch of %d bytes has too few large batches", len(src))
	}
	for _, dir := range []bool{false, true} {
		for _, s := range []pid.Strategy{pid.Verbatim, pid.Bitfield} {
			t.Run(fmt.Sprintf("files=%v/%s", dir, s), func(t *testing.T) {
				cfg := Config{State: Mirroring, Strategy: s, CRCFix: pid.Patch, PSMOptions: nonNegOne}
				if dir {
					cfg.Dir = t.TempDir()
				}
				p := mustOpen(t, cfg)
				bad := bytes.Clone(src)
				bad[lastBig+500] ^= 1
				_, err := p.AppendMirrored(bad, srcA)
				var be *BatchError
				if !errors.Is(err, kafkaerr.CorruptMessage) || !errors.As(err, &be) || be.Index != 4 {
					t.Fatalf("corrupt fetch: %v", err)
				}
				if p.LogEndOffset() != 0 || len(readAll(t, p)) != 0 || p.ProducerCount() != 0 {
					t.Fatal("rejected fetch changed the partition")
				}
				if _, err := p.AppendMirrored(src, srcA); err != nil {
					t.Fatal(err)
				}
				got := readAll(t, p)
				if len(got) != len(bs) {
					t.Fatalf("%d batches", len(got))
				}
				pos := 0
				for i, b := range got {
					want := codec.Batch(bytes.Clone(src[pos : pos+len(b)]))
					pos += len(b)
					if s == pid.Bitfield {
						mapped, _ := pid.MapBitfield(pid.Region(srcA), want.ProducerID(), pid.Reject)
						want.SetProducerID(mapped)
					}
					if !bytes.Equal(b, want) || codec.Batch(b).VerifyCRC() != nil {
						t.Fatalf("batch %d differs from the fetch's", i)
					}
				}
				if pos != len(src) {
					t.Fatalf("log holds %d of %d bytes", pos, len(src))
				}
			})
		}
	}
	// A roll due before the append: checked first, then rolled, then copied.
	p := mustOpen(t, Config{State: Mirroring, SegmentBytes: int64(len(src)) + 10, PSMOptions: nonNegOne})
	for range 3 {
		if _, err := p.AppendMirrored(src, srcA); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(src); {
			b := codec.Batch(src[i:])
			b.SetBaseOffset(b.BaseOffset() + off)
			i += int(b.BatchLength()) + codec.LogOverhead
		}
	}
	if got := readAll(t, p); len(got) != 3*len(bs) {
		t.Fatalf("%d batches after rolls", len(got))
	}
}

// TestDedupCRCClientRetry: with psm.Options.DedupCRC a CLIENT batch resent
// byte for byte is a duplicate (acknowledged at its first offsets), while a
// batch with the same PID, epoch and sequences but other records is refused
// with OUT_OF_ORDER_SEQUENCE_NUMBER and nothing is appended. On a
// LogAppendTime topic the stored CRC is not the client's, so the window keeps
// none and Kafka's sequence-only answer applies.
func TestDedupCRCClientRetry(t *testing.T) {
	for _, tt := range []TimestampType{CreateTime, LogAppendTime} {
		p := mustOpen(t, Config{TimestampType: tt, PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, DedupCRC: true}})
		sent := mkBatch(t, bspec{PID: 5, Seq: 0, Records: 3})
		first, err := p.AppendClient(append([]byte(nil), sent...))
		if err != nil || first.Duplicate {
			t.Fatalf("%v: first append %+v %v", tt, first, err)
		}
		retry, err := p.AppendClient(append([]byte(nil), sent...))
		if err != nil || !retry.Duplicate || retry.FirstOffset != first.FirstOffset {
			t.Fatalf("%v: retry %+v %v, want a duplicate at %d", tt, retry, err, first.FirstOffset)
		}
		end := p.LogEndOffset()
		foreign := mkBatch(t, bspec{PID: 5, Seq: 0, Records: 3, Value: 7})
		res, err := p.AppendClient(foreign)
		if tt == LogAppendTime {
			if err != nil || !res.Duplicate {
				t.Fatalf("%v: foreign batch %+v %v, want the sequence-only duplicate", tt, res, err)
			}
			continue
		}
		if !errors.Is(err, kafkaerr.OutOfOrderSequenceNumber) || p.LogEndOffset() != end {
			t.Fatalf("%v: foreign batch %+v %v, log end %d (want %d)", tt, res, err, p.LogEndOffset(), end)
		}
	}
}

// A mirrored append of fuseMin bytes or more that must roll is checked in
// the next segment's buffer before the roll (storage.Log.StageRolled): a
// corrupt one is rejected with no roll and nothing written, in a memory log
// and a file log, and the valid append after it rolls and is stored as sent.
func TestAppendMirroredRollDueChecksBeforeRoll(t *testing.T) {
	b := mkBatch(t, bspec{PID: 7, Seq: 0, Records: 4, Value: 700})
	if len(b) < fuseMin {
		t.Fatalf("test batch of %d bytes takes the unfused path", len(b))
	}
	for _, dir := range []string{"", t.TempDir()} {
		p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Verbatim, MirrorOffsets: AssignOffsets, Dir: dir, SegmentBytes: int64(3*len(b) + 100)})
		for i := range 3 {
			codec.Batch(b).SetBaseSequence(int32(4 * i))
			if _, err := p.AppendMirrored(b, srcA); err != nil {
				t.Fatal(err)
			}
		}
		if !p.log.NeedsRoll(len(b)) {
			t.Fatal("the fourth append needs no roll")
		}
		before := readAll(t, p)
		segs, leo := p.log.Segments(), p.LogEndOffset()
		bad := bytes.Clone(b)
		bad[len(bad)-1] ^= 1 // a record byte: the CRC no longer matches
		if _, err := p.AppendMirrored(bad, srcA); !errors.Is(err, kafkaerr.CorruptMessage) {
			t.Fatalf("dir %q: corrupt roll-due append: %v", dir, err)
		}
		if p.log.Segments() != segs || p.LogEndOffset() != leo || !slices.EqualFunc(readAll(t, p), before, bytes.Equal) {
			t.Fatalf("dir %q: the rejected append changed the log: %d segments (was %d), LEO %d (was %d)", dir, p.log.Segments(), segs, p.LogEndOffset(), leo)
		}
		codec.Batch(b).SetBaseSequence(12)
		if _, err := p.AppendMirrored(b, srcA); err != nil {
			t.Fatal(err)
		}
		all := readAll(t, p)
		if p.log.Segments() != segs+1 || len(all) != len(before)+1 {
			t.Fatalf("dir %q: %d segments, %d batches after the valid append", dir, p.log.Segments(), len(all))
		}
		want := testlog.WithOffsets(b, leo, 0)
		if got := all[len(all)-1]; !bytes.Equal(got, want) {
			t.Fatalf("dir %q: the rolled append is not stored as sent", dir)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFusedCopy: the append path's one fused CRC and copy, handed
// src[from:end] that ends with a large batch at pos, split at the batch's
// covered bytes, with a smaller batch before it (from < pos) or not (from
// == pos), copies exactly those bytes, leaves the staging bytes around them
// as they were, and returns the CRC-32C of the large batch's covered bytes,
// the CRC its header states.
func TestFusedCopy(t *testing.T) {
	small := mkBatch(t, bspec{PID: 5, Seq: 0})
	big := mkBatch(t, bspec{PID: 6, Seq: 0, Records: 40, Value: 64})
	if len(big) < fuseMin {
		t.Fatalf("test batch of %d bytes is under fuseMin", len(big))
	}
	src := chunk(small, big, small)
	pos, end := len(small), len(small)+len(big)
	for _, from := range []int{0, pos} {
		dst := bytes.Repeat([]byte{0xee}, len(src))
		at := pos + codec.CRCStart
		crc := fusedCopy(dst[from:at], src[from:at], dst[at:end], src[at:end])
		if want := codec.Batch(big).CRC(); crc != want || crc != codec.Checksum(big[codec.CRCStart:]) {
			t.Errorf("from %d: CRC %08x, the batch states %08x", from, crc, want)
		}
		if !bytes.Equal(dst[from:end], src[from:end]) {
			t.Errorf("from %d: dst[%d:%d] is not src's", from, from, end)
		}
		for i, c := range dst {
			if (i < from || i >= end) && c != 0xee {
				t.Fatalf("from %d: byte %d outside [%d, %d) written", from, i, from, end)
			}
		}
	}
}

// TestIntact: a replicated batch passes the checks before producer state
// when its CRC matches its covered bytes and its lastOffsetDelta is not
// negative; a flipped record byte or a negative lastOffsetDelta (CRC
// recomputed, so only the range is wrong) fails them.
func TestIntact(t *testing.T) {
	b := codec.Batch(mkBatch(t, bspec{PID: 5, Seq: 0, Records: 3}))
	crcOf := func(b codec.Batch) uint32 { return codec.Checksum(b[codec.CRCStart:]) }
	if !intact(b, crcOf(b)) {
		t.Fatal("a well-formed batch is not intact")
	}
	flipped := codec.Batch(bytes.Clone(b))
	flipped[len(flipped)-1] ^= 1
	if intact(flipped, crcOf(flipped)) {
		t.Error("a batch whose CRC does not match is intact")
	}
	negative := codec.Batch(bytes.Clone(b))
	binary.BigEndian.PutUint32(negative[codec.OffLastOffsetDelta:], uint32(0xffffffff))
	negative.UpdateCRC()
	if intact(negative, crcOf(negative)) {
		t.Error("a batch with lastOffsetDelta -1 is intact")
	}
}
