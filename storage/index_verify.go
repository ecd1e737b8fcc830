package storage

// Checking an index against its segment: VerifyOffsetIndex and
// VerifyTimeIndex over the log's bytes, their *At forms over a file read a
// window at a time, both on one walk of batch headers (heads).

import (
	"fmt"
	"io"
	"math"

	"github.com/mirrorpath/mirrorpath/codec"
)

// batchHead is what the index checks read of a batch header.
type batchHead struct {
	pos, size, base, last, maxTS int64
}

// nextHead frames the batch at pos of log (length and offsets only, no
// CRC): ok is false at the end or where the framing fails.
func nextHead(log []byte, pos int64) (batchHead, bool) {
	if pos < 0 || pos > int64(len(log)) || int64(len(log))-pos < codec.HeaderSize {
		return batchHead{}, false
	}
	return decodeHead(log[pos:], pos, int64(len(log)))
}

// decodeHead is nextHead on hdr, the at least HeaderSize bytes at pos of a
// log of total bytes.
func decodeHead(hdr []byte, pos, total int64) (batchHead, bool) {
	b := codec.Batch(hdr)
	size := int64(b.BatchLength()) + codec.LogOverhead
	if size < codec.HeaderSize || size > total-pos || b.LastOffsetDelta() < 0 {
		return batchHead{}, false
	}
	base := b.BaseOffset()
	return batchHead{pos: pos, size: size, base: base, last: base + int64(b.LastOffsetDelta()), maxTS: b.MaxTimestamp()}, true
}

// heads is where the index checks read batch headers from: the log's bytes
// (sliceHeads) or its file (readerHeads).
type heads interface {
	head(pos int64) (batchHead, bool)
}

type sliceHeads []byte

func (l sliceHeads) head(pos int64) (batchHead, bool) { return nextHead(l, pos) }

// headWindow is how much of the log readerHeads reads at a time: headers of
// small batches come from one read, large batches are skipped unread.
const headWindow = 64 << 10

// readerHeads reads batch headers from a log file of size bytes through a
// window of headWindow bytes, so that a check's memory does not depend on
// the log's size. err is the first read failure; it ends the walk.
type readerHeads struct {
	r    io.ReaderAt
	size int64
	win  []byte
	wpos int64
	wlen int
	err  error
}

func (h *readerHeads) head(pos int64) (batchHead, bool) {
	if h.err != nil || pos < 0 || pos > h.size || h.size-pos < codec.HeaderSize {
		return batchHead{}, false
	}
	if pos < h.wpos || pos+codec.HeaderSize > h.wpos+int64(h.wlen) {
		n := min(int64(len(h.win)), h.size-pos)
		k, err := h.r.ReadAt(h.win[:n], pos)
		if k < codec.HeaderSize {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF // the file is shorter than its size
			}
			h.err = err
			return batchHead{}, false
		}
		h.wpos, h.wlen = pos, k
	}
	off := pos - h.wpos
	return decodeHead(h.win[off:off+codec.HeaderSize], pos, h.size)
}

// VerifyOffsetIndex checks every entry of x against log, the bytes of the
// .log beside it: a batch must start at the entry's position and end at its
// offset. It calls bad (when not nil) with each bad entry's number and an
// *IndexError matching ErrIndexMismatch, and returns how many there were.
// Batches are framed by their length fields only (no CRC check), up to the
// first that does not frame. O(len(x) + batches in log); no allocation
// unless an entry is bad.
func VerifyOffsetIndex(x OffsetIndex, log []byte, bad func(entry int, err error)) int {
	return verifyOffsetIndex(x, sliceHeads(log), bad)
}

// VerifyOffsetIndexAt is VerifyOffsetIndex reading the log's batch headers
// from r, size bytes, through a 64 KiB window: memory independent of the
// log's size, and batches larger than the window are not read past their
// header. A read failure ends the walk (later entries count as bad) and is
// returned.
func VerifyOffsetIndexAt(x OffsetIndex, r io.ReaderAt, size int64, bad func(entry int, err error)) (int, error) {
	h := &readerHeads{r: r, size: size, win: make([]byte, headWindow)}
	n := verifyOffsetIndex(x, h, bad)
	return n, h.err
}

func verifyOffsetIndex[H heads](x OffsetIndex, log H, bad func(entry int, err error)) int {
	nbad := 0
	v := offsetVerifier[H]{log: log}
	for i := range x.Len() {
		if err := v.check(i, x.Entry(i)); err != nil {
			nbad++
			if bad != nil {
				bad(i, err)
			}
		}
	}
	return nbad
}

// offsetVerifier checks .index entries against the log one at a time, in
// file order, walking the log's batch headers forward once.
type offsetVerifier[H heads] struct {
	log     H
	h       batchHead
	ok      bool
	started bool
}

// check returns nil or an *IndexError matching ErrIndexMismatch for entry i.
func (v *offsetVerifier[H]) check(i int, e OffsetPosition) error {
	if !v.started {
		v.h, v.ok = v.log.head(0)
		v.started = true
	}
	for v.ok && v.h.pos < e.Position {
		v.h, v.ok = v.log.head(v.h.pos + v.h.size)
	}
	var detail string
	switch {
	case !v.ok:
		detail = fmt.Sprintf("position %d is past the last batch", e.Position)
	case v.h.pos != e.Position:
		detail = fmt.Sprintf("no batch starts at position %d", e.Position)
	case v.h.last != e.Offset:
		detail = fmt.Sprintf("index offset %d, log offset %d", e.Offset, v.h.last)
	default:
		return nil
	}
	return &IndexError{Entry: i, Err: ErrIndexMismatch, Detail: detail}
}

// VerifyTimeIndex checks every entry of x against log, the bytes of the .log
// beside it: a batch must hold the entry's offset, and the largest
// maxTimestamp of the batches up to and including it must be the entry's
// timestamp. Reports as VerifyOffsetIndex does.
func VerifyTimeIndex(x TimeIndex, log []byte, bad func(entry int, err error)) int {
	return verifyTimeIndex(x, sliceHeads(log), bad)
}

// VerifyTimeIndexAt is VerifyTimeIndex reading the log as
// VerifyOffsetIndexAt does.
func VerifyTimeIndexAt(x TimeIndex, r io.ReaderAt, size int64, bad func(entry int, err error)) (int, error) {
	h := &readerHeads{r: r, size: size, win: make([]byte, headWindow)}
	n := verifyTimeIndex(x, h, bad)
	return n, h.err
}

func verifyTimeIndex[H heads](x TimeIndex, log H, bad func(entry int, err error)) int {
	nbad := 0
	v := timeVerifier[H]{log: log}
	for i := range x.Len() {
		if err := v.check(i, x.Entry(i)); err != nil {
			nbad++
			if bad != nil {
				bad(i, err)
			}
		}
	}
	return nbad
}

// timeVerifier checks .timeindex entries against the log one at a time, in
// file order, walking the log's batch headers forward once.
type timeVerifier[H heads] struct {
	log     H
	h       batchHead
	ok      bool
	started bool
	maxTS   int64
}

// check returns nil or an *IndexError matching ErrIndexMismatch for entry i.
func (v *timeVerifier[H]) check(i int, e TimestampOffset) error {
	if !v.started {
		v.h, v.ok = v.log.head(0)
		v.started, v.maxTS = true, math.MinInt64
		if v.ok {
			v.maxTS = v.h.maxTS
		}
	}
	for v.ok && v.h.last < e.Offset {
		if v.h, v.ok = v.log.head(v.h.pos + v.h.size); v.ok {
			v.maxTS = max(v.maxTS, v.h.maxTS)
		}
	}
	var detail string
	switch {
	case !v.ok:
		detail = fmt.Sprintf("offset %d is past the last batch", e.Offset)
	case v.h.base > e.Offset:
		detail = fmt.Sprintf("no batch holds offset %d", e.Offset)
	case v.maxTS != e.Timestamp:
		detail = fmt.Sprintf("index timestamp %d, largest timestamp through offset %d is %d", e.Timestamp, e.Offset, v.maxTS)
	default:
		return nil
	}
	return &IndexError{Entry: i, Err: ErrIndexMismatch, Detail: detail}
}
