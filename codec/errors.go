package codec

import (
	"errors"
	"strconv"
)

// Sentinel errors. Classify with errors.Is; never compare strings.
var (
	// ErrCorruption is the module's one corruption marker: every format
	// defect below matches it, and so do storage's index and transaction
	// index defects and psm's snapshot defects (made with NewCorruption).
	// errors.Is(err, codec.ErrCorruption) asks "are the bytes bad?" for any
	// error of the module.
	ErrCorruption = errors.New("codec: corrupt data")

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
	// corruption and does not match ErrCorruption.
	ErrPartial = errors.New("codec: partial trailing batch")

	// ErrUnknownName reports a compression or control-type name that is not
	// one of the names this package prints.
	ErrUnknownName = errors.New("codec: unknown name")
)

// corruptError is a sentinel that also matches ErrCorruption.
type corruptError struct{ msg string }

// NewCorruption returns a sentinel error with text msg that matches
// ErrCorruption, for the other packages' corruption defects. Call it once per
// sentinel, at package initialisation.
func NewCorruption(msg string) error { return &corruptError{msg} }

func corrupt(msg string) error          { return &corruptError{msg} }
func (e *corruptError) Error() string   { return e.msg }
func (e *corruptError) Is(t error) bool { return t == ErrCorruption }

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
