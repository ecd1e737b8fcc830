package appendpath

import (
	"math/rand/v2"
	"testing"

	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// Producer-state corner cases that go through the log: retention, restarts
// and crashes (psm/corners_test.go has the rules; scenarios/70-… to 75-…
// the whole broker).

// crash is a power cut that keeps only what was synced.
func crash(fs *vfs.MemFS) *vfs.MemFS {
	return fs.Crash(rand.New(rand.NewPCG(1, 2)), func(_ string, unsynced []byte) {
		for i := range unsynced {
			unsynced[i] ^= 0xff
		}
	})
}

// Retention past a producer's last batch keeps its producer state
// (ProducerStateManager#onLogStartOffsetIncremented touches no producer): a
// retry of the deleted batch is a duplicate acknowledged at its original
// offsets, below the log start, and nothing is written. After a clean
// restart the log-end snapshot holds the producer; after a crash the newest
// snapshot above the log start does (ProducerStateManager#truncateAndReload
// deletes only those at or below it), so the retry is still a duplicate.
func TestRetentionPastLastBatchKeepsDedup(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 1, RetainSegments: 2}
	p := mustOpen(t, cfg)
	retry := mkBatch(t, bspec{PID: 7, Records: 5})
	if r, err := p.AppendClient(retry); err != nil || r.FirstOffset != 0 {
		t.Fatalf("first append %+v %v", r, err)
	}
	for seq := range int32(3) { // offsets 5, 6, 7: each rolls, the oldest segments go
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 8, Seq: seq})); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.LogStartOffset(); got != 6 {
		t.Fatalf("log start %d, want 6", got)
	}
	check := func(p *Partition, when string) {
		t.Helper()
		leo := p.LogEndOffset()
		r, err := p.AppendClient(retry)
		if err != nil || !r.Duplicate || r.FirstOffset != 0 || r.LastOffset != 4 {
			t.Fatalf("%s: retry of the deleted batch: %+v %v, want a duplicate at 0-4", when, r, err)
		}
		if p.LogEndOffset() != leo {
			t.Fatalf("%s: the duplicate was written", when)
		}
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: 9})); err == nil {
			t.Fatalf("%s: sequence 9 after 4 accepted: pid 7's entry is gone", when)
		}
	}
	check(p, "after retention")
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	crashCfg := cfg
	crashCfg.FS = crash(fs)
	q := mustOpen(t, crashCfg)
	defer q.Close()
	if r := q.Recovery(); r.Snapshot <= q.LogStartOffset() {
		t.Fatalf("recovery loaded snapshot %d, at or below the log start %d", r.Snapshot, q.LogStartOffset())
	}
	check(q, "after a crash")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, cfg)
	defer p.Close()
	check(p, "after a clean restart")
}

// A snapshot taken inside an open transaction (here at a segment roll), then
// the COMMIT marker, then a crash that loses every later snapshot: recovery
// loads the one with the open transaction and replays the marker, which
// closes it; the LSO is the high watermark again.
func TestSnapshotInOpenTxnCommitCrash(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 1}
	p := mustOpen(t, cfg)
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Txn: true, Records: 2})); err != nil {
		t.Fatal(err)
	}
	// Rolls at 2 and at 3: the snapshots there hold pid 7's open transaction.
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 8})); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendCoordinator(mkMarker(7, 0, 0, false)); err != nil { // 3
		t.Fatal(err)
	}
	if err := p.Sync(); err != nil {
		t.Fatal(err)
	}
	if lso, leo := p.LastStableOffset(), p.LogEndOffset(); lso != leo {
		t.Fatalf("LSO %d after the commit, want %d", lso, leo)
	}
	cfg.FS = crash(fs)
	q := mustOpen(t, cfg)
	defer q.Close()
	if r := q.Recovery(); r.Snapshot != 3 {
		t.Fatalf("recovery from snapshot %d, want 3, taken at the roll before the marker", r.Snapshot)
	}
	if open := q.OpenTxns(nil); len(open) != 0 {
		t.Fatalf("open transactions after recovery %+v", open)
	}
	if lso, leo := q.LastStableOffset(), q.LogEndOffset(); leo != 4 || lso != leo {
		t.Fatalf("after recovery LSO %d LEO %d, want 4 and 4", lso, leo)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
