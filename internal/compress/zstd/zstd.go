// Package zstd decodes and encodes the records of Kafka's zstd codec
// (ZstdCompression): one zstd frame, read with a window of at most
// MaxWindow, over klauspost/compress's decoder.
package zstd

import (
	"bytes"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

// MaxWindow is the largest zstd window Decode accepts (8 MiB, more than any
// Kafka producer level uses); it also bounds the decoder's memory.
const MaxWindow = 8 << 20

type state struct {
	src bytes.Reader
	d   *kzstd.Decoder
}

var pool = sync.Pool{New: func() any {
	d, err := kzstd.NewReader(nil, kzstd.WithDecoderConcurrency(1), kzstd.WithDecoderLowmem(true),
		kzstd.WithDecoderMaxWindow(MaxWindow), kzstd.WithDecoderMaxMemory(MaxWindow))
	if err != nil {
		panic(err) // options are constant
	}
	return &state{d: d}
}}

// Decode decodes src into dst's storage, failing with compress.ErrLimit
// past limit bytes; another error is the decoder's. The decoder is pooled.
func Decode(dst, src []byte, limit int) ([]byte, error) {
	s := pool.Get().(*state)
	defer pool.Put(s)
	s.src.Reset(src)
	if err := s.d.Reset(&s.src); err != nil {
		return dst[:0], err
	}
	return compress.AppendReadCapped(dst[:0], s.d, compress.Hint(len(src), limit), limit)
}

// encoder is shared: EncodeAll is safe for concurrent use.
var encoder = sync.OnceValue(func() *kzstd.Encoder {
	e, err := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // constant options
	}
	return e
})

// Encode appends raw compressed as one zstd frame to dst.
func Encode(dst, raw []byte) []byte { return encoder().EncodeAll(raw, dst) }
