package storage

import (
	"errors"
	"math"
	"testing"

	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// A batch whose last offset is math.MaxInt64 would leave the log's next
// offset past int64: recovery cuts it there (ErrOffsetOverflow), keeping the
// batches before it, as LogSegment#recover refuses it (ensureOffsetInRange).
func TestRecoverCutsOffsetOverflow(t *testing.T) {
	first := mkBatch(t, bspec{PID: 1, Records: 2})
	for _, lastDelta := range []int{0, 4} {
		over := mkBatch(t, bspec{PID: 1, Seq: 2, Records: lastDelta + 1, Base: math.MaxInt64 - int64(lastDelta)})
		fs := vfs.NewMemFS()
		fs.WriteFile(FileName("/l", 0, LogSuffix), append(append([]byte{}, first...), over...), true)
		l, rec, err := Open(Config{FS: fs, Dir: "/l"})
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(rec.Reason, ErrOffsetOverflow) || rec.TruncatedAt != int64(len(first)) || l.End() != 2 {
			t.Fatalf("last offset delta %d: %+v, log end %d; want the cut at %d and end 2", lastDelta, rec, l.End(), len(first))
		}
	}
}
