package compress

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// TestAppendReadCappedLimit: a reader that yields one byte more than limit
// fails with ErrLimit having written at most limit+1 bytes; one that yields
// exactly limit succeeds; another read error is returned as it is.
func TestAppendReadCappedLimit(t *testing.T) {
	for _, limit := range []int{0, 1, 511, 512, 513, 4096} {
		src := bytes.Repeat([]byte{7}, limit+1)
		out, err := AppendReadCapped(nil, iotest.HalfReader(bytes.NewReader(src)), Hint(10, limit), limit)
		if !errors.Is(err, ErrLimit) || len(out) > limit+1 || cap(out) > limit+1 {
			t.Fatalf("limit %d, %d bytes: %v, len %d cap %d", limit, len(src), err, len(out), cap(out))
		}
		out, err = AppendReadCapped(nil, bytes.NewReader(src[:limit]), Hint(10, limit), limit)
		if err != nil || !bytes.Equal(out, src[:limit]) {
			t.Fatalf("limit %d, %d bytes: %v, len %d", limit, limit, err, len(out))
		}
	}
	boom := errors.New("boom")
	if _, err := AppendReadCapped(nil, iotest.ErrReader(boom), 10, 100); err != boom {
		t.Fatalf("read error: %v, want it returned as it is", err)
	}
}

// TestAppendCappedLimit: appending past limit fails with ErrLimit and writes
// nothing; up to limit the capacity never passes limit+1.
func TestAppendCappedLimit(t *testing.T) {
	out, err := AppendCapped([]byte("ab"), []byte("cde"), 0, 4)
	if !errors.Is(err, ErrLimit) || string(out) != "ab" {
		t.Fatalf("past the limit: %q, %v", out, err)
	}
	out, err = AppendCapped([]byte("ab"), []byte("cd"), 1<<20, 4)
	if err != nil || string(out) != "abcd" || cap(out) > 5 {
		t.Fatalf("at the limit: %q cap %d, %v", out, cap(out), err)
	}
}
