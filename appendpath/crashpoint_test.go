package appendpath

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// TestCrashAtEveryPoint runs bounded random histories of a file-backed mirror
// partition on vfs.MemFS (mirrored appends, STOPPING with a step failing and
// retried, client appends, transaction markers from the coordinator and from
// WriteTxnMarkers, truncations and failbacks, segment rolls with their
// snapshots, clean restarts, syncs under every sync policy, the mirror
// checkpoint) and cuts the power before every
// write, truncation, sync, directory sync, creation, removal and rename, and
// after the last. Each point gives crashPointImages images (the crash model
// of vfs: no kinder than POSIX); each must reopen, and then:
//
//   - its log is a prefix of the log before or after the operation cut short,
//     holding at least every batch synced before it (acknowledged) that the
//     operation did not truncate (the log end offset may not come back: a
//     truncation inside a batch leaves it past the last batch, and the
//     files do not record it, in Kafka either);
//   - producer state equals a replay of that log from its start with every
//     snapshot removed (a snapshot never disagrees with the log it names);
//   - the mirror checkpoint lies inside the log.
//
// It logs the count of histories, points and images; -tags e2e runs more.
func TestCrashAtEveryPoint(t *testing.T) {
	var points, images int
	for _, policy := range []storage.SyncPolicy{storage.SyncNever, storage.SyncAlways, storage.SyncInterval} {
		for seed := range uint64(crashPointHistories) {
			pt, im := crashHistory(t, policy, seed)
			points += pt
			images += im
		}
	}
	t.Logf("%d histories × 3 sync policies: %d crash points, %d images recovered", crashPointHistories, points, images)
}

// crashRun is one history: the partition under test, its MemFS, the images
// taken during the operation running and what the log held before it.
type crashRun struct {
	t       *testing.T
	rng     *rand.Rand
	fs      *vfs.MemFS
	cfg     Config
	p       *Partition
	state   MirrorState // reopen state of an image
	before  [][]byte
	synced  int64
	pending []*vfs.MemFS
	points  int
	images  int
	refused int // appends refused (a marker for no open transaction, …)
	clock   time.Time
	op      string
}

func crashHistory(t *testing.T, policy storage.SyncPolicy, seed uint64) (int, int) {
	r := &crashRun{t: t, rng: rand.New(rand.NewPCG(seed, uint64(policy))), fs: vfs.NewMemFS(),
		clock: time.UnixMilli(1700000001000)}
	r.cfg = Config{Dir: "/l", FS: r.fs, SegmentBytes: int64(300 + r.rng.IntN(900)), Sync: policy,
		SyncInterval: 200 * time.Millisecond, Now: r.now, State: Mirroring, Strategy: pid.Barrier,
		PSMOptions: nonNegOne}
	r.state = Mirroring
	r.p = mustOpen(t, r.cfg)
	r.fs.OnChange(r.point)
	defer r.fs.OnChange(nil)

	seq := map[int64]int32{}
	open := map[int64]bool{}
	pidBase := int64(1) // fresh producers after a truncation
	epoch := int32(1)
	for step := range crashPointSteps {
		r.before, r.synced = readAll(t, r.p), r.p.SyncedOffset()
		var err error
		refusable := true
		switch st := r.p.State(); {
		case st == Mirroring || st == Stopping && r.rng.IntN(2) == 0:
			if st == Mirroring && r.rng.IntN(8) > 0 {
				pd := pidBase + int64(r.rng.IntN(3))
				txn := pd == pidBase && (open[pd] || r.rng.IntN(2) == 0)
				n := 1 + r.rng.IntN(3)
				r.op = fmt.Sprintf("mirror pid %d", pd)
				b := testlog.WithOffsets(mkBatch(t, bspec{PID: pd, Seq: seq[pd], Records: n, Txn: txn, Value: r.rng.IntN(60) + 1}),
					r.p.LogEndOffset(), epoch)
				if _, err = r.p.AppendMirrored(b, srcA); err == nil {
					seq[pd] += int32(n)
					open[pd] = open[pd] || txn
				}
				break
			}
			opt := StopOptions{Variant: StopVariant(r.rng.IntN(2))}
			if r.rng.IntN(2) == 0 {
				fail := StopStep(r.rng.IntN(int(StepAllocator) + 1))
				opt.Hazards.Fault = func(s StopStep) error {
					if s == fail {
						return errors.New("injected")
					}
					return nil
				}
			}
			r.op, refusable = fmt.Sprintf("stop %v", opt.Variant), false
			if err = r.p.Stop(opt); opt.Hazards.Fault != nil {
				err = nil // a failed step leaves STOPPING, retried later
			}
			if r.p.State() == Stopped {
				pidBase += 100
				clear(open)
			}
		case st == Stopped:
			switch k := r.rng.IntN(10); {
			case k < 6:
				pd := pidBase + int64(r.rng.IntN(4))
				if open[pd] && r.rng.IntN(3) == 0 {
					r.op = fmt.Sprintf("marker pid %d", pd)
					m := mkMarker(pd, 0, 0, r.rng.IntN(2) == 0)
					if r.rng.IntN(2) == 0 {
						_, err = r.p.AppendCoordinator(m)
					} else {
						_, err = r.p.AppendTxnMarker(m, psm.TV1) // WriteTxnMarkers stating its version
					}
					if err == nil {
						open[pd] = false
					}
					break
				}
				txn := pd >= pidBase+2 && (open[pd] || r.rng.IntN(2) == 0)
				n := 1 + r.rng.IntN(3)
				r.op = fmt.Sprintf("client pid %d", pd)
				if _, err = r.p.AppendClient(mkBatch(t, bspec{PID: pd, Seq: seq[pd], Records: n, Txn: txn, Value: r.rng.IntN(60) + 1})); err == nil {
					seq[pd] += int32(n)
					open[pd] = open[pd] || txn
				}
			case k < 8 && r.p.LogEndOffset() > 1:
				to := 1 + r.rng.Int64N(r.p.LogEndOffset()-1)
				r.op, refusable = fmt.Sprintf("truncate %d", to), false
				err = r.p.Truncate(to)
				pidBase += 100
				clear(open)
			default:
				r.op, refusable = "failback", false
				err = r.p.Failback(r.p.LogEndOffset() - r.rng.Int64N(min(3, r.p.LogEndOffset())+1))
				epoch++
				pidBase += 100
				clear(open)
			}
		default: // FAILED: nothing more to do
			r.op, refusable = "sync", false
			err = r.p.Sync()
		}
		// A refused append changes nothing; anything else must succeed.
		if err != nil && !refusable {
			t.Fatalf("policy %s seed %d step %d %s: %v", policy, seed, step, r.op, err)
		}
		if err != nil {
			r.refused++
		}
		r.check()
		switch k := r.rng.IntN(12); {
		case k == 0:
			r.before, r.synced, r.op = readAll(t, r.p), r.p.SyncedOffset(), "sync"
			if err := r.p.Sync(); err != nil {
				t.Fatal(err)
			}
			r.check()
		case k == 1 && r.p.State() != Stopping:
			r.before, r.synced, r.op = readAll(t, r.p), r.p.SyncedOffset(), "close"
			if err := r.p.Close(); err != nil {
				t.Fatal(err)
			}
			r.check()
			r.state = r.p.State()
			cfg := r.cfg
			cfg.State = r.state
			r.p = mustOpen(t, cfg)
		}
		if st := r.p.State(); st != Stopping {
			r.state = st
		}
	}
	r.before, r.synced, r.op = readAll(t, r.p), r.p.SyncedOffset(), "end"
	r.point()
	r.check()
	if r.refused > crashPointSteps/4 {
		t.Errorf("policy %s seed %d: %d of %d operations refused: the history tests little", policy, seed, r.refused, crashPointSteps)
	}
	return r.points, r.images
}

func (r *crashRun) now() time.Time {
	r.clock = r.clock.Add(50 * time.Millisecond)
	return r.clock
}

// point is the MemFS hook: a power cut now.
func (r *crashRun) point() {
	r.points++
	for range crashPointImages {
		r.pending = append(r.pending, r.fs.Crash(r.rng, crcGarble(r.rng)))
	}
}

// check recovers the images taken during the operation that just ended.
func (r *crashRun) check() {
	t := r.t
	t.Helper()
	after := readAll(t, r.p)
	// What was synced before, except what the operation truncated: the
	// log before and after share no batch past its truncation point.
	floor := min(r.synced, commonEnd(r.before, after))
	for _, img := range r.pending {
		r.images++
		cfg := r.cfg
		cfg.FS, cfg.State = img.Crash(r.rng, nil), r.state
		q, err := Open(cfg)
		if err != nil {
			t.Fatalf("%s: image %d does not reopen: %v", r.op, r.images, err)
		}
		got := readAll(t, q)
		if !isPrefix(got, r.before) && !isPrefix(got, after) {
			t.Fatalf("%s: image %d recovered %d batches, a prefix of neither the %d before nor the %d after (recovery %+v)",
				r.op, r.images, len(got), len(r.before), len(after), q.Recovery())
		}
		if need := batchesBelow(after, floor); len(got) < need {
			t.Fatalf("%s: image %d recovered %d batches, not the %d below offset %d synced (policy %s; recovery %+v; files %v)",
				r.op, r.images, len(got), need, floor, r.cfg.Sync, q.Recovery(), dirSizes(img))
		}
		if cp := q.Checkpoint(); cp.Valid && cp.Offset > q.LogEndOffset() {
			t.Fatalf("%s: image %d: checkpoint %+v past the log end %d", r.op, r.images, cp, q.LogEndOffset())
		}
		// The same image with no snapshot: producer state from the log alone.
		bare := img.Crash(r.rng, nil)
		names, _ := bare.ReadDir("/l")
		for _, n := range names {
			if strings.HasSuffix(n, storage.SnapshotSuffix) {
				bare.Remove("/l/" + n)
			}
		}
		cfg.FS = bare
		ref, err := Open(cfg)
		if err != nil {
			t.Fatalf("%s: image %d without snapshots does not reopen: %v", r.op, r.images, err)
		}
		if !bytes.Equal(q.Snapshot(), ref.Snapshot()) || q.LastStableOffset() != ref.LastStableOffset() {
			t.Fatalf("%s: image %d: producer state (snapshot %d, replayed %d) differs from a replay of its log",
				r.op, r.images, q.Recovery().Snapshot, q.Recovery().Replayed)
		}
		for _, b := range got {
			if codec.Batch(b).VerifyCRC() != nil {
				t.Fatalf("%s: image %d exposes a batch with a bad CRC", r.op, r.images)
			}
		}
	}
	r.pending = r.pending[:0]
}

// batchesBelow counts the batches of log that end at or below offset.
func batchesBelow(log [][]byte, offset int64) int {
	n := 0
	for n < len(log) && codec.Batch(log[n]).NextOffset() <= offset {
		n++
	}
	return n
}

// commonEnd is the offset after the batches a and b start with alike.
func commonEnd(a, b [][]byte) int64 {
	end := int64(0)
	for i := 0; i < len(a) && i < len(b) && bytes.Equal(a[i], b[i]); i++ {
		end = codec.Batch(a[i]).NextOffset()
	}
	return end
}

// isPrefix reports whether got is a prefix of all, batch for batch.
func isPrefix(got, all [][]byte) bool {
	if len(got) > len(all) {
		return false
	}
	for i := range got {
		if !bytes.Equal(got[i], all[i]) {
			return false
		}
	}
	return true
}

// dirSizes lists the files of an image with their sizes (failure output).
func dirSizes(fs *vfs.MemFS) []string {
	names, _ := fs.ReadDir("/l")
	for i, n := range names {
		names[i] = fmt.Sprintf("%s:%d", n, fs.Size("/l/"+n))
	}
	return names
}

// TestCrashStoppingReopens cuts the power at every point of a STOPPING
// sequence of each variant (checkpoint, ABORT markers or truncation,
// barrier), a first attempt failing at each step and the retry: every image
// reopens, with a whole checkpoint inside its log, or none.
func TestCrashStoppingReopens(t *testing.T) {
	points, images := 0, 0
	for _, variant := range []StopVariant{StopAbort, StopTruncate} {
		for fail := StopStep(0); fail <= StepAllocator; fail++ {
			fs := vfs.NewMemFS()
			cfg := Config{Dir: "/l", FS: fs, State: Mirroring, Strategy: pid.Barrier, PSMOptions: nonNegOne, Now: testNow}
			p := mustOpen(t, cfg)
			if _, err := p.AppendMirrored(chunk(
				testlog.WithOffsets(mkBatch(t, bspec{PID: 5, Seq: 0, Txn: true, Records: 2}), 0, 3),
				testlog.WithOffsets(mkBatch(t, bspec{PID: 6, Seq: 0}), 2, 3)), srcA); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(variant), uint64(fail)))
			var imgs []*vfs.MemFS
			fs.OnChange(func() {
				points++
				for range 4 {
					imgs = append(imgs, fs.Crash(rng, nil))
				}
			})
			p.Stop(StopOptions{Variant: variant, Hazards: StopHazards{Fault: func(s StopStep) error {
				if s == fail {
					return errors.New("injected")
				}
				return nil
			}}})
			if err := p.Stop(StopOptions{Variant: variant}); err != nil && p.State() != Stopped {
				t.Fatalf("%v, failing %v: retry: %v", variant, fail, err)
			}
			fs.OnChange(nil)
			for _, img := range imgs {
				images++
				cfg.FS = img
				q, err := Open(cfg)
				if err != nil {
					t.Fatalf("%v, failing %v: image %d does not reopen: %v", variant, fail, images, err)
				}
				if cp := q.Checkpoint(); cp.Valid && (cp.Offset > q.LogEndOffset() || cp.Source != srcA) {
					t.Fatalf("%v, failing %v: image %d: checkpoint %+v, log end %d", variant, fail, images, cp, q.LogEndOffset())
				}
			}
		}
	}
	t.Logf("%d crash points, %d images", points, images)
}

// A producer snapshot torn at any length (a write in place cut short, as
// Kafka's can be) is deleted on open and producer state rebuilt from the
// log: the same state as with the snapshot whole
// (ProducerStateManager#loadFromSnapshot on a CorruptSnapshotException).
func TestOpenRebuildsFromTornSnapshot(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, Now: testNow}
	p := mustOpen(t, cfg)
	for i := range 3 {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: int64(1 + i%2), Seq: int32(i / 2), Txn: i == 2})); err != nil {
			t.Fatal(err)
		}
	}
	want := p.Snapshot()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	name := storage.FileName("/l", 3, storage.SnapshotSuffix)
	whole, err := fs.ReadFile(name)
	if err != nil || !bytes.Equal(whole, want) {
		t.Fatalf("snapshot at the log end: %v", err)
	}
	for n := range len(whole) {
		img := fs.Crash(rand.New(rand.NewPCG(0, 0)), nil) // a copy: everything is synced
		if err := img.WriteFile(name, whole[:n], true); err != nil {
			t.Fatal(err)
		}
		c := cfg
		c.FS = img
		q, err := Open(c)
		if err != nil {
			t.Fatalf("snapshot torn at %d bytes: %v", n, err)
		}
		if r := q.Recovery(); r.Snapshot != -1 || r.Replayed != 3 || !bytes.Equal(q.Snapshot(), want) {
			t.Fatalf("snapshot torn at %d bytes: recovery %+v, state equal %v", n, r, bytes.Equal(q.Snapshot(), want))
		}
		if got, err := img.ReadFile(name); err == nil && !bytes.Equal(got, whole) {
			t.Fatalf("snapshot torn at %d bytes: a torn file left in place (%d bytes)", n, len(got))
		}
	}
}
