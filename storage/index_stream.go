package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IndexScanner reads a .index or .timeindex file entry by entry from a
// stream, checking each as ParseOffsetIndex and ParseTimeIndex do, so that
// a tool can walk a file of any size in memory of one read buffer: a
// defect at entry 1 of a 4 GiB file is found after reading 2 entries. It
// can also check each entry against the segment's .log (CheckAgainst),
// reading the log's batch headers through a 64 KiB window as
// VerifyOffsetIndexAt does. Not safe for concurrent use.
type IndexScanner struct {
	r     *bufio.Reader
	time  bool
	base  int64
	i     int
	read  int64
	buf   [TimeIndexEntrySize]byte
	off   offsetOrder
	ts    timeOrder
	err   error // sticky: the defect or read error that ended the scan
	log   *readerHeads
	offV  offsetVerifier[*readerHeads]
	timeV timeVerifier[*readerHeads]
}

// NewOffsetIndexScanner scans the .index file r whose name says base.
func NewOffsetIndexScanner(r io.Reader, base int64) *IndexScanner {
	return &IndexScanner{r: bufio.NewReaderSize(r, headWindow), base: base}
}

// NewTimeIndexScanner scans the .timeindex file r whose name says base.
func NewTimeIndexScanner(r io.Reader, base int64) *IndexScanner {
	return &IndexScanner{r: bufio.NewReaderSize(r, headWindow), base: base, time: true, ts: newTimeOrder()}
}

// CheckAgainst makes Next also check each entry against the .log beside
// the index, read from log (size bytes): Next's mismatch result.
func (s *IndexScanner) CheckAgainst(log io.ReaderAt, size int64) {
	s.log = &readerHeads{r: log, size: size, win: make([]byte, headWindow)}
	s.offV = offsetVerifier[*readerHeads]{log: s.log}
	s.timeV = timeVerifier[*readerHeads]{log: s.log}
}

// IndexEntry is one entry of an index file with its absolute offset: a
// .index entry sets Position, a .timeindex entry Timestamp.
type IndexEntry struct {
	Offset, Position, Timestamp int64
}

// Next returns the next entry. At the end of a good file err is io.EOF; a
// defect is an *IndexError naming the entry (ErrIndexSize, ErrIndexOrder,
// ErrIndexRange) and ends the scan, as does a read error. mismatch is
// non-nil, an *IndexError matching ErrIndexMismatch, when CheckAgainst was
// called and the entry disagrees with the log; the scan goes on. O(1) per
// entry; no allocation unless an entry is bad.
func (s *IndexScanner) Next() (e IndexEntry, mismatch, err error) {
	if s.err != nil {
		return e, nil, s.err
	}
	size := OffsetIndexEntrySize
	if s.time {
		size = TimeIndexEntrySize
	}
	n, err := io.ReadFull(s.r, s.buf[:size])
	s.read += int64(n)
	switch {
	case err == io.EOF:
		s.err = io.EOF
		return e, nil, s.err
	case errors.Is(err, io.ErrUnexpectedEOF):
		s.err = &IndexError{Entry: s.i, Err: ErrIndexSize, Detail: fmt.Sprintf("%d bytes", s.read)}
		return e, nil, s.err
	case err != nil:
		s.err = err
		return e, nil, err
	}
	b := s.buf[:size]
	if s.time {
		err = s.ts.check(b)
		e = IndexEntry{Timestamp: int64(binary.BigEndian.Uint64(b)), Offset: s.base + int64(int32(binary.BigEndian.Uint32(b[8:])))}
	} else {
		err = s.off.check(b)
		e = IndexEntry{Offset: s.base + int64(int32(binary.BigEndian.Uint32(b))), Position: int64(int32(binary.BigEndian.Uint32(b[4:])))}
	}
	if err != nil {
		s.err = &IndexError{Entry: s.i, Err: err}
		return IndexEntry{}, nil, s.err
	}
	if s.log != nil {
		if s.time {
			mismatch = s.timeV.check(s.i, TimestampOffset{Timestamp: e.Timestamp, Offset: e.Offset})
		} else {
			mismatch = s.offV.check(s.i, OffsetPosition{Offset: e.Offset, Position: e.Position})
		}
	}
	s.i++
	return e, mismatch, nil
}

// Entries is the number of good entries returned so far.
func (s *IndexScanner) Entries() int { return s.i }

// LogErr is the first failure to read the .log of CheckAgainst (the
// entries after it count as mismatches), or nil.
func (s *IndexScanner) LogErr() error {
	if s.log == nil {
		return nil
	}
	return s.log.err
}
