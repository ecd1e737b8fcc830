package codec

import (
	"errors"
	"io"
)

// DefaultMaxBatch is BatchReader's default bound on one batch's size
// (LogOverhead + batchLength): 64 MiB, far above Kafka's default
// message.max.bytes (1 MiB + 12), which a topic's max.message.bytes can
// raise. A batchLength that claims more is ErrBatchTooLarge, not an
// allocation.
const DefaultMaxBatch = 64 << 20

// ErrBatchTooLarge reports a batchLength above a BatchReader's bound: the
// batch is not read. It matches ErrCorruption; raise the bound to read a log
// written with a larger max.message.bytes.
var ErrBatchTooLarge = corrupt("codec: batch larger than the reader's bound")

// streamChunk is the least a BatchReader asks of its io.Reader at a time, so
// that small batches cost one read call per chunk, not two per batch.
const streamChunk = 256 << 10

// BatchReader frames the batches of a stream (a .log file) one at a time,
// as Reader does over a buffer: same batches, same *FormatError values
// (position, field, sentinel), CRC verdicts and end of walk. Its buffer is
// reused and grows to the largest batch read (at least 256 KiB), never to
// the stream's size, so memory is bounded by the largest batch whatever the
// file size. A batch aliases that buffer and is valid until the next call
// to Next. Not safe for concurrent use.
//
// When the stream's size is known (NewBatchReader's size ≥ 0), a batch that
// claims more bytes than are left is ErrPartial without reading further,
// as Next reports it on the whole buffer; only a batch that would fit and
// exceeds the bound is ErrBatchTooLarge. With size < 0 the bound is checked
// first.
type BatchReader struct {
	r          io.Reader
	buf        []byte
	start, end int   // buf[start:end] is read and not yet returned
	pos        int64 // stream position of buf[start]
	left       int64 // bytes of the stream not yet read into buf; <0 unknown
	max        int64
	eof        bool  // r has returned io.EOF
	rerr       error // r's error other than io.EOF, reported once
	done       bool
	CheckCRC   bool // verify each batch's CRC; on by default
}

// NewBatchReader returns a BatchReader over r whose positions start at base
// (the stream position of r's first byte). size is the number of bytes r
// holds, or -1 when unknown; maxBatch bounds one batch (≤ 0:
// DefaultMaxBatch).
func NewBatchReader(r io.Reader, base, size int64, maxBatch int) *BatchReader {
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	return &BatchReader{r: r, pos: base, left: size, max: int64(maxBatch), CheckCRC: true}
}

// Pos is the position of the next batch.
func (r *BatchReader) Pos() int64 { return r.pos }

// Pending is the bytes read at the current position and not returned as a
// batch: after a framing error, at least the bad batch's first 17 bytes
// (baseOffset, batchLength, partitionLeaderEpoch, magic) when the stream
// holds them. It aliases the buffer.
func (r *BatchReader) Pending() []byte { return r.buf[r.start:r.end] }

// fill makes at least n bytes available at buf[start:] unless the stream
// ends first; it reports whether it did. The buffer grows to n when it is
// smaller (to streamChunk at least), and each read asks for all the room
// left in it.
func (r *BatchReader) fill(n int) bool {
	zero := 0
	for r.end-r.start < n {
		if r.eof || r.rerr != nil {
			return false
		}
		if r.start == r.end {
			r.start, r.end = 0, 0
		}
		if len(r.buf)-r.start < n {
			// Move what is left (less than n bytes) to the front, growing
			// to n or the chunk.
			nb := r.buf
			if want := max(n, streamChunk); len(nb) < want {
				nb = make([]byte, want)
			}
			r.end = copy(nb, r.buf[r.start:r.end])
			r.start, r.buf = 0, nb
		}
		dst := r.buf[r.end:]
		if r.left >= 0 && int64(len(dst)) > r.left {
			dst = dst[:r.left]
		}
		if len(dst) == 0 { // the stated size is reached
			r.eof = true
			return false
		}
		k, err := r.r.Read(dst)
		if k < 0 || k > len(dst) {
			k, err = 0, errors.New("codec: invalid Read count")
		}
		if k > 0 {
			zero = 0
		} else if err == nil {
			if zero++; zero == 100 { // as bufio.Reader does
				err = io.ErrNoProgress
			}
		}
		r.end += k
		if r.left >= 0 {
			r.left -= int64(k)
		}
		switch {
		case err == io.EOF:
			r.eof = true
		case err != nil:
			r.rerr = err
		}
	}
	return true
}

// Next returns the next batch and its position, as Reader.Next does. At the
// end it returns io.EOF. An error of the underlying io.Reader ends the walk
// and is returned as it is (not as a *FormatError).
func (r *BatchReader) Next() (b Batch, pos int64, err error) {
	if r.done {
		return nil, r.pos, io.EOF
	}
	pos = r.pos
	b, err = r.frame()
	switch {
	case err == io.EOF:
		r.done = true
		return nil, pos, io.EOF
	case err == errStreamRead:
		r.done = true
		return nil, pos, r.rerr
	case err != nil:
		r.done = true
		r.fill(HeaderSizeUpToMagic) // for Pending: the prefix up to magic
		return nil, pos, &FormatError{Pos: pos, Field: framingField(err), Err: err}
	}
	r.start += len(b)
	r.pos += int64(len(b))
	if r.CheckCRC && b.VerifyCRC() != nil {
		return b, pos, &FormatError{Pos: pos, Field: "crc", Err: ErrCRC}
	}
	return b, pos, nil
}

// errStreamRead marks a failure of the io.Reader inside frame.
var errStreamRead = errors.New("codec: stream read failed")

// frame is Next (the function) over the stream: the same checks in the same
// order, reading only as much as each needs.
func (r *BatchReader) frame() (Batch, error) {
	short := func() error {
		if r.rerr != nil {
			return errStreamRead
		}
		return ErrPartial
	}
	if !r.fill(1) {
		if r.rerr != nil {
			return nil, errStreamRead
		}
		return nil, io.EOF
	}
	if !r.fill(LogOverhead) {
		return nil, short()
	}
	n := int32(be.Uint32(r.buf[r.start+OffBatchLength:]))
	if n < MinBatchLength {
		return nil, ErrBadLength
	}
	if !r.fill(HeaderSizeUpToMagic) {
		return nil, short()
	}
	if r.buf[r.start+OffMagic] != MagicV2 {
		return nil, ErrBadMagic
	}
	if n < HeaderSize-LogOverhead {
		return nil, ErrBadLength
	}
	size := int64(n) + LogOverhead
	if r.left >= 0 && size > int64(r.end-r.start)+r.left {
		return nil, ErrPartial
	}
	if size > r.max {
		return nil, ErrBatchTooLarge
	}
	if !r.fill(int(size)) {
		return nil, short()
	}
	return Batch(r.buf[r.start : r.start+int(size) : r.start+int(size)]), nil
}
