package storage

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// appendRolled is appendBatch for an append that must roll, done as the
// append path does it: stage into the next segment (StageRolled), then roll,
// then commit.
func appendRolled(t *testing.T, l *Log, b []byte) {
	t.Helper()
	b = testlog.WithOffsets(b, l.End(), 0)
	if !l.NeedsRoll(len(b)) {
		t.Fatalf("append of %d bytes at size %d needs no roll", len(b), l.SegmentSize(l.Segments()-1))
	}
	dst := l.StageRolled(len(b))
	copy(dst, b)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(dst, codec.Batch(b).NextOffset()); err != nil {
		t.Fatal(err)
	}
}

// fillSegment appends batches of size bytes until the next one needs a roll.
func fillSegment(t *testing.T, l *Log, b []byte) {
	t.Helper()
	for !l.NeedsRoll(len(b)) {
		appendBatch(t, l, b)
	}
}

// StageRolled, then Roll, then Commit: the staged bytes are the new
// segment's first batch, in a memory log and a file log alike, and the two
// logs hold the same bytes as logs that rolled first and staged after.
func TestStageRolledThenRoll(t *testing.T) {
	b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 3, Value: 900})
	open := func(file bool) *Log {
		cfg := Config{SegmentBytes: int64(4 * len(b))}
		if file {
			cfg.FS, cfg.Dir = vfs.NewMemFS(), "/l"
		}
		l, _, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, file := range []bool{false, true} {
		staged, plain := open(file), open(file)
		for range 3 {
			fillSegment(t, staged, b)
			appendRolled(t, staged, b)
			fillSegment(t, plain, b)
			appendBatch(t, plain, b)
		}
		if staged.Segments() != 4 || staged.Segments() != plain.Segments() || staged.End() != plain.End() {
			t.Fatalf("file=%v: segments %d/%d, end %d/%d", file, staged.Segments(), plain.Segments(), staged.End(), plain.End())
		}
		x, errX := staged.Read(0, 1<<20)
		y, errY := plain.Read(0, 1<<20)
		for errX == nil && errY == nil && len(x) > 0 {
			if !bytes.Equal(x, y) {
				t.Fatalf("file=%v: the logs differ from offset %d", file, codec.Batch(x).BaseOffset())
			}
			next := codec.Batch(x).BaseOffset()
			for rest := x; len(rest) > 0; {
				bb, r, err := codec.Next(rest)
				if err != nil {
					t.Fatal(err)
				}
				next, rest = bb.NextOffset(), r
			}
			x, errX = staged.Read(next, 1<<20)
			y, errY = plain.Read(next, 1<<20)
		}
		if errX != nil || errY != nil || len(y) != 0 {
			t.Fatalf("file=%v: read %v %v, %d bytes left in the plain log", file, errX, errY, len(y))
		}
	}
}

// An append staged with StageRolled and then rejected (no Roll, no Commit)
// leaves the log as it was; appends that fit go on into the active segment,
// and the next roll takes the same buffer with the new bytes.
func TestStageRolledRejected(t *testing.T) {
	b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 3, Value: 900})
	l, _, err := Open(Config{SegmentBytes: int64(4*len(b) + 200)})
	if err != nil {
		t.Fatal(err)
	}
	fillSegment(t, l, b)
	segs, end, size := l.Segments(), l.End(), l.SegmentSize(l.Segments()-1)
	first := l.StageRolled(len(b))
	for i := range first {
		first[i] = 0xee // a rejected append's bytes
	}
	if l.Segments() != segs || l.End() != end || l.SegmentSize(segs-1) != size {
		t.Fatalf("StageRolled changed the log: segments %d, end %d, size %d", l.Segments(), l.End(), l.SegmentSize(segs-1))
	}
	small := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1, Value: 20})
	appendBatch(t, l, small) // fits the active segment: no roll
	if l.Segments() != segs {
		t.Fatalf("a fitting append rolled: %d segments", l.Segments())
	}
	b = testlog.WithOffsets(b, l.End(), 0)
	again := l.StageRolled(len(b))
	if unsafe.SliceData(again) != unsafe.SliceData(first) {
		t.Fatal("the second StageRolled did not reuse the pending buffer")
	}
	copy(again, b)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if err := l.Commit(again, codec.Batch(b).NextOffset()); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read(codec.Batch(b).BaseOffset(), 1<<20)
	if err != nil || !bytes.Equal(got, b) || l.Segments() != segs+1 {
		t.Fatalf("after the roll: %d segments, read %d bytes (%v), want the batch", l.Segments(), len(got), err)
	}
}

// Commit on a memory log refuses bytes that are not the staged ones, and
// changes nothing.
func TestCommitNotStaged(t *testing.T) {
	b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1, Value: 100})
	l, _, err := Open(Config{SegmentBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	appendBatch(t, l, b)
	end, size := l.End(), l.SegmentSize(0)
	other := testlog.WithOffsets(b, end, 0) // a copy of its own
	l.Stage(len(other))
	if err := l.Commit(other, codec.Batch(other).NextOffset()); !errors.Is(err, ErrNotStaged) {
		t.Fatalf("Commit of unstaged bytes: %v, want ErrNotStaged", err)
	}
	if l.End() != end || l.SegmentSize(0) != size {
		t.Fatalf("log changed: end %d size %d, want %d %d", l.End(), l.SegmentSize(0), end, size)
	}
}
