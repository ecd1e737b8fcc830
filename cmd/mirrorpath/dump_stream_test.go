package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// sparseLog writes head at the start of a file of size bytes; the rest is a
// hole (zeros).
func sparseLog(t *testing.T, head []byte, size int64) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "00000000000000000000.log")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return name
}

// dumpAllocs runs dump on args and returns its stdout, exit code and the
// bytes it allocated.
func dumpAllocs(t *testing.T, args ...string) (string, int, uint64) {
	t.Helper()
	var out, errb bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := mainArgs(append([]string{"dump"}, args...), &out, &errb)
	runtime.ReadMemStats(&after)
	return out.String() + errb.String(), code, after.TotalAlloc - before.TotalAlloc
}

// TestDumpSparseFramingError: in a 3 GiB file, a framing error at byte 0,
// one after real batches, and a batchLength claiming 2 GiB are each
// reported at their position, as from the whole file, with a few MiB
// allocated: the file is not read.
func TestDumpSparseFramingError(t *testing.T) {
	const size = 3 << 30
	var batches []byte
	off := int64(0)
	for i := range 10 {
		var err error
		batches, err = codec.AppendBatch(batches, codec.BatchHeader{BaseOffset: off, BaseTimestamp: 1700000000000,
			ProducerID: 1, BaseSequence: int32(i)}, []codec.Record{{Value: bytes.Repeat([]byte("v"), 1000)}}, codec.CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		off++
	}
	huge := make([]byte, codec.HeaderSizeUpToMagic)
	binary.BigEndian.PutUint64(huge, 42)
	binary.BigEndian.PutUint32(huge[codec.OffBatchLength:], 2<<30-codec.LogOverhead)
	huge[codec.OffMagic] = codec.MagicV2
	for _, c := range []struct {
		name string
		head []byte
		want string
	}{
		{"hole at 0", nil, `position: 0 baseOffset: 0 batchLength: 0 magic: 0 error: "codec: bad batch length at position 0 (batchLength)"`},
		{"hole after batches", batches, "position: " + itoa(len(batches)) + ` baseOffset: 0 batchLength: 0 magic: 0 error: "codec: bad batch length at position ` + itoa(len(batches)) + ` (batchLength)"`},
		{"2 GiB batch", huge, `position: 0 baseOffset: 42 batchLength: 2147483636 magic: 2 error: "codec: batch larger than the reader's bound at position 0 (batchLength)"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := sparseLog(t, c.head, size)
			out, code, alloc := dumpAllocs(t, name)
			if code != 1 || !strings.Contains(out, c.want+"\n") {
				t.Fatalf("exit %d, output:\n%s\nwant a line %s", code, out, c.want)
			}
			if alloc > 8<<20 {
				t.Fatalf("dump allocated %d bytes on a %d-byte file", alloc, size)
			}
		})
	}
	// Raising the bound past the file's end makes the 2 GiB batch partial,
	// as on the whole file, still without reading it.
	name := sparseLog(t, huge, 1<<30)
	out, code, alloc := dumpAllocs(t, "--max-batch", itoa(math.MaxInt32+codec.LogOverhead), name)
	want := `error: "codec: partial trailing batch at position 0 (batchLength)"`
	if code != 1 || !strings.Contains(out, want) || alloc > 8<<20 {
		t.Fatalf("exit %d, %d bytes allocated, output:\n%s\nwant %s", code, alloc, out, want)
	}
}
