package codec

import (
	"errors"
	"strconv"
)

// Sentinel errors. Classify with errors.Is; never compare strings.
var (
	// ErrCorrupt is the marker every format defect below also matches.
	ErrCorrupt = errors.New("codec: corrupt batch")

	ErrTruncated          = corrupt("codec: truncated")
	ErrBadLength          = corrupt("codec: bad batch length")
	ErrBadMagic           = corrupt("codec: unsupported magic")
	ErrCRC                = corrupt("codec: CRC mismatch")
	ErrUnsupportedCodec   = corrupt("codec: unsupported compression codec")
	ErrBadRecord          = corrupt("codec: invalid record")
	ErrBadControl         = corrupt("codec: invalid control record")
	ErrDecompressionLimit = corrupt("codec: decompressed size exceeds limit")

	// ErrPartial reports a trailing batch that is cut short: a segment still
	// being written, or a fetch response cut at its byte limit. It is not a
	// corruption and does not match ErrCorrupt.
	ErrPartial = errors.New("codec: partial trailing batch")
)

// corruptError is a sentinel that also matches ErrCorrupt.
type corruptError struct{ msg string }

func corrupt(msg string) error          { return &corruptError{msg} }
func (e *corruptError) Error() string   { return e.msg }
func (e *corruptError) Is(t error) bool { return t == ErrCorrupt }

// FormatError says what is wrong and where: Pos is the byte position of the
// batch in the buffer or file being read, Field the header field or record
// part at fault, Err the sentinel.
type FormatError struct {
	Pos   int64
	Field string
	Err   error
}

func (e *FormatError) Error() string {
	s := e.Err.Error() + " at position " + strconv.FormatInt(e.Pos, 10)
	if e.Field != "" {
		s += " (" + e.Field + ")"
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }
