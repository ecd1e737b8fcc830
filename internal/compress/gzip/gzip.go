// Package gzip decodes and encodes the records of Kafka's gzip codec
// (GzipCompression): Decode reads a stream as java.util.zip.GZIPInputStream
// reads it, over klauspost/compress's inflater; Encode writes one member.
package gzip

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

var le = binary.LittleEndian

// Gzip records are read the way Kafka reads them: a java.util.zip
// GZIPInputStream over the records bytes with an 8 KiB input buffer
// (GzipCompression#wrapForInput). What that reader does differs from RFC 1952
// readers such as Go's:
//
//   - the header's reserved FLG bits are not checked;
//   - after a member's trailer (CRC-32 and ISIZE, both verified) it looks for
//     a further member only when more input is unread, judged as the JDK
//     judges it: bytes remain in the underlying stream, or more than 26 bytes
//     remain in its 8 KiB buffer (GZIPInputStream#readTrailer; the same test
//     is in #hasNoMoreMembers in JDK 25); and when it does look, a tail that does
//     not parse as a gzip header (too short, wrong magic, method not 8, cut
//     optional fields, bad header CRC) ends the stream silently. Only a tail
//     whose header parses is read as a member, and errors in that member's
//     data or trailer are errors.
//
// Which bytes sit in the JDK's buffer depends on where 8 KiB reads fall, so
// that is modelled: the header of the first member is read from the stream
// directly, the inflater's input then arrives in 8 KiB reads, and a further
// member's header is read from what is buffered before the stream.

const javaGzipBuf = 8 << 10 // GzipCompression's GZIPInputStream buffer size

type state struct {
	src bytes.Reader
	fr  io.ReadCloser // klauspost flate; ReadByte on src, so it never over-reads
}

var pool = sync.Pool{New: func() any {
	s := new(state)
	s.fr = flate.NewReader(&s.src)
	return s
}}

func gzErr(format string, args ...any) error {
	return fmt.Errorf("gzip: "+format, args...)
}

// memberHeader parses a gzip member header as GZIPInputStream#readHeader
// does and returns its length.
func memberHeader(b []byte) (int, error) {
	if len(b) < 10 {
		return 0, gzErr("header cut")
	}
	if b[0] != 0x1f || b[1] != 0x8b {
		return 0, gzErr("not in GZIP format")
	}
	if b[2] != 8 {
		return 0, gzErr("unsupported compression method %d", b[2])
	}
	flg := b[3]
	p := 10
	if flg&0x04 != 0 { // FEXTRA
		if len(b)-p < 2 {
			return 0, gzErr("header cut")
		}
		n := int(le.Uint16(b[p:]))
		p += 2
		if len(b)-p < n {
			return 0, gzErr("header cut")
		}
		p += n
	}
	for _, f := range []byte{0x08, 0x10} { // FNAME, FCOMMENT: zero-terminated
		if flg&f != 0 {
			i := bytes.IndexByte(b[p:], 0)
			if i < 0 {
				return 0, gzErr("header cut")
			}
			p += i + 1
		}
	}
	if flg&0x02 != 0 { // FHCRC: low 16 bits of the CRC-32 of the header so far
		if len(b)-p < 2 {
			return 0, gzErr("header cut")
		}
		if uint16(crc32.ChecksumIEEE(b[:p])) != le.Uint16(b[p:]) {
			return 0, gzErr("corrupt GZIP header")
		}
		p += 2
	}
	return p, nil
}

// Decode decodes src as Kafka's GZIPInputStream reads it (see above) into
// dst's storage, failing with compress.ErrLimit past limit bytes.
func Decode(dst, src []byte, limit int) ([]byte, error) {
	out, _, err := DecodeEnd(dst, src, limit)
	return out, err
}

// DecodeEnd is Decode also returning where the last member read ends: the
// bytes after it are the tail the JDK ignores.
func DecodeEnd(dst, src []byte, limit int) ([]byte, int, error) {
	dst = dst[:0]
	s := pool.Get().(*state)
	defer pool.Put(s)
	h, err := memberHeader(src)
	if err != nil {
		return dst, 0, err
	}
	// pos: where the inflater's input starts; fetched: how far the JDK has
	// read the underlying stream (its buffer holds src[pos:fetched]).
	pos, fetched := h, h
	hnt := compress.Hint(len(src), limit)
	for {
		s.src.Reset(src[pos:])
		if err := s.fr.(flate.Resetter).Reset(&s.src, nil); err != nil {
			return dst, 0, err
		}
		start := len(dst)
		if dst, err = compress.AppendReadCapped(dst, s.fr, hnt, limit); err != nil {
			return dst, 0, err
		}
		end := len(src) - s.src.Len() // first byte after the deflate data
		if end > fetched {
			fetched += (end - fetched + javaGzipBuf - 1) / javaGzipBuf * javaGzipBuf
			fetched = min(fetched, len(src))
		}
		buffered := fetched - end // the inflater's remaining input
		if len(src)-end < 8 {
			return dst, 0, gzErr("trailer cut")
		}
		if le.Uint32(src[end:]) != crc32.ChecksumIEEE(dst[start:]) || le.Uint32(src[end+4:]) != uint32(len(dst)-start) {
			return dst, 0, gzErr("corrupt GZIP trailer")
		}
		next := end + 8
		fetched = max(fetched, next)
		if !(len(src) > fetched || buffered > 26) {
			return dst, next, nil
		}
		h, err := memberHeader(src[next:])
		if err != nil {
			return dst, next, nil // not a member: the rest is ignored
		}
		pos = next + h
		fetched = max(fetched, pos)
	}
}

// Encode appends raw compressed as one gzip member to dst.
func Encode(dst, raw []byte) ([]byte, error) {
	w := &compress.AppendWriter{B: dst}
	zw := kgzip.NewWriter(w)
	if _, err := zw.Write(raw); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return w.B, nil
}
