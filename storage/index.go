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
	"encoding/binary"
	"fmt"

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
	prevTS  int64
	prevRel int32
}

func newTimeOrder() timeOrder { return timeOrder{prevTS: indexNoTimestamp, prevRel: -1} }

// check checks the next entry e (12 bytes), returning nil or the sentinel
// it breaks.
func (o *timeOrder) check(e []byte) error {
	ts, rel := int64(binary.BigEndian.Uint64(e)), int32(binary.BigEndian.Uint32(e[8:]))
	switch {
	case rel < 0:
		return ErrIndexRange
	case ts <= o.prevTS || rel < o.prevRel:
		return ErrIndexOrder
	}
	o.prevTS, o.prevRel = ts, rel
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
