package storage

import (
	"bytes"
	"errors"
	"slices"
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

// FuzzStageRolledMatchesRollFirst drives two memory logs and two file logs
// with the same appends, some of them rejected after staging, the fuzzer
// choosing sizes, rejections and the segment size: one of each stages a
// roll-due append with StageRolled and rolls after (the append path's fast
// path), the other rolls first and stages after (the reference). The logs
// must hold the same batches, segments and end offset after every step, and
// a rejected append must leave its log as it was.
func FuzzStageRolledMatchesRollFirst(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(0), []byte{0x81, 0x10, 0x91, 0x20, 0xff, 0x30, 0x31})
	f.Add(uint8(7), bytes.Repeat([]byte{0x40, 0xc1}, 20))
	f.Fuzz(func(t *testing.T, seg uint8, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		segBytes := int64(1024 + int(seg)*256)
		type pair struct{ staged, first *Log }
		var pairs []pair
		for _, file := range []bool{false, true} {
			var p pair
			for _, l := range []**Log{&p.staged, &p.first} {
				cfg := Config{SegmentBytes: segBytes}
				if file {
					cfg.FS, cfg.Dir = vfs.NewMemFS(), "/l"
				}
				var err error
				if *l, _, err = Open(cfg); err != nil {
					t.Fatal(err)
				}
			}
			pairs = append(pairs, p)
		}
		for i, op := range ops {
			reject := op&0x80 != 0
			raw := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1 + int(op&3), Value: 40 * int(op&0x7c)})
			for _, p := range pairs {
				b := testlog.WithOffsets(raw, p.staged.End(), 0)
				next := codec.Batch(b).NextOffset()
				before := p.staged.End()
				segs := p.staged.Segments()
				// The fast path: stage (into the next segment when a roll is
				// due), then roll only if the append is accepted.
				roll := p.staged.NeedsRoll(len(b))
				var dst []byte
				if roll {
					dst = p.staged.StageRolled(len(b))
				} else {
					dst = p.staged.Stage(len(b))
				}
				copy(dst, b)
				if !reject {
					if roll {
						if err := p.staged.Roll(); err != nil {
							t.Fatal(err)
						}
					}
					if err := p.staged.Commit(dst, next); err != nil {
						t.Fatalf("op %d: commit: %v", i, err)
					}
				} else if p.staged.End() != before || p.staged.Segments() != segs {
					t.Fatalf("op %d: a rejected append changed the log", i)
				}
				// The reference: roll first, then stage.
				if !reject {
					if p.first.NeedsRoll(len(b)) {
						if err := p.first.Roll(); err != nil {
							t.Fatal(err)
						}
					}
					d := p.first.Stage(len(b))
					copy(d, b)
					if err := p.first.Commit(d, next); err != nil {
						t.Fatal(err)
					}
				}
				if p.staged.End() != p.first.End() || p.staged.Segments() != p.first.Segments() {
					t.Fatalf("op %d: end %d/%d, segments %d/%d", i, p.staged.End(), p.first.End(), p.staged.Segments(), p.first.Segments())
				}
			}
		}
		for _, p := range pairs {
			for i := range p.staged.Segments() {
				if p.staged.SegmentSize(i) != p.first.SegmentSize(i) || p.staged.SegmentBase(i) != p.first.SegmentBase(i) {
					t.Fatalf("segment %d: size %d/%d, base %d/%d", i, p.staged.SegmentSize(i), p.first.SegmentSize(i), p.staged.SegmentBase(i), p.first.SegmentBase(i))
				}
			}
			var x, y [][]byte
			if err := p.staged.ForEach(0, func(b codec.Batch) error { x = append(x, bytes.Clone(b)); return nil }); err != nil {
				t.Fatal(err)
			}
			if err := p.first.ForEach(0, func(b codec.Batch) error { y = append(y, bytes.Clone(b)); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(x, y, bytes.Equal) {
				t.Fatalf("the logs hold different batches (%d and %d)", len(x), len(y))
			}
		}
	})
}

// CommitIndexed with the entries IndexDue's rule picks gives the offset
// index that Commit's walk gives, for chunks of batches of mixed sizes
// that cross the index interval anywhere; a file log ignores the entries
// and indexes as Commit does.
func TestCommitIndexedMatchesCommit(t *testing.T) {
	sizes := []int{20, 700, 1500, 90, 3000, 40, 2100, 2100, 10, 5000}
	for _, file := range []bool{false, true} {
		open := func() *Log {
			cfg := Config{SegmentBytes: 1 << 20}
			if file {
				cfg.FS, cfg.Dir = vfs.NewMemFS(), "/l"
			}
			l, _, err := Open(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		walked, collected := open(), open()
		for round := range 6 {
			var chunk []byte
			next := walked.End()
			for i := range 3 + round {
				b := testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1 + i%2,
					Value: sizes[(round+i)%len(sizes)]}), next, 0)
				next = codec.Batch(b).NextOffset()
				chunk = append(chunk, b...)
			}
			dst := walked.Stage(len(chunk))
			copy(dst, chunk)
			if err := walked.Commit(dst, next); err != nil {
				t.Fatal(err)
			}
			var idx []OffsetPosition
			due := collected.IndexDue()
			for pos := 0; pos < len(chunk); {
				b := codec.Batch(chunk[pos:])
				if int64(pos) > due {
					idx = append(idx, OffsetPosition{b.LastOffset(), int64(pos)})
					due = int64(pos) + IndexIntervalBytes
				}
				pos += int(b.BatchLength()) + codec.LogOverhead
			}
			if file && len(idx) != 0 {
				t.Fatal("a file log gave the caller entries to collect")
			}
			dst = collected.Stage(len(chunk))
			copy(dst, chunk)
			if err := collected.CommitIndexed(dst, next, idx); err != nil {
				t.Fatal(err)
			}
		}
		want, got := walked.OffsetIndex(0, nil), collected.OffsetIndex(0, nil)
		if len(want) < 3 || !slices.Equal(got, want) {
			t.Fatalf("file=%v: CommitIndexed index %v, Commit's %v", file, got, want)
		}
		if walked.End() != collected.End() || walked.SegmentSize(0) != collected.SegmentSize(0) {
			t.Fatalf("file=%v: end %d/%d, size %d/%d", file, walked.End(), collected.End(),
				walked.SegmentSize(0), collected.SegmentSize(0))
		}
	}
}
