package storage

import (
	"math"

	"github.com/mirrorpath/mirrorpath/codec"
)

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
// ending at last with maxTimestamp maxTS: the time index's running maximum
// first, then an entry in both indexes when the interval has passed.
// Amortized O(1), no allocation once the slices have grown.
func (s *segment) indexBatch(last, maxTS, pos int64) {
	if maxTS > s.maxTS {
		s.maxTS, s.maxTSOffset = maxTS, last
	}
	if pos-s.lastIndexed <= IndexIntervalBytes || !fitsIndex(s.base, last, pos) {
		return
	}
	s.index = append(s.index, indexEntry{last, pos})
	s.lastIndexed = pos
	if s.maxTS > s.lastTimestamp() {
		s.times = append(s.times, timeEntry{s.maxTS, s.maxTSOffset, pos})
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
	if s.maxTS > s.lastTimestamp() {
		s.times = append(s.times, timeEntry{s.maxTS, s.maxTSOffset, math.MaxInt64})
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

// truncateOffsetIndex drops the offset-index entries made by batches at or
// after pos (the segment was cut there and is the active one again).
func (s *segment) truncateOffsetIndex(pos int64) {
	n := len(s.index)
	for n > 0 && s.index[n-1].pos >= pos {
		n--
	}
	s.index = s.index[:n]
	s.lastIndexed = 0
	if n > 0 {
		s.lastIndexed = s.index[n-1].pos
	}
}

// truncateFileIndex, after truncateOffsetIndex, drops the time-index
// entries made by batches at or after pos, the seal entry included, cuts
// the index files to match, and restores the running state as a rebuild of
// the remaining bytes would leave it: the largest timestamp is the last
// time entry's plus a header walk from the last offset entry to pos (at
// most about one index interval of batches).
func (s *segment) truncateFileIndex(pos int64) error {
	n := len(s.index)
	m := len(s.times)
	for m > 0 && s.times[m-1].pos >= pos {
		m--
	}
	s.times = s.times[:m]
	s.sealed = false
	s.maxTS, s.maxTSOffset = indexNoTimestamp, -1
	if m > 0 {
		s.maxTS, s.maxTSOffset = s.times[m-1].ts, s.times[m-1].offset
	}
	var h [codec.OffMaxTimestamp + 8]byte
	for at := s.lastIndexed; at < pos; {
		if err := s.header(h[:], at); err != nil {
			return err
		}
		b := codec.Batch(h[:])
		if ts := b.MaxTimestamp(); ts > s.maxTS {
			s.maxTS, s.maxTSOffset = ts, b.BaseOffset()+int64(b.LastOffsetDelta())
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
