package codec

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// chunkReader returns at most the next chunk size of its cycle per Read (a
// zero in the cycle is a Read of no bytes, unless the Read before it
// returned none), to exercise every split of the stream.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
	empty bool // the last Read returned no bytes
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(c.sizes) > 0 {
		n = min(n, int(c.sizes[c.i%len(c.sizes)]))
		c.i++
		if n == 0 && c.empty {
			n = 1
		}
	}
	c.empty = n == 0
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

type step struct {
	batch []byte
	pos   int64
	err   string
}

func walkReader(data []byte) []step {
	var out []step
	r := NewReader(data, 7)
	for {
		b, pos, err := r.Next()
		if err == io.EOF {
			return out
		}
		out = append(out, step{bytes.Clone(b), pos, errString(err)})
	}
}

func walkStream(t *testing.T, src io.Reader, size int64, maxBatch int) []step {
	var out []step
	r := NewBatchReader(src, 7, size, maxBatch)
	for i := 0; ; i++ {
		b, pos, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil && b == nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Pos != pos {
				t.Fatalf("framing error %v at %d is not a *FormatError with that position", err, pos)
			}
		}
		out = append(out, step{bytes.Clone(b), pos, errString(err)})
		if i > len(out)+1 {
			t.Fatal("Next did not stop")
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func sameSteps(t *testing.T, what string, got, want []step) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d steps, want %d (%+v vs %+v)", what, len(got), len(want), tail(got), tail(want))
	}
	for i := range got {
		if got[i].pos != want[i].pos || got[i].err != want[i].err || !bytes.Equal(got[i].batch, want[i].batch) {
			t.Fatalf("%s: step %d: pos %d err %q (%d bytes), want pos %d err %q (%d bytes)", what, i,
				got[i].pos, got[i].err, len(got[i].batch), want[i].pos, want[i].err, len(want[i].batch))
		}
	}
}

func tail(s []step) []step { return s[max(0, len(s)-2):] }

// FuzzBatchReader: over any input and any read chunking, the streaming
// reader frames the same batches with the same errors at the same positions
// as Reader (codec.Next on the whole buffer); with an unknown size the only
// difference allowed is ErrBatchTooLarge where the whole-buffer walk says
// ErrPartial for a batch claiming more than the bound.
func FuzzBatchReader(f *testing.F) {
	for _, s := range corpusSeeds(f) {
		f.Add(s, []byte{1, 13, 0, 200})
	}
	f.Add([]byte{}, []byte{})
	f.Add(make([]byte, 20), []byte{3})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		want := walkReader(data)
		got := walkStream(t, &chunkReader{data: data, sizes: sizes}, int64(len(data)), len(data)+1)
		sameSteps(t, "known size", got, want)

		got = walkStream(t, &chunkReader{data: data, sizes: sizes}, -1, len(data))
		if n := len(got); n > 0 && n == len(want) && got[n-1].err != want[n-1].err {
			fe := FormatError{Pos: want[n-1].pos, Field: "batchLength", Err: ErrBatchTooLarge}
			if want[n-1].err == (&FormatError{Pos: fe.Pos, Field: "batchLength", Err: ErrPartial}).Error() &&
				got[n-1].err == fe.Error() {
				got[n-1].err = want[n-1].err
			}
		}
		sameSteps(t, "unknown size", got, want)
	})
}

// TestBatchReaderBound: a batch above the bound is ErrBatchTooLarge at its
// position, read no further; the buffer grows to the largest batch read,
// not to the stream.
func TestBatchReaderBound(t *testing.T) {
	seg := corpusSegment(t)
	largest := 0
	for rest := seg; len(rest) > 0; {
		b, r, err := Next(rest)
		if err != nil {
			t.Fatal(err)
		}
		largest, rest = max(largest, len(b)), r
	}
	data := bytes.Repeat(seg, 50)
	r := NewBatchReader(bytes.NewReader(data), 0, int64(len(data)), 0)
	n := readAll(t, r)
	if len(r.buf) > max(largest, streamChunk) {
		t.Fatalf("buffer grew to %d bytes; largest batch %d, chunk %d", len(r.buf), largest, streamChunk)
	}
	if n == 0 {
		t.Fatal("no batches")
	}

	r = NewBatchReader(bytes.NewReader(data), 0, int64(len(data)), largest-1)
	for {
		b, pos, err := r.Next()
		if err == io.EOF {
			t.Fatal("no batch reached the bound")
		}
		if b != nil {
			if len(b) > largest-1 {
				t.Fatalf("batch of %d bytes returned above the bound %d", len(b), largest-1)
			}
			continue
		}
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Err != ErrBatchTooLarge || fe.Pos != pos || fe.Field != "batchLength" {
			t.Fatalf("got %v at %d, want ErrBatchTooLarge there", err, pos)
		}
		if !errors.Is(err, ErrCorruption) {
			t.Fatal("ErrBatchTooLarge does not match ErrCorruption")
		}
		break
	}
}

// corpusSegment is the largest committed corpus segment.
func corpusSegment(t testing.TB) []byte {
	var seg []byte
	for _, s := range corpusSeeds(t) {
		if len(s) > len(seg) {
			if _, _, err := Next(s); err == nil && len(checkSegment(s)) == 0 {
				seg = s
			}
		}
	}
	if seg == nil {
		t.Fatal("no valid corpus segment")
	}
	return seg
}

// readAll walks r to io.EOF and returns the number of batches; any other
// error fails the test.
func readAll(t *testing.T, r *BatchReader) int {
	t.Helper()
	n := 0
	for {
		_, _, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

var errDisk = errors.New("disk on fire")

// scriptedReader returns no byte and no error for its first empty Reads,
// then its data, then end (io.EOF, or a failure such as errDisk).
type scriptedReader struct {
	empty int
	data  []byte
	end   error
}

func (e *scriptedReader) Read(p []byte) (int, error) {
	if e.empty > 0 {
		e.empty--
		return 0, nil
	}
	if len(e.data) == 0 {
		return 0, e.end
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// TestBatchReaderReadError: an io.Reader failure ends the walk with that
// error, after the whole batches before it.
func TestBatchReaderReadError(t *testing.T) {
	seg := corpusSegment(t)
	b, _, _ := Next(seg)
	data := append(bytes.Clone(b), b[:len(b)/2]...)
	r := NewBatchReader(&scriptedReader{data: data, end: errDisk}, 0, -1, 0)
	if _, _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, pos, err := r.Next(); err != errDisk || pos != int64(len(b)) {
		t.Fatalf("got %v at %d, want the reader's error at %d", err, pos, len(b))
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the error: %v, want io.EOF", err)
	}
}

// TestBatchReaderAllocs: no allocation per batch once the buffer has grown.
func TestBatchReaderAllocs(t *testing.T) {
	seg := corpusSegment(t)
	data := bytes.Repeat(seg, 20)
	src := bytes.NewReader(data)
	r := NewBatchReader(src, 0, int64(len(data)), 0)
	r.Next()
	allocs := testing.AllocsPerRun(100, func() {
		if _, _, err := r.Next(); err == io.EOF {
			src.Reset(data)
			*r = BatchReader{r: src, buf: r.buf, left: int64(len(data)), max: DefaultMaxBatch, CheckCRC: true}
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch", allocs)
	}
}
