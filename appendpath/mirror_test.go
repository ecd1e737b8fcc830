package appendpath

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// mirrorWithOpenTxn is a mirror holding: p5 txn data (open), p7 data.
func mirrorWithOpenTxn(t *testing.T, s pid.Strategy, fault func(StopStep) error) *Partition {
	t.Helper()
	p := mustOpen(t, Config{State: Mirroring, Strategy: s, Hazards: Hazards{Fault: fault}, PSMOptions: nonNegOne})
	in := chunk(
		testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Epoch: 3, Seq: 0, Txn: true, Records: 2}), 0, 4),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0}), 2, 4),
	)
	if _, err := p.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	if p.LastStableOffset() != 0 {
		t.Fatalf("LSO %d, want 0 (open txn)", p.LastStableOffset())
	}
	return p
}

// TestStopHazards: the prototype's STOPPING hazards, off by default. R2
// goes on past a failed ABORT marker (the transaction stays open); R1 skips
// the barrier of a partition that knows no source cluster id.
func TestStopHazards(t *testing.T) {
	markerFails := func(s StopStep) error {
		if s == StepMarker {
			return errors.New("disk full")
		}
		return nil
	}
	p := mirrorWithOpenTxn(t, pid.Barrier, markerFails)
	if err := p.Stop(StopOptions{Hazards: StopHazards{IgnoreMarkerFailure: true}}); err != nil || p.State() != Stopped {
		t.Fatalf("R2: %v, state %s", err, p.State())
	}
	if len(p.OpenTxns(nil)) != 1 {
		t.Fatalf("R2: open transactions %v, want the one whose ABORT failed", p.OpenTxns(nil))
	}

	for _, skip := range []bool{false, true} {
		q := mustOpen(t, Config{Strategy: pid.Barrier})
		if err := q.StartMirroring(); err != nil {
			t.Fatal(err)
		}
		if err := q.Stop(StopOptions{Hazards: StopHazards{SkipBarrierWithoutSource: skip}}); err != nil || q.State() != Stopped {
			t.Fatalf("R1=%v: %v, state %s", skip, err, q.State())
		}
		want := int64(1) // the barrier
		if skip {
			want = 0 // no mirrored batch, so no source cluster id: no barrier
		}
		if q.LogEndOffset() != want {
			t.Fatalf("R1=%v: log end %d, want %d", skip, q.LogEndOffset(), want)
		}
	}
}

func TestTruncateRebuildEqualsFreshRun(t *testing.T) {
	p := mustOpen(t, Config{SegmentBytes: 400})
	var batches [][]byte
	seq := map[int64]int32{}
	for i := range 30 {
		pd := int64(i % 4)
		b := mkBatch(t, bspec{PID: pd, Seq: seq[pd], Records: 2, Txn: pd == 3})
		seq[pd] += 2
		if _, err := p.AppendClient(b); err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
		if pd == 3 && i%8 == 7 {
			m := mkMarker(3, 0, 0, i%16 == 7)
			if _, err := p.AppendCoordinator(m); err != nil {
				t.Fatal(err)
			}
			batches = append(batches, m)
		}
	}
	for _, cut := range []int{25, 11, 3} {
		all := readAll(t, p)
		off := codec.Batch(all[cut]).BaseOffset()
		if err := p.Truncate(off); err != nil {
			t.Fatal(err)
		}
		q := mustOpen(t, Config{SegmentBytes: 400})
		for _, b := range batches[:cut] {
			var err error
			if codec.Batch(b).IsControl() {
				_, err = q.AppendCoordinator(b)
			} else {
				_, err = q.AppendClient(b)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if p.LogEndOffset() != q.LogEndOffset() {
			t.Fatalf("cut %d: LEO %d vs %d", cut, p.LogEndOffset(), q.LogEndOffset())
		}
		if !bytes.Equal(p.Snapshot(), q.Snapshot()) {
			a, _ := psm.DecodeSnapshot(p.Snapshot())
			b, _ := psm.DecodeSnapshot(q.Snapshot())
			t.Fatalf("cut %d: producer state differs:\n%+v\n%+v", cut, a, b)
		}
		if !slices.Equal(p.AbortedTxns(nil, 0, 1<<40), q.AbortedTxns(nil, 0, 1<<40)) {
			t.Fatalf("cut %d: txn index differs", cut)
		}
		if p.LastStableOffset() != q.LastStableOffset() {
			t.Fatalf("cut %d: LSO %d vs %d", cut, p.LastStableOffset(), q.LastStableOffset())
		}
	}
}

var _ = psm.Client

// TestCheckpointClampedOnRecovery: a checkpoint persisted (synced) ahead of
// log bytes that a power cut then loses is brought back inside the
// recovered log on Open, and rewritten.
func TestCheckpointClampedOnRecovery(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, State: Mirroring, PSMOptions: nonNegOne} // storage.SyncNever
	p := mustOpen(t, cfg)
	in := chunk(
		testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0, Records: 2}), 0, 4),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 2}), 2, 6),
	)
	if _, err := p.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if cp := p.Checkpoint(); cp.Offset != 3 || cp.Epoch != 6 {
		t.Fatalf("checkpoint %+v before the crash", cp)
	}
	// Every unsynced log byte that survives is garbage: recovery cuts at 0.
	crashed := fs.Crash(rand.New(rand.NewPCG(1, 2)), func(name string, unsynced []byte) {
		for i := range unsynced {
			unsynced[i] ^= 0xff
		}
	})
	cfg.FS, cfg.State = crashed, Stopped
	q := mustOpen(t, cfg)
	want := MirrorCheckpoint{Offset: q.LogEndOffset(), Epoch: -1, Source: srcA, Valid: true}
	if q.LogEndOffset() != 0 {
		t.Fatalf("LEO %d after the crash, want 0", q.LogEndOffset())
	}
	if cp := q.Checkpoint(); cp != want {
		t.Fatalf("checkpoint %+v after recovery, want %+v", cp, want)
	}
	data, err := crashed.ReadFile("/l/" + checkpointFile)
	if err != nil || !strings.HasPrefix(string(data), "0 -1 ") {
		t.Fatalf("checkpoint file %q (%v) not rewritten", data, err)
	}
}

// TestStopPromote: the promotion step (strategy allocator) runs last, after
// the ABORT markers; an error leaves the partition STOPPING and read-only,
// a retry closes no transaction twice, ErrPromotionImpossible moves it to
// FAILED, and no barrier is written.
func TestStopPromote(t *testing.T) {
	p := mirrorWithOpenTxn(t, pid.Allocator, nil)
	calls := 0
	refuse := errors.New("allocator reset not confirmed")
	err := p.Stop(StopOptions{Promote: func() error { calls++; return refuse }})
	if !errors.Is(err, refuse) || p.State() != Stopping {
		t.Fatalf("refused promotion: %v, state %s", err, p.State())
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 9, Seq: 0})); err == nil {
		t.Fatal("client append accepted while STOPPING")
	}
	end := p.LogEndOffset()
	if err := p.Stop(StopOptions{Promote: func() error { calls++; return nil }}); err != nil || p.State() != Stopped {
		t.Fatalf("retry: %v, state %s", err, p.State())
	}
	if calls != 2 || p.LogEndOffset() != end || len(p.OpenTxns(nil)) != 0 {
		t.Fatalf("retry: %d calls, log end %d (want %d: no second ABORT, no barrier), open %v",
			calls, p.LogEndOffset(), end, p.OpenTxns(nil))
	}

	q := mirrorWithOpenTxn(t, pid.Allocator, nil)
	scanFails := func(s StopStep) error {
		if s == StepAllocator {
			return errors.New("scan failed")
		}
		return nil
	}
	if err := q.Stop(StopOptions{Promote: func() error { t.Fatal("promoted past a failed step"); return nil }, Hazards: StopHazards{Fault: scanFails}}); !errors.Is(err, ErrFault) || q.State() != Stopping {
		t.Fatalf("fault at allocator: %v, state %s", err, q.State())
	}
	err = q.Stop(StopOptions{Promote: func() error { return fmt.Errorf("%w: PID near MaxInt64", ErrPromotionImpossible) }})
	if !errors.Is(err, ErrPromotionImpossible) || q.State() != Failed {
		t.Fatalf("impossible promotion: %v, state %s", err, q.State())
	}
}

// TestBecomeLeaderKeepsDuplicateWindow: Partition#makeLeader reloads
// nothing, so a follower that becomes leader keeps every batch of each
// producer's duplicate window it built from replicated batches, and a
// client's retry of the oldest in-flight batch after the leader change is a
// duplicate, acknowledged at its first offsets.
func TestBecomeLeaderKeepsDuplicateWindow(t *testing.T) {
	leader, follower := mustOpen(t, Config{}), mustOpen(t, Config{})
	var sent [][]byte
	for i := range 3 {
		b := mkBatch(t, bspec{PID: 7, Seq: int32(5 * i), Records: 5})
		if _, err := leader.AppendClient(b); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, b)
	}
	if _, err := follower.AppendReplica(chunk(readAll(t, leader)...)); err != nil {
		t.Fatal(err)
	}
	before := follower.Producers()
	if err := follower.BecomeLeader(1, Stopped); err != nil {
		t.Fatal(err)
	}
	if after := follower.Producers(); len(after) != 1 || len(after[0].Window()) != 3 ||
		len(before[0].Window()) != 3 || after[0].LastSeq() != before[0].LastSeq() {
		t.Fatalf("producer state changed at the leader change: %+v, was %+v", after, before)
	}
	r, err := follower.AppendClient(sent[0])
	if err != nil || !r.Duplicate || r.FirstOffset != 0 || r.LastOffset != 4 {
		t.Fatalf("retry of the first batch: %+v, %v; want a duplicate at 0..4", r, err)
	}
	if follower.LeaderEpoch() != 1 || follower.State() != Stopped {
		t.Fatalf("leader epoch %d, state %s", follower.LeaderEpoch(), follower.State())
	}
}

// TestSetMirrorOffsets: an offset-preserving mirror keeps the source's
// offsets, gaps included, and refuses a batch below its log end; under
// AssignOffsets the next mirrored batch takes the log's next offset.
func TestSetMirrorOffsets(t *testing.T) {
	p := mustOpen(t, Config{State: Mirroring})
	src := [16]byte{1}
	b := mkBatch(t, bspec{PID: 5, Records: 2})
	codec.Batch(b).SetBaseOffset(4)
	if r, err := p.AppendMirrored(b, src); err != nil || r.FirstOffset != 4 || p.LogEndOffset() != 6 {
		t.Fatalf("preserved: %+v, %v, log end %d; want offsets 4..5", r, err, p.LogEndOffset())
	}
	below := mkBatch(t, bspec{PID: 5, Seq: 2, Records: 2})
	codec.Batch(below).SetBaseOffset(5)
	if _, err := p.AppendMirrored(below, src); !errors.Is(err, ErrOffsetsOutOfOrder) {
		t.Fatalf("a batch below the log end: %v, want ErrOffsetsOutOfOrder", err)
	}
	p.SetMirrorOffsets(AssignOffsets)
	if r, err := p.AppendMirrored(below, src); err != nil || r.FirstOffset != 6 {
		t.Fatalf("assigned: %+v, %v; want first offset 6", r, err)
	}
}
