package codec

import "io"

// Next splits the first batch off buf, a run of back-to-back batches (a .log
// segment, the records of a fetch response). It checks framing only: the
// 12-byte prefix, batchLength against MinBatchLength and the v2 header size,
// and magic 2; not the CRC.
//
// When buf holds fewer bytes than the batch it announces (or fewer than the 17
// bytes needed to read magic) Next returns ErrPartial: a segment being
// written or a fetch cut at its byte limit. An empty buf returns io.EOF.
// Other defects return ErrBadLength or ErrBadMagic as bare sentinels; after
// them the rest of buf cannot be framed. The batch aliases buf. O(1), no
// allocation.
func Next(buf []byte) (b Batch, rest []byte, err error) {
	if len(buf) == 0 {
		return nil, nil, io.EOF
	}
	if len(buf) < LogOverhead {
		return nil, buf, ErrPartial
	}
	n := int32(be.Uint32(buf[OffBatchLength:]))
	if n < MinBatchLength {
		return nil, buf, ErrBadLength
	}
	if len(buf) < HeaderSizeUpToMagic {
		return nil, buf, ErrPartial
	}
	if buf[OffMagic] != MagicV2 {
		return nil, buf, ErrBadMagic
	}
	if n < HeaderSize-LogOverhead {
		return nil, buf, ErrBadLength
	}
	size := int64(n) + LogOverhead
	if int64(len(buf)) < size {
		return nil, buf, ErrPartial
	}
	return Batch(buf[:size]), buf[size:], nil
}

// Reader walks the batches of a buffer, keeping the byte position of each so
// that errors say where. The zero value is not usable; use NewReader.
//
// Errors are *FormatError values (position, field, sentinel). A CRC mismatch
// (when CheckCRC is set) is reported for that batch and the walk continues
// with the next one, since framing is intact; a framing error or a partial
// batch ends the walk. Not safe for concurrent use.
type Reader struct {
	buf      []byte
	pos      int64 // position of buf[0] in the original input
	base     int64
	done     bool
	CheckCRC bool // verify each batch's CRC; on by default
}

// NewReader returns a Reader over buf whose positions start at base (the
// file offset of buf[0]; 0 for a whole buffer).
func NewReader(buf []byte, base int64) *Reader {
	return &Reader{buf: buf, pos: base, base: base, CheckCRC: true}
}

// Pos is the position of the next batch.
func (r *Reader) Pos() int64 { return r.pos }

// Next returns the next batch and its position. At the end it returns io.EOF.
// A batch with a bad CRC is returned together with its error, so callers can
// still show it; r moves past it.
func (r *Reader) Next() (b Batch, pos int64, err error) {
	if r.done {
		return nil, r.pos, io.EOF
	}
	pos = r.pos
	b, rest, err := Next(r.buf)
	switch {
	case err == io.EOF:
		r.done = true
		return nil, pos, io.EOF
	case err != nil:
		r.done = true
		return nil, pos, &FormatError{Pos: pos, Field: framingField(err), Err: err}
	}
	r.pos += int64(len(b))
	r.buf = rest
	if r.CheckCRC && b.VerifyCRC() != nil {
		return b, pos, &FormatError{Pos: pos, Field: "crc", Err: ErrCRC}
	}
	return b, pos, nil
}

func framingField(err error) string {
	switch err {
	case ErrBadMagic:
		return "magic"
	case ErrBadLength:
		return "batchLength"
	case ErrPartial, ErrBatchTooLarge:
		return "batchLength"
	}
	return ""
}
