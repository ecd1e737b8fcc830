package appendpath

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// mirrorWithOpenTxn is a mirror holding: p5 txn data (open), p7 data.
func mirrorWithOpenTxn(t *testing.T, s pid.Strategy, fault func(StopStep) error) *Partition {
	t.Helper()
	p := mustOpen(t, Config{State: Mirroring, Strategy: s, Fault: fault, PSMOptions: nonNegOne})
	in := chunk(
		withOffsets(mkBatch(t, bspec{pid: 5, epoch: 3, seq: 0, txn: true, records: 2}), 0, 4),
		withOffsets(mkBatch(t, bspec{pid: 7, seq: 0}), 2, 4),
	)
	if _, err := p.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	if p.LastStableOffset() != 0 {
		t.Fatalf("LSO %d, want 0 (open txn)", p.LastStableOffset())
	}
	return p
}

func TestStopAbortVariant(t *testing.T) {
	for _, s := range []pid.Strategy{pid.Verbatim, pid.Negate, pid.Barrier} {
		t.Run(s.String(), func(t *testing.T) {
			p := mirrorWithOpenTxn(t, s, nil)
			if err := p.Stop(StopOptions{Variant: StopAbort}); err != nil {
				t.Fatal(err)
			}
			if p.State() != Stopped {
				t.Fatalf("state %s", p.State())
			}
			if p.LeaderEpoch() <= 4 {
				t.Fatalf("leader epoch %d not bumped past the log's 4", p.LeaderEpoch())
			}
			all := readAll(t, p)
			marker := codec.Batch(all[2])
			cr, err := marker.ControlRecord()
			wantPID := int64(5)
			if s == pid.Negate {
				wantPID = -7
			}
			if err != nil || cr.Type != codec.ControlAbort || marker.ProducerID() != wantPID || marker.ProducerEpoch() != 3 ||
				marker.PartitionLeaderEpoch() != p.LeaderEpoch() {
				t.Fatalf("marker: %v type %v pid %d epoch %d", err, cr.Type, marker.ProducerID(), marker.ProducerEpoch())
			}
			if m, err := cr.EndTxnMarker(); err != nil || m.CoordinatorEpoch != 0 {
				t.Fatalf("marker coordinator epoch %d (%v), want 0 for a producer that never saw one", m.CoordinatorEpoch, err)
			}
			if got := p.LastStableOffset(); got != p.LogEndOffset() {
				t.Fatalf("LSO %d, LEO %d: transaction not closed", got, p.LogEndOffset())
			}
			if got := p.AbortedTxns(nil, 0, 100); len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 3 {
				t.Fatalf("txn index %+v", got)
			}
			wantBatches := 3
			if s == pid.Barrier {
				wantBatches = 4
				cr, err := codec.Batch(all[3]).ControlRecord()
				if err != nil || cr.Type != codec.ControlMirrorPidReset {
					t.Fatalf("no barrier: %v %v", cr.Type, err)
				}
				if p.ProducerCount() != 0 {
					t.Fatalf("%d producers after the barrier", p.ProducerCount())
				}
			}
			if len(all) != wantBatches {
				t.Fatalf("%d batches, want %d", len(all), wantBatches)
			}
			cp := p.Checkpoint()
			if !cp.Valid || cp.Offset != 3 || cp.Epoch != 4 || cp.Source != srcA {
				t.Fatalf("checkpoint %+v", cp)
			}
			// Writable now; mirrored appends refused.
			if _, err := p.AppendClient(mkBatch(t, bspec{pid: 50, seq: 0})); err != nil {
				t.Fatal(err)
			}
			if _, err := p.AppendMirrored(withOffsets(mkBatch(t, bspec{pid: 1, seq: 0}), 100, 0), srcA); !errors.Is(err, ErrNotMirroring) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestStopTruncateVariant(t *testing.T) {
	p := mirrorWithOpenTxn(t, pid.Barrier, nil)
	if err := p.Stop(StopOptions{Variant: StopTruncate}); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, p)
	// Truncated to the LSO (0), then the barrier.
	if len(all) != 1 || codec.Batch(all[0]).BaseOffset() != 0 || !codec.Batch(all[0]).IsControl() {
		t.Fatalf("%d batches after truncate", len(all))
	}
	if len(p.OpenTxns(nil)) != 0 || p.LastStableOffset() != p.LogEndOffset() {
		t.Fatal("open transaction left")
	}
}

func TestStopFaultsLeaveStopping(t *testing.T) {
	for _, at := range []StopStep{StepFetcher, StepAbort, StepEpoch, StepMarker, StepPersist, StepBarrier} {
		t.Run(at.String(), func(t *testing.T) {
			failures := 2
			fault := func(s StopStep) error {
				if s == at && failures > 0 {
					failures--
					return errors.New("disk full")
				}
				return nil
			}
			p := mirrorWithOpenTxn(t, pid.Barrier, fault)
			for i := range 2 {
				err := p.Stop(StopOptions{})
				if !errors.Is(err, ErrFault) {
					t.Fatalf("attempt %d: %v", i, err)
				}
				if p.State() != Stopping {
					t.Fatalf("state %s after a failed step", p.State())
				}
				if _, err := p.AppendClient(mkBatch(t, bspec{pid: 100, seq: 0})); !errors.Is(err, ErrReadOnlyTopic) {
					t.Fatalf("writable in STOPPING: %v", err)
				}
			}
			if err := p.Stop(StopOptions{}); err != nil {
				t.Fatal(err)
			}
			if p.State() != Stopped {
				t.Fatalf("state %s", p.State())
			}
			// One ABORT marker and one barrier, however many attempts it took.
			var markers, barriers int
			for _, b := range readAll(t, p) {
				if !codec.Batch(b).IsControl() {
					continue
				}
				cr, _ := codec.Batch(b).ControlRecord()
				switch cr.Type {
				case codec.ControlAbort:
					markers++
				case codec.ControlMirrorPidReset:
					barriers++
				}
			}
			if markers != 1 || barriers != 1 {
				t.Fatalf("%d markers, %d barriers", markers, barriers)
			}
		})
	}
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
	if err := p.Stop(StopOptions{IgnoreMarkerFailure: true}); err != nil || p.State() != Stopped {
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
		if err := q.Stop(StopOptions{SkipBarrierWithoutSource: skip}); err != nil || q.State() != Stopped {
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

func TestStopStateErrors(t *testing.T) {
	p := mustOpen(t, Config{})
	if err := p.Stop(StopOptions{}); !errors.Is(err, ErrState) {
		t.Fatalf("Stop on a writable partition: %v", err)
	}
	if err := p.StartMirroring(); err != nil || p.State() != Mirroring {
		t.Fatal(err)
	}
	if err := p.Failback(0); !errors.Is(err, ErrState) {
		t.Fatalf("Failback while mirroring: %v", err)
	}
}

// TestFailback: B stops, writes locally, A (the old source) truncates to the
// divergence point and mirrors B's log, barrier included.
func TestFailback(t *testing.T) {
	a := mustOpen(t, Config{Strategy: pid.Barrier, PSMOptions: nonNegOne})
	for i := range 3 {
		if _, err := a.AppendClient(mkBatch(t, bspec{pid: 5, seq: int32(i)})); err != nil {
			t.Fatal(err)
		}
	}
	b := mustOpen(t, Config{State: Mirroring, Strategy: pid.Barrier, PSMOptions: nonNegOne})
	data, _ := a.Read(0, 1<<20)
	head := data[:len(data)/3*2] // B got offsets 0-1 only
	if _, err := b.AppendMirrored(head, srcA); err != nil {
		t.Fatal(err)
	}
	if err := b.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendClient(mkBatch(t, bspec{pid: 5, seq: 0})); err != nil { // B-local p5
		t.Fatal(err)
	}
	divergence := int64(2)
	if err := a.Failback(divergence); err != nil {
		t.Fatal(err)
	}
	if a.LogEndOffset() != 2 {
		t.Fatalf("A LEO %d after truncation", a.LogEndOffset())
	}
	rest, _ := b.Read(divergence, 1<<20)
	if _, err := a.AppendMirrored(rest, srcB); err != nil {
		t.Fatal(err)
	}
	ab, _ := a.Read(0, 1<<20)
	bb, _ := b.Read(0, 1<<20)
	if !bytes.Equal(ab, bb) {
		t.Fatal("logs differ after failback")
	}
	if !bytes.Equal(a.Snapshot(), b.Snapshot()) {
		t.Fatal("producer state differs after failback")
	}
}

func TestTruncateRebuildEqualsFreshRun(t *testing.T) {
	p := mustOpen(t, Config{SegmentBytes: 400})
	var batches [][]byte
	seq := map[int64]int32{}
	for i := range 30 {
		pd := int64(i % 4)
		b := mkBatch(t, bspec{pid: pd, seq: seq[pd], records: 2, txn: pd == 3})
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
		if !equalAborted(p.AbortedTxns(nil, 0, 1<<40), q.AbortedTxns(nil, 0, 1<<40)) {
			t.Fatalf("cut %d: txn index differs", cut)
		}
		if p.LastStableOffset() != q.LastStableOffset() {
			t.Fatalf("cut %d: LSO %d vs %d", cut, p.LastStableOffset(), q.LastStableOffset())
		}
	}
}

var _ = psm.Client

func TestStopAbortCarriesCoordinatorEpoch(t *testing.T) {
	p := mustOpen(t, Config{State: Mirroring})
	in := chunk(
		withOffsets(mkBatch(t, bspec{pid: 5, epoch: 2, seq: 0, txn: true}), 0, 0),
		withOffsets(mkMarker(5, 2, 4, false), 1, 0), // COMMIT, coordinator epoch 4
		withOffsets(mkBatch(t, bspec{pid: 5, epoch: 2, seq: 1, txn: true}), 2, 0),
	)
	if _, err := p.AppendMirrored(in, srcA); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	all := readAll(t, p)
	cr, err := codec.Batch(all[3]).ControlRecord()
	if err != nil {
		t.Fatal(err)
	}
	m, err := cr.EndTxnMarker()
	if err != nil || cr.Type != codec.ControlAbort || m.CoordinatorEpoch != 4 || codec.Batch(all[3]).ProducerEpoch() != 2 {
		t.Fatalf("marker %v coordinator epoch %d epoch %d", cr.Type, m.CoordinatorEpoch, codec.Batch(all[3]).ProducerEpoch())
	}
	if got := p.AbortedTxns(nil, 0, 10); len(got) != 1 || got[0].FirstOffset != 2 || got[0].LastOffset != 3 {
		t.Fatalf("txn index %+v", got)
	}
}

// TestStopTruncateCheckpoint: the checkpoint STOPPING persists after the
// truncate variant lies inside the truncated log (persisting the checkpoint
// runs after closing the transactions; docs/strategies.md), in memory and in the file a reopened partition reads;
// its epoch is that of the last batch left (-1 when none is).
func TestStopTruncateCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        func(t *testing.T) []byte
		wantOff   int64
		wantEpoch int32
	}{
		{"to-empty", func(t *testing.T) []byte { // open txn at 0: the LSO is 0
			return chunk(
				withOffsets(mkBatch(t, bspec{pid: 5, epoch: 3, seq: 0, txn: true, records: 2}), 0, 4),
				withOffsets(mkBatch(t, bspec{pid: 7, seq: 0}), 2, 4),
				withOffsets(mkBatch(t, bspec{pid: 7, seq: 1, records: 2}), 3, 5),
			)
		}, 0, -1},
		{"keeps-head", func(t *testing.T) []byte { // p7 at 0-1 stays, open txn at 2
			return chunk(
				withOffsets(mkBatch(t, bspec{pid: 7, seq: 0, records: 2}), 0, 4),
				withOffsets(mkBatch(t, bspec{pid: 5, epoch: 3, seq: 0, txn: true}), 2, 6),
				withOffsets(mkBatch(t, bspec{pid: 7, seq: 2}), 3, 6),
			)
		}, 2, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMemFS()
			cfg := Config{Dir: "/l", FS: fs, State: Mirroring, PSMOptions: nonNegOne}
			p := mustOpen(t, cfg)
			if _, err := p.AppendMirrored(tc.in(t), srcA); err != nil {
				t.Fatal(err)
			}
			if err := p.Stop(StopOptions{Variant: StopTruncate}); err != nil {
				t.Fatal(err)
			}
			if p.LogEndOffset() != tc.wantOff {
				t.Fatalf("LEO %d after truncate, want %d", p.LogEndOffset(), tc.wantOff)
			}
			want := MirrorCheckpoint{Offset: tc.wantOff, Epoch: tc.wantEpoch, Source: srcA, Valid: true}
			if cp := p.Checkpoint(); cp != want {
				t.Fatalf("checkpoint %+v, want %+v", cp, want)
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			cfg.State = Stopped
			q := mustOpen(t, cfg)
			if cp := q.Checkpoint(); cp != want {
				t.Fatalf("reopened checkpoint %+v, want %+v", cp, want)
			}
		})
	}
}

// TestCheckpointClampedOnRecovery: a checkpoint persisted (synced) ahead of
// log bytes that a power cut then loses is brought back inside the
// recovered log on Open, and rewritten.
func TestCheckpointClampedOnRecovery(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, State: Mirroring, PSMOptions: nonNegOne} // storage.SyncNever
	p := mustOpen(t, cfg)
	in := chunk(
		withOffsets(mkBatch(t, bspec{pid: 7, seq: 0, records: 2}), 0, 4),
		withOffsets(mkBatch(t, bspec{pid: 7, seq: 2}), 2, 6),
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
