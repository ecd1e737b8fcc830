package storage

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// appendBatch stages and commits one batch at the log end, rolling first
// when it does not fit, as the append path does.
func appendBatch(t *testing.T, l *Log, b []byte) {
	t.Helper()
	b = testlog.WithOffsets(b, l.End(), 0)
	if l.NeedsRoll(len(b)) {
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	dst := l.Stage(len(b))
	copy(dst, b)
	if err := l.Commit(dst, codec.Batch(b).NextOffset()); err != nil {
		t.Fatal(err)
	}
}

// A memory log and a file log given the same appends hold the same batches,
// segments and indexes; Read, ForEach, Truncate and a reopen agree with them.
func TestLogMemoryAndFileAgree(t *testing.T) {
	fs := vfs.NewMemFS()
	mem, _, err := Open(Config{SegmentBytes: 20 << 10})
	if err != nil {
		t.Fatal(err)
	}
	file, rec, err := Open(Config{FS: fs, Dir: "/l", SegmentBytes: 20 << 10, Sync: SyncAlways})
	if err != nil || rec.TruncatedAt != -1 || rec.Segments != 1 {
		t.Fatalf("open: %+v %v", rec, err)
	}
	for i := range 60 {
		b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1 + i%4, Value: 700 + 97*(i%5), TS: int64(1000 * i)})
		appendBatch(t, mem, b)
		appendBatch(t, file, b)
		if err := file.MaybeSync(); err != nil {
			t.Fatal(err)
		}
	}
	if mem.Segments() < 3 || mem.Segments() != file.Segments() || mem.End() != file.End() || file.Synced() != file.End() {
		t.Fatalf("segments %d/%d, end %d/%d, synced %d", mem.Segments(), file.Segments(), mem.End(), file.End(), file.Synced())
	}
	for i := range mem.Segments() {
		m, f := mem.OffsetIndex(i, nil), file.OffsetIndex(i, nil)
		if (len(m) == 0 && i < mem.Segments()-1) || len(m) != len(f) || (len(m) > 0 && m[len(m)-1] != f[len(f)-1]) {
			t.Fatalf("segment %d: index %v vs %v", i, m, f)
		}
	}
	mid := mem.End() / 2
	a, errA := mem.Read(mid, 1<<20)
	b, errB := file.Read(mid, 1<<20)
	if errA != nil || errB != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("Read: %d/%d bytes, %v %v", len(a), len(b), errA, errB)
	}
	if first, _, _ := codec.Next(a); first.BaseOffset() > mid || first.NextOffset() <= mid {
		t.Fatalf("Read(%d) starts with batch [%d, %d)", mid, first.BaseOffset(), first.NextOffset())
	}
	if err := mem.Truncate(mid); err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(mid); err != nil {
		t.Fatal(err)
	}
	if mem.End() != mid || file.End() != mid {
		t.Fatalf("truncate: end %d/%d, want %d", mem.End(), file.End(), mid)
	}
	n := 0
	if err := file.ForEach(0, func(codec.Batch) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("ForEach: %d batches, %v", n, err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	// Tear the last batch: the reopen cuts it and reports where.
	var last string
	names, _ := fs.ReadDir("/l") // sorted: the last non-empty .log is the active one's
	for _, nm := range names {
		if o, ok := ParseFileName(nm, LogSuffix); ok && fs.Size(FileName("/l", o, LogSuffix)) > 0 {
			last = FileName("/l", o, LogSuffix)
		}
	}
	data, _ := fs.ReadFile(last)
	fs.WriteFile(last, data[:len(data)-7], true)
	re, rec, err := Open(Config{FS: fs, Dir: "/l", SegmentBytes: 20 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if rec.TruncatedAt < 0 || !errors.Is(rec.Reason, codec.ErrPartial) || re.End() >= mid || re.End() <= re.Start() {
		t.Fatalf("reopen: %+v, end %d", rec, re.End())
	}
	if _, err := re.Read(-1, 100); !errors.Is(err, kafkaerr.OffsetOutOfRange) {
		t.Fatalf("read below the start: %v", err)
	}
	re.Close()
}

// A truncation inside a batch leaves the log end offset past the last batch
// (Kafka's LocalLog#truncateTo does too); a segment rolled there starts past
// the end of the one before, and a reopen keeps it: only offsets that go
// backwards are a defect, not a gap.
func TestReopenKeepsSegmentAfterTruncationGap(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{FS: fs, Dir: "/l"}
	l, _, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	appendBatch(t, l, mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 2})) // 0-1
	appendBatch(t, l, mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 3})) // 2-4
	// The batch 2-4 goes; the end is 3.
	if err := l.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendBatch(t, l, mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1})) // 3
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, rec, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.End() != 4 || r.Segments() != 2 || rec.TruncatedAt != -1 {
		t.Fatalf("reopened: end %d, %d segments, recovery %+v", r.End(), r.Segments(), rec)
	}
}
