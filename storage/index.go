package storage

// # Offset and time index files
//
// Beside each segment <base>.log a file-backed log keeps Kafka's two sparse
// indexes (OffsetIndex.java, TimeIndex.java, LogSegment.java), big-endian,
// with offsets stored relative to the base offset in the file name:
//
//	<base>.index      8-byte entries, offsets and positions increasing
//	  [0,4)  relativeOffset int32   last offset of the indexed batch − base
//	  [4,8)  position       int32   byte position of that batch in the .log
//
//	<base>.timeindex  12-byte entries, timestamps and offsets increasing
//	  [0,8)   timestamp      int64  largest batch maxTimestamp so far
//	  [8,12)  relativeOffset int32  last offset of the batch that has it − base
//
// Which batches are indexed is LogSegment.recover's rule, applied batch by
// batch on append too (Kafka's LogSegment.append applies it per append call,
// indexing a multi-batch append at its first position with its last offset;
// for the one-batch appends of producers the two agree): a batch at
// position pos gets an offset-index entry
// when pos − (position of the previous entry, or 0) > index.interval.bytes
// (4096), so the first batch of a segment never does. With it, the time
// index gets (largest timestamp so far, last offset of the first batch that
// had it) when that timestamp is larger than the last time-index entry's
// (or than −1, RecordBatch.NO_TIMESTAMP, when there is none). An entry whose
// relative offset or position would not fit an int32 is left out (Kafka
// rolls the segment first; here the index just stays sparser). When a
// segment is rolled its time index is sealed: one last entry for the largest
// timestamp of the segment, if larger than the last entry's
// (LogSegment.onBecomeInactiveSegment).
//
// The index of a segment is therefore a function of the segment's bytes and
// of whether it was rolled. Kafka also seals on close and after recovery,
// resets its byte count on truncation and keeps the time entries below the
// truncation offset; mirrorpath does none of this (a truncation drops the
// time entries the cut batches made), so an index stays equal to what a
// rebuild from the log would give and can be checked byte for byte. Both are
// valid sparse indexes to a Kafka reader.
//
// When entries reach the files: entries are made in memory as batches are
// committed (the in-memory slices are the lookup index of Read), and written
// to the files, one Write per file, when the log syncs: by the fsync policy,
// on roll (the rolled segment is sealed and synced), on Sync and on Close.
// Between syncs the files lag behind the log; both are only durable after a
// sync anyway. A truncation cuts the files at once.
//
// On open every segment is read and CRC-checked as before; the index entries
// it should have are derived in the same pass and compared byte for byte
// with the files, after Kafka's sanity check (ParseOffsetIndex,
// ParseTimeIndex). Equal files are kept untouched. A missing, corrupt or
// different file (a crash lost or garbled entries, the log was cut, an entry
// points past the log end) is rewritten from the derivation and reported in
// Recovery.IndexesRebuilt. The active segment's time index may also be
// sealed (a crash right after a roll, or written by Kafka): its seal entry
// is cut off, so that appends go on as in a log that never stopped.
//
// Memory logs keep the offset index in memory only, with the same rule.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Entry sizes of the index files.
const (
	OffsetIndexEntrySize = 8  // relativeOffset int32, position int32
	TimeIndexEntrySize   = 12 // timestamp int64, relativeOffset int32
)

// File name suffixes of the indexes, as LogFileUtils spells them.
const (
	IndexSuffix     = ".index"
	TimeIndexSuffix = ".timeindex"
)

// indexNoTimestamp is RecordBatch.NO_TIMESTAMP: the time index appends only
// timestamps above it.
const indexNoTimestamp = -1

// Index errors. Every one matches ErrCorruptIndex with errors.Is; the
// decoders and checks return them inside an *IndexError that says which
// entry.
var (
	// ErrCorruptIndex: an index file that cannot be used (Kafka's
	// CorruptIndexException). It and the defects below match
	// codec.ErrCorruption.
	ErrCorruptIndex = codec.NewCorruption("storage: corrupt index")
	// ErrIndexSize: the file size is not a multiple of the entry size.
	ErrIndexSize = fmt.Errorf("%w: size not a multiple of the entry size", ErrCorruptIndex)
	// ErrIndexOrder: an entry does not increase on the one before it
	// (offset and position in .index, timestamp and offset in .timeindex).
	ErrIndexOrder = fmt.Errorf("%w: entries not increasing", ErrCorruptIndex)
	// ErrIndexRange: a relative offset or a position below zero (an offset
	// below the base offset of the file name).
	ErrIndexRange = fmt.Errorf("%w: offset below the base offset or negative position", ErrCorruptIndex)
	// ErrIndexMismatch: an entry disagrees with the segment's .log (no batch
	// there, another last offset, another largest timestamp, past the end).
	ErrIndexMismatch = fmt.Errorf("%w: entry disagrees with the log", ErrCorruptIndex)
	// ErrIndexMissing: a segment without its index file (found on open only).
	ErrIndexMissing = fmt.Errorf("%w: file missing", ErrCorruptIndex)
)

// IndexError says which entry of an index file is bad (counted from 0;
// Entry is the entry count when the whole file is at fault). Err is one of
// the sentinels above, Detail a human note (may be empty).
type IndexError struct {
	Entry  int
	Err    error
	Detail string
}

func (e *IndexError) Error() string {
	s := fmt.Sprintf("%v at entry %d", e.Err, e.Entry)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *IndexError) Unwrap() error { return e.Err }

// OffsetPosition is one .index entry with its absolute offset (Kafka's
// OffsetPosition): the batch at byte Position of the .log ends at Offset.
type OffsetPosition struct {
	Offset   int64
	Position int64
}

// TimestampOffset is one .timeindex entry with its absolute offset (Kafka's
// TimestampOffset): no batch up to the one that ends at Offset has a larger
// timestamp than Timestamp, and that one has it.
type TimestampOffset struct {
	Timestamp int64
	Offset    int64
}

// OffsetIndex is the decoded content of a .index file: a view of its bytes
// (it aliases them) and the base offset from the file name. The zero value
// is empty. Reading is O(1) per entry and allocates nothing.
type OffsetIndex struct {
	b    []byte
	base int64
}

// ParseOffsetIndex checks src, the bytes of a .index file whose name says
// base, as Kafka's OffsetIndex.sanityCheck does and stricter: the size is a
// multiple of 8, every relative offset and position is ≥ 0, and both grow
// strictly from entry to entry. On error it returns the entries before the
// first bad one and an *IndexError. O(len(src)); aliases src; no allocation
// on success.
func ParseOffsetIndex(src []byte, base int64) (OffsetIndex, error) {
	var o offsetOrder
	good, err := parseEntries(src, OffsetIndexEntrySize, o.check)
	return OffsetIndex{b: src[:good], base: base}, err
}

// offsetOrder is the sanity check of .index entries in file order; the
// zero value is ready for entry 0.
type offsetOrder struct {
	prevRel, prevPos int32
	started          bool
}

// check checks the next entry e (8 bytes), returning nil or the sentinel it
// breaks.
func (o *offsetOrder) check(e []byte) error {
	rel, pos := int32(binary.BigEndian.Uint32(e)), int32(binary.BigEndian.Uint32(e[4:]))
	switch {
	case rel < 0 || pos < 0:
		return ErrIndexRange
	case o.started && (rel <= o.prevRel || pos <= o.prevPos):
		return ErrIndexOrder
	}
	o.prevRel, o.prevPos, o.started = rel, pos, true
	return nil
}

// parseEntries checks the whole entries of size bytes at the start of src
// in order with check (nil for a good entry), then that src holds nothing
// after them. It returns the byte length of the entries before the first
// bad one (of all of them when none is) and, on a defect, an *IndexError
// naming the entry. check does not escape: no allocation on success.
func parseEntries(src []byte, size int, check func(e []byte) error) (int, error) {
	n := len(src) / size
	for i := range n {
		if err := check(src[i*size : (i+1)*size]); err != nil {
			return i * size, &IndexError{Entry: i, Err: err}
		}
	}
	if len(src) != n*size {
		return n * size, &IndexError{Entry: n, Err: ErrIndexSize, Detail: fmt.Sprintf("%d bytes", len(src))}
	}
	return n * size, nil
}

// Len is the number of entries.
func (x OffsetIndex) Len() int { return len(x.b) / OffsetIndexEntrySize }

// Base is the base offset the relative offsets count from.
func (x OffsetIndex) Base() int64 { return x.base }

// Entry returns entry i (0 ≤ i < Len).
func (x OffsetIndex) Entry(i int) OffsetPosition {
	e := x.b[i*OffsetIndexEntrySize:]
	return OffsetPosition{
		Offset:   x.base + int64(int32(binary.BigEndian.Uint32(e))),
		Position: int64(int32(binary.BigEndian.Uint32(e[4:]))),
	}
}

// Lookup is OffsetIndex.lookup: the last entry whose offset is at most
// offset, or (base, 0) when there is none. O(log Len).
func (x OffsetIndex) Lookup(offset int64) OffsetPosition {
	lo, hi := 0, x.Len() // find the first entry above offset
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.Entry(m).Offset <= offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return OffsetPosition{Offset: x.base, Position: 0}
	}
	return x.Entry(lo - 1)
}

// AppendOffsetEntry appends the 8 bytes of e to dst, relative to base. The
// caller keeps e.Offset−base and e.Position within int32.
func AppendOffsetEntry(dst []byte, base int64, e OffsetPosition) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(e.Offset-base)))
	return binary.BigEndian.AppendUint32(dst, uint32(int32(e.Position)))
}

// TimeIndex is the decoded content of a .timeindex file: a view of its
// bytes (it aliases them) and the base offset from the file name.
type TimeIndex struct {
	b    []byte
	base int64
}

// ParseTimeIndex checks src, the bytes of a .timeindex file whose name says
// base, as Kafka's TimeIndex.sanityCheck does and stricter: the size is a
// multiple of 12, every relative offset is ≥ 0, timestamps grow strictly
// from above NO_TIMESTAMP (−1) and offsets never go back
// (TimeIndex.maybeAppend's rules). On error it
// returns the entries before the first bad one and an *IndexError.
// O(len(src)); aliases src; no allocation on success.
func ParseTimeIndex(src []byte, base int64) (TimeIndex, error) {
	o := newTimeOrder()
	good, err := parseEntries(src, TimeIndexEntrySize, o.check)
	return TimeIndex{b: src[:good], base: base}, err
}

// timeOrder is the sanity check of .timeindex entries in file order;
// newTimeOrder is ready for entry 0.
type timeOrder struct {
	prevTs  int64
	prevRel int32
}

func newTimeOrder() timeOrder { return timeOrder{prevTs: indexNoTimestamp, prevRel: -1} }

// check checks the next entry e (12 bytes), returning nil or the sentinel
// it breaks.
func (o *timeOrder) check(e []byte) error {
	ts, rel := int64(binary.BigEndian.Uint64(e)), int32(binary.BigEndian.Uint32(e[8:]))
	switch {
	case rel < 0:
		return ErrIndexRange
	case ts <= o.prevTs || rel < o.prevRel:
		return ErrIndexOrder
	}
	o.prevTs, o.prevRel = ts, rel
	return nil
}

// Len is the number of entries.
func (x TimeIndex) Len() int { return len(x.b) / TimeIndexEntrySize }

// Base is the base offset the relative offsets count from.
func (x TimeIndex) Base() int64 { return x.base }

// Entry returns entry i (0 ≤ i < Len).
func (x TimeIndex) Entry(i int) TimestampOffset {
	e := x.b[i*TimeIndexEntrySize:]
	return TimestampOffset{
		Timestamp: int64(binary.BigEndian.Uint64(e)),
		Offset:    x.base + int64(int32(binary.BigEndian.Uint32(e[8:]))),
	}
}

// AppendTimeEntry appends the 12 bytes of e to dst, relative to base. The
// caller keeps e.Offset−base within int32.
func AppendTimeEntry(dst []byte, base int64, e TimestampOffset) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(int32(e.Offset-base)))
}

// batchHead is what the index checks read of a batch header.
type batchHead struct {
	pos, size, base, last, maxTs int64
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
	return batchHead{pos: pos, size: size, base: base, last: base + int64(b.LastOffsetDelta()), maxTs: b.MaxTimestamp()}, true
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
	maxTs   int64
}

// check returns nil or an *IndexError matching ErrIndexMismatch for entry i.
func (v *timeVerifier[H]) check(i int, e TimestampOffset) error {
	if !v.started {
		v.h, v.ok = v.log.head(0)
		v.started, v.maxTs = true, math.MinInt64
		if v.ok {
			v.maxTs = v.h.maxTs
		}
	}
	for v.ok && v.h.last < e.Offset {
		if v.h, v.ok = v.log.head(v.h.pos + v.h.size); v.ok {
			v.maxTs = max(v.maxTs, v.h.maxTs)
		}
	}
	var detail string
	switch {
	case !v.ok:
		detail = fmt.Sprintf("offset %d is past the last batch", e.Offset)
	case v.h.base > e.Offset:
		detail = fmt.Sprintf("no batch holds offset %d", e.Offset)
	case v.maxTs != e.Timestamp:
		detail = fmt.Sprintf("index timestamp %d, largest timestamp through offset %d is %d", e.Timestamp, e.Offset, v.maxTs)
	default:
		return nil
	}
	return &IndexError{Entry: i, Err: ErrIndexMismatch, Detail: detail}
}

// indexEntry is an in-memory .index entry: the batch at pos ends at offset.
type indexEntry struct {
	offset int64 // last offset of the batch
	pos    int64
}

// timeEntry is an in-memory .timeindex entry; pos is the position of the
// batch whose offset-index entry made it (MaxInt64 for the seal), so that a
// truncation knows which entries the cut batches made.
type timeEntry struct {
	ts, offset, pos int64
}

// fitsIndex reports whether a batch ending at last and starting at pos can
// be indexed in a segment at base (relative offset and position in int32).
func fitsIndex(base, last, pos int64) bool {
	return last-base <= math.MaxInt32 && pos <= math.MaxInt32
}

// indexBatch applies the index rule of a file segment to the batch at pos
// ending at last with maxTimestamp maxTs: the time index's running maximum
// first, then an entry in both indexes when the interval has passed.
// Amortized O(1), no allocation once the slices have grown.
func (s *segment) indexBatch(last, maxTs, pos int64) {
	if maxTs > s.maxTs {
		s.maxTs, s.maxTsOffset = maxTs, last
	}
	if pos-s.lastIndexed <= IndexIntervalBytes || !fitsIndex(s.base, last, pos) {
		return
	}
	s.index = append(s.index, indexEntry{last, pos})
	s.lastIndexed = pos
	if s.maxTs > s.lastTimestamp() {
		s.times = append(s.times, timeEntry{s.maxTs, s.maxTsOffset, pos})
	}
}

// lastTimestamp is the timestamp of the last time-index entry, or
// NO_TIMESTAMP.
func (s *segment) lastTimestamp() int64 {
	if n := len(s.times); n > 0 {
		return s.times[n-1].ts
	}
	return indexNoTimestamp
}

// seal adds the roll entry of the time index: the largest timestamp of the
// segment, when it is above the last entry's.
func (s *segment) seal() {
	if s.sealed {
		return
	}
	s.sealed = true
	if s.maxTs > s.lastTimestamp() {
		s.times = append(s.times, timeEntry{s.maxTs, s.maxTsOffset, math.MaxInt64})
	}
}

// appendIndexBytes encodes entries [from:] of the offset index.
func (s *segment) appendIndexBytes(dst []byte, from int) []byte {
	for _, e := range s.index[from:] {
		dst = AppendOffsetEntry(dst, s.base, OffsetPosition{e.offset, e.pos})
	}
	return dst
}

// appendTimeBytes encodes entries [from:] of the time index.
func (s *segment) appendTimeBytes(dst []byte, from int) []byte {
	for _, e := range s.times[from:] {
		dst = AppendTimeEntry(dst, s.base, TimestampOffset{e.ts, e.offset})
	}
	return dst
}

// writeIndex appends the entries of s that are not in its index files yet,
// one Write per file. A failed write is cut back to the last whole entry.
func (l *Log) writeIndex(s *segment) error {
	if n := len(s.index); n > s.idxFlushed {
		l.idxBuf = s.appendIndexBytes(l.idxBuf[:0], s.idxFlushed)
		if _, err := s.idx.Write(l.idxBuf); err != nil {
			s.idx.Truncate(int64(s.idxFlushed) * OffsetIndexEntrySize)
			return err
		}
		s.idxFlushed, s.idxDirty = n, true
	}
	if n := len(s.times); n > s.timesFlushed {
		l.idxBuf = s.appendTimeBytes(l.idxBuf[:0], s.timesFlushed)
		if _, err := s.tidx.Write(l.idxBuf); err != nil {
			s.tidx.Truncate(int64(s.timesFlushed) * TimeIndexEntrySize)
			return err
		}
		s.timesFlushed, s.idxDirty = n, true
	}
	return nil
}

// truncateIndex drops the entries made by batches at or after pos (the
// segment was cut there and is the active one again), the seal entry
// included, cuts the files to match, and restores the running state as a
// rebuild of the remaining bytes would leave it: the largest timestamp is
// the last time entry's plus a header walk from the last offset entry to
// pos (at most about one index interval of batches).
func (s *segment) truncateIndex(pos int64) error {
	n := len(s.index)
	for n > 0 && s.index[n-1].pos >= pos {
		n--
	}
	s.index = s.index[:n]
	s.lastIndexed = 0
	if n > 0 {
		s.lastIndexed = s.index[n-1].pos
	}
	if s.file == nil {
		return nil // memory log: no time index
	}
	m := len(s.times)
	for m > 0 && s.times[m-1].pos >= pos {
		m--
	}
	s.times = s.times[:m]
	s.sealed = false
	s.maxTs, s.maxTsOffset = indexNoTimestamp, -1
	if m > 0 {
		s.maxTs, s.maxTsOffset = s.times[m-1].ts, s.times[m-1].offset
	}
	var h [codec.OffMaxTimestamp + 8]byte
	for at := s.lastIndexed; at < pos; {
		if err := s.header(h[:], at); err != nil {
			return err
		}
		b := codec.Batch(h[:])
		if ts := b.MaxTimestamp(); ts > s.maxTs {
			s.maxTs, s.maxTsOffset = ts, b.BaseOffset()+int64(b.LastOffsetDelta())
		}
		at += int64(b.BatchLength()) + codec.LogOverhead
	}
	if n < s.idxFlushed {
		if err := s.idx.Truncate(int64(n) * OffsetIndexEntrySize); err != nil {
			return err
		}
		s.idxFlushed, s.idxDirty = n, true
	}
	if m < s.timesFlushed {
		if err := s.tidx.Truncate(int64(m) * TimeIndexEntrySize); err != nil {
			return err
		}
		s.timesFlushed, s.idxDirty = m, true
	}
	return nil
}

// loadIndex reconciles the index files of s, a segment just recovered (its
// entries derived from its batches), with the derivation: files equal to it
// are kept, others rewritten at the next sync. Every segment but the active
// one is sealed. present lists the index file names found on open. A sealed
// time index of the active segment loses its seal entry instead.
func (l *Log) loadIndex(s *segment, active bool, present map[string]bool, rec *Recovery) error {
	if !active {
		s.seal()
	}
	rebuilt := func(err error) {
		rec.IndexesRebuilt++
		if rec.IndexReason == nil {
			rec.IndexReason = err
		}
	}
	// Offset index.
	name := FileName(l.cfg.Dir, s.base, IndexSuffix)
	got, err := l.readIndex(name, present)
	if err != nil {
		return err
	}
	l.idxBuf = s.appendIndexBytes(l.idxBuf[:0], 0)
	s.idxFlushed = len(s.index)
	if verdict := indexVerdict(got, l.idxBuf, present[filepath.Base(name)], func() error {
		_, err := ParseOffsetIndex(got, s.base)
		return err
	}); verdict != nil {
		rebuilt(verdict)
		if err := s.idx.Truncate(0); err != nil {
			return err
		}
		s.idxFlushed = 0
	}
	// Time index.
	name = FileName(l.cfg.Dir, s.base, TimeIndexSuffix)
	if got, err = l.readIndex(name, present); err != nil {
		return err
	}
	l.idxBuf = s.appendTimeBytes(l.idxBuf[:0], 0)
	s.timesFlushed = len(s.times)
	if active && s.maxTs > s.lastTimestamp() && len(got) == len(l.idxBuf)+TimeIndexEntrySize &&
		bytes.Equal(got[len(l.idxBuf):], AppendTimeEntry(nil, s.base, TimestampOffset{s.maxTs, s.maxTsOffset})) {
		// Sealed: drop the seal so that appends go on as in an open segment.
		got = got[:len(l.idxBuf)]
		if err := s.tidx.Truncate(int64(len(got))); err != nil {
			return err
		}
		s.idxDirty = true
	}
	if verdict := indexVerdict(got, l.idxBuf, present[filepath.Base(name)], func() error {
		_, err := ParseTimeIndex(got, s.base)
		return err
	}); verdict != nil {
		rebuilt(verdict)
		if err := s.tidx.Truncate(0); err != nil {
			return err
		}
		s.timesFlushed = 0
	}
	return nil
}

// readIndex reads an index file that present says exists, or returns nil.
func (l *Log) readIndex(name string, present map[string]bool) ([]byte, error) {
	if !present[filepath.Base(name)] {
		return nil, nil
	}
	return l.cfg.FS.ReadFile(name)
}

// indexVerdict is nil when the file's bytes got equal want, and otherwise
// the reason to rebuild: missing, the sanity check's error, or a mismatch.
func indexVerdict(got, want []byte, present bool, sanity func() error) error {
	switch {
	case present && bytes.Equal(got, want):
		return nil
	case !present:
		return ErrIndexMissing
	}
	if err := sanity(); err != nil {
		return err
	}
	return ErrIndexMismatch
}
