package storage

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// BenchmarkStageCommit is the log's share of one append: NeedsRoll, Stage,
// the copy into the staged bytes, Commit and MaybeSync, for a memory log
// and a file log on vfs.MemFS (SyncNever), with retention recycling the
// segments. A memory log allocates nothing once its buffers have grown
// (TestStageCommitAllocs).
func BenchmarkStageCommit(b *testing.B) {
	for _, log := range []string{"memory", "file"} {
		for _, size := range []struct {
			name  string
			value int
		}{{"100B", 30}, {"16KiB", 16 << 10}} {
			b.Run("log="+log+"/batch="+size.name, func(b *testing.B) {
				l := openBenchLog(b, log == "file")
				batch := mkBatch(b, bspec{PID: 7, Epoch: 0, Seq: 0, Records: 1, Value: size.value})
				b.SetBytes(int64(len(batch)))
				b.ReportAllocs()
				for b.Loop() {
					stageCommit(b, l, batch)
				}
			})
		}
	}
}

func openBenchLog(tb testing.TB, file bool) *Log {
	cfg := Config{SegmentBytes: 1 << 20, RetainSegments: 2}
	if file {
		cfg.FS, cfg.Dir = vfs.NewMemFS(), "/l"
	}
	l, _, err := Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// stageCommit appends batch at the log end as the append path does (the
// batch's own offsets are left as they are: the log reads only its framing
// and last offset).
func stageCommit(tb testing.TB, l *Log, batch []byte) {
	if l.NeedsRoll(len(batch)) {
		if err := l.Roll(); err != nil {
			tb.Fatal(err)
		}
	}
	dst := l.Stage(len(batch))
	copy(dst, batch)
	if err := l.Commit(dst, l.End()+int64(codec.Batch(batch).LastOffsetDelta())+1); err != nil {
		tb.Fatal(err)
	}
	if err := l.MaybeSync(); err != nil {
		tb.Fatal(err)
	}
}

// A memory log's Stage and Commit allocate nothing once the segments'
// buffers have grown and retention recycles them.
func TestStageCommitAllocs(t *testing.T) {
	l := openBenchLog(t, false)
	batch := mkBatch(t, bspec{PID: 7, Epoch: 0, Seq: 0, Records: 1, Value: 1000})
	for range 4 * (1 << 20) / len(batch) { // past several rolls
		stageCommit(t, l, batch)
	}
	if l.Segments() != 2 {
		t.Fatalf("%d segments, retention keeps 2", l.Segments())
	}
	if n := testing.AllocsPerRun(2000, func() { stageCommit(t, l, batch) }); n != 0 {
		t.Fatalf("%v allocations per append", n)
	}
}
