// Package snappy decodes and encodes the records of Kafka's snappy codec:
// the framing of snappy-java's SnappyOutputStream ("xerial"), as Kafka's
// producers write it,
//
//	8-byte magic 82 'S' 'N' 'A' 'P' 'P' 'Y' 00, int32 version,
//	int32 compatible version, then chunks of [int32 length][snappy block];
//
// or, as some clients (sarama, franz-go) write it, one raw snappy block.
// Decode reads both with SnappyInputStream's rules; the block codec is
// klauspost/compress's.
package snappy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	ksnappy "github.com/klauspost/compress/snappy"

	"github.com/mirrorpath/mirrorpath/internal/compress"
)

var be = binary.BigEndian

// Magic starts the xerial framing.
var Magic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// headerSize is the xerial header's length: magic, version, compatible
// version.
const headerSize = 16

// chunk is the raw bytes of one xerial chunk Encode writes.
const chunk = 32 << 10

// Decode decodes the xerial framing or, without its magic, one raw block
// into dst's storage, as snappy-java's SnappyInputStream (Kafka's reader)
// does: a stream shorter than the 16-byte header, or whose first 8 bytes are
// not the magic, is one raw block; a header whose version is below 1 is
// refused; and the chunks end where fewer than 4 bytes are left (a 1-3 byte
// tail is no error, since the stream reads a cut length as its end). Each
// block's decoded length is read from its preamble and checked against limit
// before any byte is written (compress.ErrLimit).
func Decode(dst, src []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	if len(src) < headerSize || !bytes.HasPrefix(src, Magic) {
		return block(dst, src, limit)
	}
	if v := int32(be.Uint32(src[8:])); v < 1 {
		return dst, fmt.Errorf("xerial snappy version %d", v)
	}
	src = src[headerSize:]
	for len(src) >= 4 {
		n := be.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst, errors.New("xerial snappy chunk overruns")
		}
		var err error
		if dst, err = block(dst, src[:n], limit); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// block appends the decoding of one snappy block to dst.
func block(dst, b []byte, limit int) ([]byte, error) {
	n, err := ksnappy.DecodedLen(b)
	if err != nil {
		return dst, err
	}
	if n > limit-len(dst) {
		return dst, compress.ErrLimit
	}
	if cap(dst)-len(dst) < n {
		nb := make([]byte, len(dst), len(dst)+max(n, min(2*cap(dst), limit-len(dst))))
		copy(nb, dst)
		dst = nb
	}
	out, err := ksnappy.DecodeStrict(dst[len(dst):len(dst)+n], b)
	if err != nil {
		return dst, err
	}
	if len(out) != n {
		return dst, errors.New("snappy block length")
	}
	return dst[:len(dst)+n], nil
}

// Tail is the number of bytes after src's last xerial chunk that Decode
// never decodes (a 1-3 byte tail); 0 for a raw block or a framing that does
// not parse.
func Tail(src []byte) int {
	if len(src) < headerSize || !bytes.HasPrefix(src, Magic) {
		return 0
	}
	rest := src[headerSize:]
	for len(rest) >= 4 {
		n := be.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return 0
		}
		rest = rest[4+n:]
	}
	return len(rest)
}

// Encode appends raw in the xerial framing, version 1, chunks of 32 KiB, as
// Kafka's producers write it.
func Encode(dst, raw []byte) []byte {
	out := append(dst, Magic...)
	out = be.AppendUint32(out, 1) // version
	out = be.AppendUint32(out, 1) // minimum compatible version
	for len(raw) > 0 {
		c := raw[:min(len(raw), chunk)]
		raw = raw[len(c):]
		n := len(out)
		out = be.AppendUint32(out, 0)
		out = slices.Grow(out, ksnappy.MaxEncodedLen(len(c)))
		b := ksnappy.Encode(out[len(out):cap(out)], c)
		be.PutUint32(out[n:], uint32(len(b)))
		out = out[:len(out)+len(b)]
	}
	return out
}
