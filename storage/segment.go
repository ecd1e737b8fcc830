package storage

import (
	"io"
	"sort"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// store keeps the bytes and transaction-index entries of a log's segments:
// memStore in byte slices (Config.Dir == ""), fileStore in the files of
// Config.Dir. Open chooses one and the log never asks which, as pebble's
// code writes through vfs.FS whether it is a MemFS or the disk. The
// segment's offsets, sparse offset index and aborted transactions are the
// log's (segment); a store moves bytes and makes them durable.
type store interface {
	// take returns the segment the next newSegment readies (a recycled
	// one for a memory store).
	take() *segment
	// open readies the bytes of s, just reset at s.base. recovering keeps
	// existing index files for Open to check and sets s.size to the
	// existing log file's.
	open(s *segment, recovering bool) error
	// remove drops s's bytes: recycled, or its files deleted durably.
	remove(s *segment) error
	// stage is Stage when the active segment's buffer lacks room for n
	// bytes (always, for a file segment, which has none).
	stage(a *segment, n int) []byte
	// stageRolled is StageRolled.
	stageRolled(n int) []byte
	// commit is Commit on the active segment a.
	commit(l *Log, a *segment, data []byte, next int64) error
	// indexDue is IndexDue for the active segment a.
	indexDue(a *segment) int64
	// commitIndexed is CommitIndexed on the active segment a.
	commitIndexed(l *Log, a *segment, data []byte, next int64, idx []OffsetPosition) error
	// appendAborted stores t, already in s.aborted.
	appendAborted(s *segment, t AbortedTxn) error
	// truncateAborted keeps the first keep transaction-index entries of s.
	truncateAborted(s *segment, keep int) error
	// truncate cuts s at byte position pos, whose first offset is next,
	// with its indexes and its transaction-index entries beyond keep.
	truncate(s *segment, pos, next int64, keep int) error
	// batches returns the bytes of s from pos: aliased (memory) or read
	// into a new buffer (file).
	batches(s *segment, pos int64) ([]byte, error)
	// roll prepares the active segment a for the roll: a file store seals
	// its time index and syncs the log.
	roll(l *Log, a *segment) error
	// sync is Sync, maybeSync MaybeSync, close Close.
	sync(l *Log) error
	maybeSync(l *Log) error
	close(l *Log) error
}

// segment is one segment of the log: offsets, sparse indexes and aborted
// transactions, with its bytes in a memory segment (mem) or in files.
type segment struct {
	// The fields an append to a memory segment touches come first.
	base        int64
	next        int64 // log end offset of the segment (base when empty)
	size        int64
	mem         []byte       // memory segment: the bytes, len == size
	index       []indexEntry // sparse offset index, by position (both logs)
	lastIndexed int64        // position of the last index entry, 0 when none
	// r reads the segment's bytes: the file, or mem (memReader).
	r         io.ReaderAt
	file      vfs.File // file segment
	txn       vfs.File
	idx, tidx vfs.File // file segment: .index and .timeindex
	aborted   []AbortedTxn
	times     []timeEntry // time index (file segment)
	// maxTS is the largest batch maxTimestamp so far (NO_TIMESTAMP when
	// none) and maxTSOffset the last offset of the first batch that had it
	// (file segment).
	maxTS, maxTSOffset int64
	sealed             bool // times holds the roll entry (index.go)
	// idxFlushed and timesFlushed count the entries in the files; the rest
	// are written at the next sync.
	idxFlushed, timesFlushed int
	dirty                    bool // bytes not yet synced
	idxDirty                 bool // index files changed since the last sync
}

func (s *segment) reset(base int64) {
	s.base, s.next, s.size = base, base, 0
	s.mem = s.mem[:0]
	s.r, s.file, s.txn, s.idx, s.tidx = nil, nil, nil, nil, nil
	s.aborted = s.aborted[:0]
	s.index = s.index[:0]
	s.times = s.times[:0]
	s.lastIndexed = 0
	s.maxTS, s.maxTSOffset = indexNoTimestamp, -1
	s.sealed = false
	s.idxFlushed, s.timesFlushed = 0, 0
	s.dirty, s.idxDirty = false, false
}

// header reads the first len(dst) bytes of the batch at pos.
func (s *segment) header(dst []byte, pos int64) error {
	_, err := s.r.ReadAt(dst, pos)
	return err
}

// walk visits the batches from the last indexed one that ends at or before
// offset (OffsetIndex.lookup; the segment start when none) and calls fn with
// each batch's base offset, last offset, position and size until fn returns
// false. The batch holding offset, if any, is among those visited.
func (s *segment) walk(offset int64, fn func(base, last, pos, size int64) bool) error {
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].offset > offset }) - 1
	pos := int64(0)
	if i >= 0 {
		pos = s.index[i].pos
	}
	var h [codec.OffLastOffsetDelta + 4]byte
	for pos < s.size {
		if err := s.header(h[:], pos); err != nil {
			return err
		}
		b := codec.Batch(h[:])
		size := int64(b.BatchLength()) + codec.LogOverhead
		base := b.BaseOffset()
		if !fn(base, base+int64(b.LastOffsetDelta()), pos, size) {
			return nil
		}
		pos += size
	}
	return nil
}

// position is the byte position of the first batch whose last offset is at
// least offset, or s.size when there is none.
func (s *segment) position(offset int64) (int64, error) {
	at := s.size
	err := s.walk(offset, func(_, last, pos, _ int64) bool {
		if last >= offset {
			at = pos
			return false
		}
		return true
	})
	return at, err
}

// readAt fills dst with the bytes at pos, which lie within the segment.
func (s *segment) readAt(dst []byte, pos int64) error {
	_, err := s.r.ReadAt(dst, pos)
	if err == io.EOF {
		err = nil
	}
	return err
}

// truncateAborted drops the transaction-index entries past the first keep
// and reports whether there were any.
func (s *segment) truncateAborted(keep int) bool {
	if keep == len(s.aborted) {
		return false
	}
	s.aborted = s.aborted[:keep]
	return true
}

// newSegment makes an empty segment at base, its bytes readied by the
// store (files created for a file log). When recovering, existing index
// files are kept for openFileLog to check.
func (l *Log) newSegment(base int64, recovering bool) (*segment, error) {
	s := l.st.take()
	s.reset(base)
	if err := l.st.open(s, recovering); err != nil {
		return nil, err
	}
	return s, nil
}

// deleteSegment removes s's files and syncs the directory, or recycles its
// memory. Each deletion is durable before the next: a crash in a run of them
// (retention from the oldest, truncation from the newest) leaves the log
// contiguous, never a segment kept beyond one deleted.
func (l *Log) deleteSegment(s *segment) error { return l.st.remove(s) }
