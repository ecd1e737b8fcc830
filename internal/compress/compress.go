// Package compress holds what the decompressors of Kafka's record codecs
// share: bounded output. Each codec is a package of its own, read the way
// Kafka's reader of it reads (internal/compress/gzip, lz4, snappy, zstd);
// codec chooses among them by a batch's attributes and turns their errors
// into its own.
//
// Every Decode appends to dst[:0] and fails with ErrLimit once more than
// limit bytes would come out, having written at most limit+1. Output grows by
// doubling from a size guessed from the input (Hint) and never past limit+1,
// so no length read from the input sizes an allocation.
package compress

import (
	"errors"
	"io"
)

// ErrLimit reports a stream that decompresses to more than the caller's
// limit.
var ErrLimit = errors.New("compress: decompressed size exceeds limit")

// Hint guesses the decompressed size of n compressed bytes, capped by limit.
func Hint(n, limit int) int { return min(4*n+64, limit+1) }

// AppendReadCapped reads r to EOF, appending to dst, growing it by doubling
// from hint, and fails with ErrLimit once more than limit bytes are in dst.
// Another error of r is returned as it is.
func AppendReadCapped(dst []byte, r io.Reader, hint, limit int) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			if len(dst) > limit {
				return dst, ErrLimit
			}
			want := min(max(2*cap(dst), hint, 512), limit+1)
			nb := make([]byte, len(dst), want)
			copy(nb, dst)
			dst = nb
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst) > limit {
			return dst, ErrLimit
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// AppendCapped appends p to dst, growing it by doubling from hint and never
// past limit+1, and fails with ErrLimit once more than limit bytes are out.
func AppendCapped(dst, p []byte, hint, limit int) ([]byte, error) {
	if len(p) > limit-len(dst) {
		return dst, ErrLimit
	}
	if cap(dst)-len(dst) < len(p) {
		want := min(max(2*cap(dst), hint, 512, len(dst)+len(p)), limit+1)
		nb := make([]byte, len(dst), want)
		copy(nb, dst)
		dst = nb
	}
	return append(dst, p...), nil
}

// AppendWriter is an io.Writer that appends what it is given to B: the
// encoders' sink, so that Encode appends to the caller's dst.
type AppendWriter struct{ B []byte }

// Write appends p to w.B; it never fails.
func (w *AppendWriter) Write(p []byte) (int, error) {
	w.B = append(w.B, p...)
	return len(p), nil
}
