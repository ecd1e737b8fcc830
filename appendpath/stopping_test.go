package appendpath

import (
	"errors"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// twoOpenTxnsChunk is a mirrored chunk of offsets 0-3: transactional batches
// of PIDs 5 (two records) and 9, then a plain batch of PID 7.
func twoOpenTxnsChunk(t *testing.T) []byte {
	t.Helper()
	return chunk(
		testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Epoch: 3, Seq: 0, Txn: true, Records: 2}), 0, 4),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 9, Epoch: 1, Seq: 0, Txn: true}), 2, 4),
		testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0}), 3, 4),
	)
}

// mirrorWithTwoOpenTxns is a barrier mirror holding open transactions of
// PIDs 5 and 9, then a batch of PID 7.
func mirrorWithTwoOpenTxns(t *testing.T, fault func(StopStep) error) *Partition {
	t.Helper()
	p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Barrier, Hazards: Hazards{Fault: fault}, PSMOptions: nonNegOne})
	if _, err := p.AppendMirrored(twoOpenTxnsChunk(t), srcA); err != nil {
		t.Fatal(err)
	}
	if n := len(p.OpenTxns(nil)); n != 2 {
		t.Fatalf("%d open transactions, want 2", n)
	}
	return p
}

// controlCounts counts the ABORT markers per PID and the barriers in p's log.
func controlCounts(t *testing.T, p *Partition) (aborts map[int64]int, barriers int) {
	t.Helper()
	aborts = map[int64]int{}
	for b, err := range p.Batches(0) {
		if err != nil {
			t.Fatal(err)
		}
		if !b.IsControl() {
			continue
		}
		cr, err := b.ControlRecord()
		if err != nil {
			t.Fatal(err)
		}
		switch cr.Type {
		case codec.ControlAbort:
			aborts[b.ProducerID()]++
		case codec.ControlMirrorPidReset:
			barriers++
		}
	}
	return aborts, barriers
}

// failOnce fails step s on its first n calls.
func failOnce(s StopStep, n int) func(StopStep) error {
	return func(x StopStep) error {
		if x == s && n > 0 {
			n--
			return errors.New("disk full")
		}
		return nil
	}
}

// TestStopStepErrors: what a failing step leaves under each StepErrors
// policy, and that no retry writes a second ABORT for a transaction: the
// first attempt fails at the second marker (PID 9's) or after both (the
// checkpoint), the retry closes only what is still open.
func TestStopStepErrors(t *testing.T) {
	for _, at := range []StopStep{StepMarker, StepPersist, StepBarrier} {
		for _, pol := range []StepErrors{StepErrorsRetry, StepErrorsStuck, StepErrorsFailed} {
			name := at.String() + "/" + pol.String()
			// The marker fault fails PID 9's marker, the second one.
			fault := failOnce(at, 1)
			if at == StepMarker {
				calls := 0
				fault = func(s StopStep) error {
					if s == StepMarker {
						if calls++; calls == 2 {
							return errors.New("disk full")
						}
					}
					return nil
				}
			}
			p := mirrorWithTwoOpenTxns(t, fault)
			opt := StopOptions{Hazards: StopHazards{StepErrors: pol}}
			err := p.Stop(opt)
			if !errors.Is(err, ErrFault) {
				t.Fatalf("%s: first attempt %v, want ErrFault", name, err)
			}
			want := Stopping
			if pol == StepErrorsFailed {
				want = Failed
			}
			if p.State() != want {
				t.Fatalf("%s: state %s after the failure, want %s", name, p.State(), want)
			}
			if _, err := p.AppendClient(mkBatch(t, bspec{PID: 11, Seq: 0})); !errors.Is(err, kafkaerr.ReadOnlyTopic) {
				t.Fatalf("%s: client append after the failure: %v", name, err)
			}
			err = p.Stop(opt)
			if pol == StepErrorsStuck && stuckStep(at) {
				if !errors.Is(err, ErrStopStuck) || p.State() != Stopping {
					t.Fatalf("%s: retry %v, state %s; want ErrStopStuck, STOPPING", name, err, p.State())
				}
			} else if err != nil || p.State() != Stopped {
				t.Fatalf("%s: retry %v, state %s", name, err, p.State())
			}
			aborts, barriers := controlCounts(t, p)
			for _, pd := range []int64{5, 9} {
				n := aborts[pd]
				if pol == StepErrorsStuck && at == StepMarker && pd == 9 {
					if n != 0 {
						t.Fatalf("%s: %d ABORTs of PID 9, want none (stuck)", name, n)
					}
					continue
				}
				if n != 1 {
					t.Fatalf("%s: %d ABORTs of PID %d, want exactly one", name, n, pd)
				}
			}
			if wantB := b2i(p.State() == Stopped); barriers != wantB {
				t.Fatalf("%s: %d barriers, want %d", name, barriers, wantB)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestStopUnknownSource: a barrier partition that has mirrored nothing
// since it opened knows no source cluster id; each UnknownSource policy.
func TestStopUnknownSource(t *testing.T) {
	for _, u := range []UnknownSource{SourceWrite, SourceSkip, SourceRetry, SourceFail} {
		p := mustOpen(t, Config{Strategy: pid.Barrier})
		if err := p.StartMirroring(); err != nil {
			t.Fatal(err)
		}
		opt := StopOptions{Hazards: StopHazards{UnknownSource: u}}
		for attempt := range 2 {
			err := p.Stop(opt)
			_, barriers := controlCounts(t, p)
			switch u {
			case SourceWrite, SourceSkip:
				if attempt == 1 {
					break // STOPPED: a second Stop is ErrState
				}
				if err != nil || p.State() != Stopped || barriers != b2i(u == SourceWrite) {
					t.Fatalf("%s: %v, state %s, %d barriers", u, err, p.State(), barriers)
				}
			default:
				want := Stopping
				if u == SourceFail {
					want = Failed
				}
				if !errors.Is(err, ErrUnknownSource) || p.State() != want || barriers != 0 {
					t.Fatalf("%s attempt %d: %v, state %s, %d barriers", u, attempt, err, p.State(), barriers)
				}
			}
		}
	}
	// A partition that knows its source writes the barrier under every policy.
	for _, u := range []UnknownSource{SourceSkip, SourceRetry, SourceFail} {
		p := mirrorWithTwoOpenTxns(t, nil)
		if err := p.Stop(StopOptions{Hazards: StopHazards{UnknownSource: u}}); err != nil || p.State() != Stopped {
			t.Fatalf("%s with a source: %v, state %s", u, err, p.State())
		}
		if _, b := controlCounts(t, p); b != 1 {
			t.Fatalf("%s with a source: %d barriers", u, b)
		}
	}
}

// TestStopEmptyPartition: under HangWhenEmpty a partition whose log holds
// no batch never leaves STOPPING; by default it stops (with its barrier).
func TestStopEmptyPartition(t *testing.T) {
	for _, hang := range []bool{false, true} {
		p := mustOpen(t, Config{Strategy: pid.Barrier})
		if err := p.StartMirroring(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			err := p.Stop(StopOptions{Hazards: StopHazards{HangWhenEmpty: hang, StepErrors: StepErrorsFailed}})
			if !hang {
				if err != nil || p.State() != Stopped {
					t.Fatalf("empty: %v, state %s", err, p.State())
				}
				break
			}
			if !errors.Is(err, ErrNoLeaderEpoch) || p.State() != Stopping || p.LogEndOffset() != 0 {
				t.Fatalf("hang: %v, state %s, log end %d", err, p.State(), p.LogEndOffset())
			}
		}
	}
	// A partition with a batch is not empty.
	p := mirrorWithTwoOpenTxns(t, nil)
	if err := p.Stop(StopOptions{Hazards: StopHazards{HangWhenEmpty: true}}); err != nil || p.State() != Stopped {
		t.Fatalf("non-empty under HangWhenEmpty: %v, state %s", err, p.State())
	}
}

// TestStopBarrierNoSource: the barrier's value with and without
// SourceClusterId; both clear producer state.
func TestStopBarrierNoSource(t *testing.T) {
	for _, absent := range []bool{false, true} {
		p := mirrorWithTwoOpenTxns(t, nil)
		if err := p.Stop(StopOptions{Hazards: StopHazards{BarrierNoSource: absent}}); err != nil {
			t.Fatal(err)
		}
		if n := p.ProducerCount(); n != 0 {
			t.Fatalf("absent=%v: %d producers after the barrier", absent, n)
		}
		var got *codec.MirrorPidReset
		for b, err := range p.Batches(0) {
			if err != nil {
				t.Fatal(err)
			}
			if cr, err := b.ControlRecord(); err == nil && cr.Type == codec.ControlMirrorPidReset {
				m, err := codec.ParseMirrorPidReset(cr.Value)
				if err != nil {
					t.Fatal(err)
				}
				got = &m
			}
		}
		if got == nil || got.SourceAbsent != absent || (!absent && got.SourceClusterID != pid.FormatClusterID(srcA)) {
			t.Fatalf("absent=%v: barrier %+v", absent, got)
		}
	}
}

// TestFailTerminal: Fail moves the partition to FAILED for good.
func TestFailTerminal(t *testing.T) {
	p := mirrorWithTwoOpenTxns(t, nil)
	p.Fail()
	if err := p.Stop(StopOptions{}); !errors.Is(err, ErrTerminal) || p.State() != Failed {
		t.Fatalf("Stop after Fail: %v, state %s", err, p.State())
	}
	if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 1}), 0, 4), srcA); !errors.Is(err, kafkaerr.MirrorPartitionFailed) {
		t.Fatalf("mirrored append after Fail: %v", err)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 11, Seq: 0})); !errors.Is(err, kafkaerr.ReadOnlyTopic) {
		t.Fatalf("client append after Fail: %v", err)
	}
}

// TestRecoveryIgnoresBarrier: a replay at Open that meets the STOPPING
// barrier clears the pre-barrier producers, unless RecoveryIgnoresBarrier
// (the prototype's segment recovery), which brings them back.
func TestRecoveryIgnoresBarrier(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, State: Mirroring, Strategy: pid.Barrier, PSMOptions: nonNegOne,
			Hazards: Hazards{RecoveryIgnoresBarrier: ignore}}
		p := mustOpen(t, cfg)
		if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0, Records: 2}), 0, 4), srcA); err != nil {
			t.Fatal(err)
		}
		if err := p.Stop(StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Producer(7); ok {
			t.Fatalf("ignore=%v: PID 7 survives the barrier", ignore)
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		// No snapshot left: Open replays the log from its start.
		removeSnapshots(t, fs, "/l")
		cfg.State = Stopped
		q := mustOpen(t, cfg)
		if rec, want := q.Recovery(), 2-b2i(ignore); rec.Replayed != want {
			t.Fatalf("ignore=%v: replayed %d batches, want %d", ignore, rec.Replayed, want)
		}
		if _, ok := q.Producer(7); ok != ignore {
			t.Fatalf("ignore=%v: PID 7 present after recovery = %v", ignore, ok)
		}

	}
}

// removeSnapshots deletes every producer snapshot file in dir, so that the
// next Open rebuilds producer state from the log alone.
func removeSnapshots(t *testing.T, fs *vfs.MemFS, dir string) {
	t.Helper()
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, ".snapshot") {
			if err := fs.Remove(dir + "/" + n); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestFailOnSourceChange: once a checkpoint names a source, a mirrored
// append from another cluster moves the partition to FAILED for good under
// FailOnSourceChange, and is a plain append (fan-in) without it; the source
// the checkpoint names is always accepted.
func TestFailOnSourceChange(t *testing.T) {
	srcB := srcA
	srcB[0] ^= 0xff
	for _, fail := range []bool{false, true} {
		p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Barrier, PSMOptions: nonNegOne, Hazards: Hazards{FailOnSourceChange: fail}})
		if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0}), 0, 4), srcB); err != nil {
			t.Fatalf("fail=%v: before any checkpoint: %v", fail, err)
		}
		if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 1}), 1, 4), srcA); err != nil {
			t.Fatalf("fail=%v: before any checkpoint: %v", fail, err)
		}
		if err := p.Stop(StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := p.StartMirroring(); err != nil {
			t.Fatal(err)
		}
		if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 8, Seq: 0}), 3, 4), srcA); err != nil {
			t.Fatalf("fail=%v: the checkpoint's source: %v", fail, err)
		}
		end := p.LogEndOffset()
		_, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 9, Seq: 0}), 4, 4), srcB)
		if !fail {
			if err != nil || p.LogEndOffset() != end+1 {
				t.Fatalf("accept: %v, log end %d", err, p.LogEndOffset())
			}
			continue
		}
		if !errors.Is(err, ErrSourceMismatch) || !errors.Is(err, kafkaerr.MirrorPartitionFailed) || p.State() != Failed || p.LogEndOffset() != end {
			t.Fatalf("fail: %v, state %s, log end %d (want %d)", err, p.State(), p.LogEndOffset(), end)
		}
		if err := p.Stop(StopOptions{}); !errors.Is(err, ErrTerminal) {
			t.Fatalf("fail: Stop after the mismatch: %v", err)
		}
	}
}

// TestFailOnSourceChangeNoSource: a partition that stops before any
// mirrored append since it opened persists a checkpoint that names no
// cluster, and the first mirrored append after it, from any cluster, is no
// source change; the cluster the checkpoint names once a stop knew one is
// held to again.
func TestFailOnSourceChangeNoSource(t *testing.T) {
	srcB := srcA
	srcB[0] ^= 0xff
	p := mustOpen(t, Config{State: Mirroring, Strategy: pid.Verbatim, PSMOptions: nonNegOne, Hazards: Hazards{FailOnSourceChange: true}})
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if cp := p.Checkpoint(); !cp.Valid || cp.Source != ([16]byte{}) {
		t.Fatalf("checkpoint of a stop that knew no source: %+v", cp)
	}
	if err := p.StartMirroring(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0}), 0, 4), srcA); err != nil {
		t.Fatalf("first mirrored append after a source-less checkpoint: %v (state %s)", err, p.State())
	}
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.StartMirroring(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 8, Seq: 0}), 1, 4), srcB); !errors.Is(err, ErrSourceMismatch) {
		t.Fatalf("append from another cluster than the checkpoint's: %v", err)
	}
}

// TestStopBarrierSurvivesCrash: STOPPING syncs the log after its barrier,
// before the partition takes local writes, so a power cut after STOPPED
// keeps the barrier with the mirrored batches below it and the recovered
// partition holds no entry of the mirrored PID: the cluster's own PID 7
// meets nothing.
func TestStopBarrierSurvivesCrash(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, State: Mirroring, Strategy: pid.Barrier, PSMOptions: nonNegOne}
	p := mustOpen(t, cfg)
	if _, err := p.AppendMirrored(testlog.WithOffsets(mkBatch(t, bspec{PID: 7, Seq: 0, Records: 2}), 0, 4), srcA); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(StopOptions{}); err != nil {
		t.Fatal(err)
	}
	end := p.LogEndOffset()
	cfg.FS, cfg.State = crash(fs), Stopped
	q := mustOpen(t, cfg)
	if q.LogEndOffset() != end {
		t.Fatalf("the crash cut the log to %d, STOPPING left it at %d", q.LogEndOffset(), end)
	}
	if _, ok := q.Producer(7); ok {
		t.Fatal("PID 7 has an entry after the crash: its barrier was lost")
	}
}
