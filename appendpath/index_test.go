package appendpath

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
	"github.com/mirrorpath/mirrorpath/internal/testlog"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// segFiles is one segment's files as a MemFS holds them.
type segFiles struct {
	base            int64
	log, idx, tidx  []byte
	hasIdx, hasTidx bool
}

func readSegments(t testing.TB, fs *vfs.MemFS, dir string) []segFiles {
	t.Helper()
	names, _ := fs.ReadDir(dir)
	var out []segFiles
	for _, n := range names {
		base, ok := storage.ParseFileName(n, storage.LogSuffix)
		if !ok {
			continue
		}
		s := segFiles{base: base}
		s.log, _ = fs.ReadFile(path.Join(dir, n))
		var err error
		s.idx, err = fs.ReadFile(storage.FileName(dir, base, storage.IndexSuffix))
		s.hasIdx = err == nil
		s.tidx, err = fs.ReadFile(storage.FileName(dir, base, storage.TimeIndexSuffix))
		s.hasTidx = err == nil
		out = append(out, s)
	}
	return out
}

// checkAgainstModel requires every segment's index files to be exactly the
// model's (sealed for all but the last segment) and returns the entry count.
func checkAgainstModel(t testing.TB, fs *vfs.MemFS, dir string) (entries int) {
	t.Helper()
	segs := readSegments(t, fs, dir)
	for i, s := range segs {
		idx, tidx := testlog.RefIndexes(t, s.log, s.base, i < len(segs)-1)
		if !s.hasIdx || !s.hasTidx {
			t.Fatalf("segment %d: index files missing", s.base)
		}
		if !bytes.Equal(s.idx, idx) {
			t.Fatalf("segment %d (%d bytes): .index\n got %x\nwant %x", s.base, len(s.log), s.idx, idx)
		}
		if !bytes.Equal(s.tidx, tidx) {
			t.Fatalf("segment %d (%d bytes): .timeindex\n got %x\nwant %x", s.base, len(s.log), s.tidx, tidx)
		}
		x, err := storage.ParseOffsetIndex(s.idx, s.base)
		if err != nil {
			t.Fatal(err)
		}
		tx, err := storage.ParseTimeIndex(s.tidx, s.base)
		if err != nil {
			t.Fatal(err)
		}
		if n := storage.VerifyOffsetIndex(x, s.log, nil) + storage.VerifyTimeIndex(tx, s.log, nil); n != 0 {
			t.Fatalf("segment %d: %d entries disagree with the log", s.base, n)
		}
		entries += x.Len()
	}
	return entries
}

// replicaWorkload appends n random batches as a follower: sizes from 70 B
// to ~4.6 KiB, timestamps that jump back and forth (sometimes -1), offsets
// with occasional gaps. It returns the batches as written.
func replicaWorkload(t testing.TB, p *Partition, rng *rand.Rand, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for range n {
		ts := 1700000000000 + int64(rng.IntN(100000))
		if rng.IntN(20) == 0 {
			ts = -1
		}
		b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 1 + rng.IntN(3), Value: 1 + rng.IntN(1500), TS: ts})
		base := p.LogEndOffset()
		if rng.IntN(10) == 0 {
			base += int64(rng.IntN(50))
		}
		b = testlog.WithOffsets(b, base, 3)
		if _, err := p.AppendReplica(b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// TestIndexEntriesMatchLogWalk: whatever the fsync policy, after Sync every
// segment's .index and .timeindex are the model's over its .log, and a
// memory log with the same appends has the same offset entries in memory.
func TestIndexEntriesMatchLogWalk(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 11))
		fs := vfs.NewMemFS()
		segBytes := int64(8<<10 + rng.IntN(40<<10))
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: segBytes, Sync: storage.SyncPolicy(seed % 3)})
		mem := mustOpen(t, Config{SegmentBytes: segBytes})
		for _, b := range replicaWorkload(t, p, rng, 200) {
			if _, err := mem.AppendReplica(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Sync(); err != nil {
			t.Fatal(err)
		}
		n := checkAgainstModel(t, fs, "/l")
		if p.log.Segments() < 3 || n < 2*p.log.Segments() {
			t.Fatalf("seed %d: %d segments, %d entries: the workload does not exercise the index", seed, p.log.Segments(), n)
		}
		if mem.log.Segments() != p.log.Segments() {
			t.Fatalf("seed %d: memory log has %d segments, file log %d", seed, mem.log.Segments(), p.log.Segments())
		}
		for i := range p.log.Segments() {
			if !slices.Equal(p.log.OffsetIndex(i, nil), mem.log.OffsetIndex(i, nil)) {
				t.Fatalf("seed %d segment %d: memory offset index differs", seed, i)
			}
		}
		p.Close()
	}
}

// TestIndexFileBytes pins both formats on a tiny log: batches of 2070 bytes,
// so every second batch passes the 4096-byte interval (the first never
// does), with timestamps that go down as well as up.
func TestIndexFileBytes(t *testing.T) {
	fs := vfs.NewMemFS()
	p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 6 * 2070})
	for i, ts := range []int64{1000, 3000, 2000, 5000, 4000, 6000, 7000} {
		b := mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Value: 2000, TS: ts})
		if len(b) != 2070 {
			t.Fatalf("batch of %d bytes, the pinned bytes assume 2070", len(b))
		}
		if _, err := p.AppendReplica(testlog.WithOffsets(b, int64(10*i), 0)); err != nil { // offsets 0, 10, 20, …
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	segs := readSegments(t, fs, "/l")
	if len(segs) != 2 || segs[1].base != 51 {
		t.Fatalf("%d segments", len(segs))
	}
	want := testhex.Unhex(t, `
		00000014 0000102c   # offset 20 at position 4140 (batch 2: 4140 bytes since the start > 4096)
		00000028 00002058   # offset 40 at position 8280 (batch 4)
	`)
	if !bytes.Equal(segs[0].idx, want) {
		t.Fatalf(".index\n got %x\nwant %x", segs[0].idx, want)
	}
	want = testhex.Unhex(t, `
		0000000000000bb8 0000000a   # at batch 2: largest so far 3000, batch 1 (offset 10)
		0000000000001388 0000001e   # at batch 4: 5000, batch 3 (offset 30)
		0000000000001770 00000032   # roll seal: 6000, batch 5 (offset 50)
	`)
	if !bytes.Equal(segs[0].tidx, want) {
		t.Fatalf(".timeindex\n got %x\nwant %x", segs[0].tidx, want)
	}
	if len(segs[1].idx) != 0 || len(segs[1].tidx) != 0 {
		t.Fatalf("active segment of one batch: %x %x", segs[1].idx, segs[1].tidx)
	}
	x, _ := storage.ParseOffsetIndex(segs[0].idx, 0)
	if got := x.Lookup(39); got != (storage.OffsetPosition{Offset: 20, Position: 4140}) {
		t.Fatalf("lookup 39: %+v", got)
	}
	if got := x.Lookup(19); got != (storage.OffsetPosition{}) {
		t.Fatalf("lookup 19: %+v", got)
	}
}

func TestIndexCleanReopenLoads(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	fs, ref := vfs.NewMemFS(), vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 30 << 10}
	p := mustOpen(t, cfg)
	r := mustOpen(t, Config{Dir: "/l", FS: ref, SegmentBytes: 30 << 10})
	feed := func(p *Partition, bs [][]byte) {
		for _, b := range bs {
			if _, err := p.AppendReplica(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := replicaWorkload(t, p, rng, 120)
	feed(r, first)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	before := readSegments(t, fs, "/l")
	q := mustOpen(t, cfg)
	if rec := q.Recovery(); rec.IndexesRebuilt != 0 || rec.IndexReason != nil || rec.TruncatedAt != -1 {
		t.Fatalf("clean reopen: %+v", rec)
	}
	after := readSegments(t, fs, "/l")
	for i := range before {
		if !bytes.Equal(before[i].idx, after[i].idx) || !bytes.Equal(before[i].tidx, after[i].tidx) {
			t.Fatalf("segment %d: index files changed by a clean reopen", before[i].base)
		}
	}
	// Appends go on as if the log had never stopped.
	feed(r, replicaWorkload(t, q, rng, 120))
	if err := q.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	got, want := readSegments(t, fs, "/l"), readSegments(t, ref, "/l")
	if len(got) != len(want) || len(got) < 4 {
		t.Fatalf("%d segments vs %d", len(got), len(want))
	}
	for i := range got {
		if got[i].base != want[i].base || !bytes.Equal(got[i].idx, want[i].idx) || !bytes.Equal(got[i].tidx, want[i].tidx) {
			t.Fatalf("segment %d: indexes differ from a log that never closed", got[i].base)
		}
	}
	checkAgainstModel(t, fs, "/l")
}

// TestIndexCrashRecovery: crash a file log at random points (unsynced bytes
// of every file partly lost, partly garbled, indexes included), reopen, and
// require the indexes to be the model's over the recovered log, equal to an
// uncrashed log's over the same batches, and lookups by offset to find
// every batch.
func TestIndexCrashRecovery(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	rebuilds, clean := 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 13))
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/l", FS: fs, SegmentBytes: int64(4<<10 + rng.IntN(40<<10)),
			Sync: storage.SyncPolicy(rng.IntN(3)), SyncInterval: 1}
		p := mustOpen(t, cfg)
		var written [][]byte
		for range 5 + rng.IntN(10) {
			written = append(written, replicaWorkload(t, p, rng, 1+rng.IntN(20))...)
			if rng.IntN(3) == 0 {
				if err := p.Sync(); err != nil {
					t.Fatal(err)
				}
			}
		}
		crashed := fs.Crash(rng, crcGarble(rng))
		cfg.FS = crashed
		q := mustOpen(t, cfg)
		rec := q.Recovery()
		if rec.IndexesRebuilt > 0 {
			rebuilds++
		} else {
			clean++
		}
		if err := q.Sync(); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, q)
		for i := range got {
			if !bytes.Equal(got[i], written[i]) {
				t.Fatalf("seed %d: batch %d is not the one written", seed, i)
			}
		}
		checkAgainstModel(t, crashed, "/l")
		// An uncrashed log fed the recovered batches has the same indexes
		// (up to the roll seal: the crash may have kept a segment a roll
		// had already sealed as the last one, or an empty one after it).
		refFS := vfs.NewMemFS()
		r := mustOpen(t, Config{Dir: "/l", FS: refFS, SegmentBytes: cfg.SegmentBytes})
		for _, b := range got {
			if _, err := r.AppendReplica(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Sync(); err != nil {
			t.Fatal(err)
		}
		want := readSegments(t, refFS, "/l")
		for _, s := range readSegments(t, crashed, "/l") {
			i := slices.IndexFunc(want, func(w segFiles) bool { return w.base == s.base })
			if i < 0 {
				if len(s.log) != 0 {
					t.Fatalf("seed %d: segment %d not in the uncrashed log", seed, s.base)
				}
				continue
			}
			w := want[i]
			if !bytes.Equal(s.log, w.log) || !bytes.Equal(s.idx, w.idx) {
				t.Fatalf("seed %d segment %d: .log or .index differs from the uncrashed log's", seed, s.base)
			}
			short, long := s.tidx, w.tidx
			if len(short) > len(long) {
				short, long = long, short
			}
			if !bytes.HasPrefix(long, short) || len(long)-len(short) > storage.TimeIndexEntrySize {
				t.Fatalf("seed %d segment %d: .timeindex %x vs uncrashed %x", seed, s.base, s.tidx, w.tidx)
			}
		}
		// Lookups through the rebuilt index find every batch by every offset.
		for _, b := range got {
			for _, o := range []int64{codec.Batch(b).BaseOffset(), codec.Batch(b).LastOffset()} {
				out, err := q.Read(o, 1)
				if err != nil || len(out) < len(b) || !bytes.Equal(out[:len(b)], b) {
					t.Fatalf("seed %d: Read(%d) = %d bytes, %v", seed, o, len(out), err)
				}
			}
		}
		// Append, close, reopen: clean.
		replicaWorkload(t, q, rng, 5)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		q2 := mustOpen(t, cfg)
		if r := q2.Recovery(); r.IndexesRebuilt != 0 || r.TruncatedAt != -1 {
			t.Fatalf("seed %d: reopen after recovery: %+v", seed, r)
		}
		checkAgainstModel(t, crashed, "/l")
	}
	if rebuilds == 0 || clean == 0 {
		t.Fatalf("%d recoveries rebuilt indexes, %d did not: the seeds do not cover both", rebuilds, clean)
	}
}

// closedLog writes a closed file log of several segments on a MemFS.
func closedLog(t *testing.T, seed uint64) (*vfs.MemFS, Config) {
	t.Helper()
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 24 << 10}
	p := mustOpen(t, cfg)
	replicaWorkload(t, p, rand.New(rand.NewPCG(seed, 1)), 100)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, cfg
}

// TestIndexDefectsRebuilt: each kind of damage to an index file is found on
// open, reported, and repaired to the model.
func TestIndexDefectsRebuilt(t *testing.T) {
	name := func(base int64, suffix string) string { return storage.FileName("/l", base, suffix) }
	cases := []struct {
		name   string
		damage func(fs *vfs.MemFS, segs []segFiles) bool // false: not applicable to this log
		want   error                                     // nil: loaded as is
	}{
		{"missing .index", func(fs *vfs.MemFS, s []segFiles) bool { return fs.Remove(name(s[0].base, storage.IndexSuffix)) == nil }, storage.ErrIndexMissing},
		{"missing .timeindex", func(fs *vfs.MemFS, s []segFiles) bool {
			return fs.Remove(name(s[1].base, storage.TimeIndexSuffix)) == nil
		}, storage.ErrIndexMissing},
		{"size", func(fs *vfs.MemFS, s []segFiles) bool {
			fs.WriteFile(name(s[0].base, storage.IndexSuffix), append(s[0].idx, 0), true)
			return true
		}, storage.ErrIndexSize},
		{"order", func(fs *vfs.MemFS, s []segFiles) bool {
			d := bytes.Clone(s[0].idx)
			copy(d[8:16], d[0:8])
			fs.WriteFile(name(s[0].base, storage.IndexSuffix), d, true)
			return true
		}, storage.ErrIndexOrder},
		{"below base", func(fs *vfs.MemFS, s []segFiles) bool {
			d := bytes.Clone(s[1].tidx)
			binary.BigEndian.PutUint32(d[8:], 0xffffffff)
			fs.WriteFile(name(s[1].base, storage.TimeIndexSuffix), d, true)
			return true
		}, storage.ErrIndexRange},
		{"wrong position", func(fs *vfs.MemFS, s []segFiles) bool {
			d := bytes.Clone(s[0].idx)
			binary.BigEndian.PutUint32(d[len(d)-4:], binary.BigEndian.Uint32(d[len(d)-4:])+1)
			fs.WriteFile(name(s[0].base, storage.IndexSuffix), d, true)
			return true
		}, storage.ErrIndexMismatch},
		{"entries lost", func(fs *vfs.MemFS, s []segFiles) bool {
			fs.WriteFile(name(s[0].base, storage.IndexSuffix), s[0].idx[:8], true)
			return true
		}, storage.ErrIndexMismatch},
		{"inactive segment unsealed", func(fs *vfs.MemFS, s []segFiles) bool {
			fs.WriteFile(name(s[0].base, storage.TimeIndexSuffix), s[0].tidx[:len(s[0].tidx)-storage.TimeIndexEntrySize], true)
			return true
		}, storage.ErrIndexMismatch},
		{"log cut under its index", func(fs *vfs.MemFS, s []segFiles) bool {
			last := s[len(s)-1]
			fs.WriteFile(name(last.base, storage.LogSuffix), last.log[:len(last.log)/2], true)
			return true
		}, storage.ErrIndexMismatch},
		{"active segment sealed (Kafka's close)", func(fs *vfs.MemFS, s []segFiles) bool {
			last := s[len(s)-1]
			_, sealed := testlog.RefIndexes(t, last.log, last.base, true)
			if len(sealed) == len(last.tidx) {
				return false // no seal entry to add
			}
			fs.WriteFile(name(last.base, storage.TimeIndexSuffix), sealed, true)
			return true
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fs *vfs.MemFS
			var cfg Config
			for seed := uint64(3); ; seed++ {
				if seed == 30 {
					t.Fatal("no seed gives a log this damage applies to")
				}
				fs, cfg = closedLog(t, seed)
				segs := readSegments(t, fs, "/l")
				if len(segs) < 3 || len(segs[0].idx) < 16 || len(segs[1].tidx) < 12 {
					t.Fatalf("%d segments: too small a log", len(segs))
				}
				if tc.damage(fs, segs) {
					break
				}
			}
			p := mustOpen(t, cfg)
			rec := p.Recovery()
			if tc.want == nil {
				if rec.IndexesRebuilt != 0 {
					t.Fatalf("recovery %+v", rec)
				}
			} else if rec.IndexesRebuilt == 0 || !errors.Is(rec.IndexReason, tc.want) || !errors.Is(rec.IndexReason, storage.ErrCorruptIndex) {
				t.Fatalf("recovery %+v, want reason %v", rec, tc.want)
			}
			if err := p.Sync(); err != nil {
				t.Fatal(err)
			}
			checkAgainstModel(t, fs, "/l")
			for _, b := range readAll(t, p) {
				if out, err := p.Read(codec.Batch(b).LastOffset(), 1); err != nil || !bytes.Equal(out, b) {
					t.Fatalf("Read(%d): %v", codec.Batch(b).LastOffset(), err)
				}
			}
		})
	}
}

// TestIndexTruncate: truncations (failback, follower) at random offsets,
// with appends in between, leave the index files the model's; so do stray
// index files from a segment that is gone.
func TestIndexTruncate(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 17))
		fs := vfs.NewMemFS()
		p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: int64(10<<10 + rng.IntN(30<<10))})
		replicaWorkload(t, p, rng, 150)
		for range 6 {
			if err := p.Sync(); err != nil { // index files written before the cut
				t.Fatal(err)
			}
			start, end := p.LogStartOffset(), p.LogEndOffset()
			at := start + rng.Int64N(end-start+1)
			if rng.IntN(4) == 0 {
				at = start // nothing survives
			}
			if err := p.Truncate(at); err != nil {
				t.Fatal(err)
			}
			if err := p.Sync(); err != nil {
				t.Fatal(err)
			}
			checkAgainstModel(t, fs, "/l")
			for i := range p.log.Segments() {
				x, size := p.log.OffsetIndex(i, nil), p.log.SegmentSize(i)
				if n := len(x); n > 0 && x[n-1].Position >= size {
					t.Fatalf("seed %d: index entry at %d past segment end %d", seed, x[n-1].Position, size)
				}
			}
			replicaWorkload(t, p, rng, rng.IntN(40))
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		fs.WriteFile(storage.FileName("/l", 1<<40, storage.IndexSuffix), []byte{1, 2, 3}, true)
		q := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1 << 20})
		if r := q.Recovery(); r.IndexesRebuilt != 0 {
			t.Fatalf("seed %d: reopen after truncations: %+v", seed, r)
		}
		if fs.Size(storage.FileName("/l", 1<<40, storage.IndexSuffix)) >= 0 {
			t.Fatal("stray index file kept")
		}
		q.Close()
	}
}

// TestIndexSkipsUnrepresentableOffsets: a replicated batch more than 2^31
// offsets past the segment base gets no index entry (it cannot be written
// in 4 bytes), and the log stays readable and reopens clean.
func TestIndexSkipsUnrepresentableOffsets(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs}
	p := mustOpen(t, cfg)
	next := int64(0)
	for i := range 12 {
		if i == 6 {
			next += 1 << 32
		}
		b := testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Value: 1500}), next, 0)
		if _, err := p.AppendReplica(b); err != nil {
			t.Fatal(err)
		}
		next++
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	segs := readSegments(t, fs, "/l")
	x, err := storage.ParseOffsetIndex(segs[0].idx, 0)
	if err != nil || x.Len() == 0 {
		t.Fatalf("%d entries, %v", x.Len(), err)
	}
	if last := x.Entry(x.Len() - 1); last.Offset >= 1<<32 {
		t.Fatalf("entry %+v cannot be represented", last)
	}
	q := mustOpen(t, cfg)
	if r := q.Recovery(); r.IndexesRebuilt != 0 {
		t.Fatalf("%+v", r)
	}
	if out, err := q.Read(next-1, 1); err != nil || codec.Batch(out).BaseOffset() != next-1 {
		t.Fatalf("read past the gap: %v", err)
	}
}

// TestIndexAppendAllocs: a file-backed log (MemFS) allocates nothing per
// append once warm, whether index entries wait for a sync or are written by
// one at every append.
func TestIndexAppendAllocs(t *testing.T) {
	for _, pol := range []storage.SyncPolicy{storage.SyncNever, storage.SyncAlways} {
		t.Run("sync="+pol.String(), func(t *testing.T) {
			in := benchBatch(t, 10, 88)
			fs := vfs.NewMemFS()
			p := mustOpen(t, Config{Dir: "/l", FS: fs, SegmentBytes: 1 << 30, Sync: pol})
			appendOne := clientAppender(t, p, in, 10)
			for range 3000 {
				appendOne()
			}
			entries := len(p.log.OffsetIndex(p.log.Segments()-1, nil))
			if allocs := testing.AllocsPerRun(3000, appendOne); allocs != 0 {
				t.Fatalf("%v allocs per append", allocs)
			}
			if len(p.log.OffsetIndex(p.log.Segments()-1, nil)) <= entries {
				t.Fatal("the measured appends made no index entry")
			}
			if pol == storage.SyncAlways && fs.Size(storage.FileName("/l", 0, storage.IndexSuffix)) != int64(8*len(p.log.OffsetIndex(p.log.Segments()-1, nil))) {
				t.Fatal("sync=always left index entries unwritten")
			}
		})
	}
}
