package appendpath

import (
	"slices"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// A rebuild deletes every snapshot at or below the log start offset before
// it loads one, as ProducerStateManager#truncateAndReload does
// (snapshot.offset <= logStartOffset): a snapshot at the log start holds
// producers whose batches are gone with the deleted segments, and Kafka
// forgets them.
func TestTruncateDropsSnapshotAtLogStart(t *testing.T) {
	fs := vfs.NewMemFS()
	p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1, RetainSegments: 1})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7})); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 8})); err != nil {
		t.Fatal(err)
	}
	if got := p.LogStartOffset(); got != 1 {
		t.Fatalf("log start %d, want 1 (segment 0 deleted)", got)
	}
	if err := p.Truncate(1); err != nil {
		t.Fatal(err)
	}
	if got := p.snaps.Offsets(); len(got) != 1 || got[0] != 1 {
		// the rebuild's own snapshot at the log end is the only one
		t.Fatalf("snapshots %v after truncation, want [1]", got)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: 5})); err != nil {
		t.Fatalf("pid 7 seq 5 after truncation: %v; Kafka forgot pid 7 and accepts it", err)
	}
}

// UnifiedLog#hasLateTransaction through the partition's clock.
func TestPartitionHasLateTransaction(t *testing.T) {
	now := testNow()
	p := mustOpen(t, Config{Now: func() time.Time { return now }})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Txn: true})); err != nil {
		t.Fatal(err)
	}
	ts := time.UnixMilli(1700000000000) // the batch's timestamp (mkBatch)
	bound := time.Duration(psm.DefaultMaxTransactionTimeoutMs+psm.LateTransactionBufferMs) * time.Millisecond
	now = ts.Add(bound)
	if p.HasLateTransaction() {
		t.Fatal("late at exactly the bound")
	}
	now = now.Add(time.Millisecond)
	if !p.HasLateTransaction() {
		t.Fatal("not late past the bound")
	}
	if _, err := p.AppendCoordinator(mkMarker(7, 0, 0, false)); err != nil {
		t.Fatal(err)
	}
	if p.HasLateTransaction() {
		t.Fatal("late after the commit")
	}
}

// LogLoader#load removes the stray snapshots (ProducerStateManager
// #removeStraySnapshots with the segment base offsets) before the rebuild:
// a snapshot at no segment's base goes, the clean shutdown's at the log end
// stays and is the one loaded.
func TestOpenRemovesStraySnapshots(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs}
	p := mustOpen(t, cfg)
	for seq := range int32(3) {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: seq})); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	clean, err := fs.ReadFile(storage.FileName("/l", 3, storage.SnapshotSuffix))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(storage.FileName("/l", 1, storage.SnapshotSuffix), clean, true); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, cfg)
	defer p.Close()
	if got := p.snaps.Offsets(); !slices.Equal(got, []int64{3}) {
		t.Fatalf("snapshots after open %v, want [3] (1 is at no segment base and not the newest)", got)
	}
	if r := p.Recovery(); r.Snapshot != 3 {
		t.Fatalf("loaded snapshot %d, want 3", r.Snapshot)
	}
}

// ProducerStateManager#takeSnapshot writes only when the map end offset
// moved past the last snapshot, which is the log start when a load finds
// none: an empty log has no snapshot after Open or Close, and the first
// one is at the first batch's end.
func TestNoSnapshotOfEmptyLog(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs}
	p := mustOpen(t, cfg)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = mustOpen(t, cfg)
	if got := p.snaps.Offsets(); len(got) != 0 {
		t.Fatalf("snapshots %v of an empty log, want none", got)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7})); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := p.snaps.Offsets(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("snapshots %v, want [1]", got)
	}
}
