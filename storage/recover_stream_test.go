package storage

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// TestRecoverSparseSegment: a 3 GiB segment of real batches followed by a
// hole (zeros: batchLength 0, a framing error) is cut at the hole after
// reading its batches through the file, not after reading 3 GiB into
// memory.
func TestRecoverSparseSegment(t *testing.T) {
	dir := t.TempDir()
	var head []byte
	for i := range 20 {
		head = append(head, mkBatch(t, bspec{PID: 1, Seq: int32(i), Base: int64(i), Value: 4000})...)
	}
	const size = 3 << 30
	name := filepath.Join(dir, "00000000000000000000.log")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, rec, err := Open(Config{FS: vfs.OSFS{}, Dir: dir})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !errors.Is(rec.Reason, codec.ErrBadLength) || rec.TruncatedAt != int64(len(head)) || rec.TruncatedBytes != size-int64(len(head)) {
		t.Fatalf("recovery %+v: want ErrBadLength at %d, %d bytes cut", rec, len(head), size-len(head))
	}
	if l.End() != 20 {
		t.Fatalf("log end %d, want 20", l.End())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("recovery allocated %d bytes for a %d-byte segment", alloc, size)
	}
	if st, err := os.Stat(name); err != nil || st.Size() != int64(len(head)) {
		t.Fatalf("segment not cut to %d bytes: %v %v", len(head), st.Size(), err)
	}
}
