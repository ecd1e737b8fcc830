package storage

import (
	"bytes"
	"errors"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// Recovery reports what opening a file log found.
type Recovery struct {
	// Segments is the number of segments kept.
	Segments int
	// TruncatedAt is the byte position in segment TruncatedSegment where a
	// torn or corrupt tail was cut, or -1 when the log was whole.
	TruncatedSegment int64
	TruncatedAt      int64
	// TruncatedBytes counts the bytes dropped, deleted segments included.
	TruncatedBytes int64
	// Reason is the defect at the cut (codec.ErrPartial, codec.ErrCRC, …).
	Reason error
	// IndexesRebuilt counts the .index and .timeindex files rewritten from
	// the log because they were missing, corrupt or disagreed with it;
	// IndexReason is the first such defect (ErrIndexMissing, ErrIndexSize,
	// ErrIndexOrder, ErrIndexRange, ErrIndexMismatch), nil when none.
	IndexesRebuilt int
	IndexReason    error
}

// ErrOffsetRegression is the Recovery.Reason of a batch whose offsets go
// backwards in a segment, or of a segment that starts below the end of the
// one before it.
var ErrOffsetRegression = errors.New("storage: batch offsets go backwards")

// ErrOffsetOverflow is the Recovery.Reason of a batch whose last offset is
// math.MaxInt64 or beyond: the log's next offset would not be an int64
// (Kafka's LogSegment#recover refuses it through ensureOffsetInRange).
var ErrOffsetOverflow = errors.New("storage: batch offsets overflow")

// openFileLog opens (creating when empty) the log in cfg.Dir, cutting a torn
// tail: every segment is read, and at the first batch that is partial,
// fails its CRC or goes backwards in offsets the segment is truncated and
// every later segment deleted.
func openFileLog(cfg Config) (*Log, Recovery, error) {
	rec := Recovery{TruncatedSegment: -1, TruncatedAt: -1}
	if err := cfg.FS.MkdirAll(cfg.Dir); err != nil {
		return nil, rec, err
	}
	names, err := cfg.FS.ReadDir(cfg.Dir)
	if err != nil {
		return nil, rec, err
	}
	var bases []int64
	txnFiles := map[int64]bool{} // bases with index files of any kind
	indexes := map[string]bool{} // .index and .timeindex names present
	for _, n := range names {
		if o, ok := ParseFileName(n, LogSuffix); ok {
			bases = append(bases, o)
		} else if o, ok := ParseFileName(n, TxnIndexSuffix); ok {
			txnFiles[o] = true
		} else if o, ok := ParseFileName(n, IndexSuffix); ok {
			txnFiles[o], indexes[n] = true, true
		} else if o, ok := ParseFileName(n, TimeIndexSuffix); ok {
			txnFiles[o], indexes[n] = true, true
		}
	}
	slices.Sort(bases)
	fst := &fileStore{fs: cfg.FS, dir: cfg.Dir}
	l := &Log{cfg: cfg, st: fst}
	cut := false
	for _, base := range bases {
		name := FileName(cfg.Dir, base, LogSuffix)
		delete(txnFiles, base)
		// A segment may start past the end of the one before (a roll after
		// a truncation inside a batch), never below it.
		if cut || (len(l.segs) > 0 && base < l.end) {
			if !cut {
				cut, rec.Reason = true, ErrOffsetRegression
				rec.TruncatedSegment, rec.TruncatedAt = base, 0
			}
			size, err := fileSize(cfg.FS, name)
			if err != nil {
				return nil, rec, err
			}
			rec.TruncatedBytes += size
			fst.dirDirty = true
			for _, suffix := range segmentSuffixes {
				if err := cfg.FS.Remove(FileName(cfg.Dir, base, suffix)); err != nil {
					return nil, rec, err
				}
			}
			continue
		}
		s, err := l.recoverSegment(fst, base, &rec)
		if err != nil {
			return nil, rec, err
		}
		cut = rec.TruncatedAt >= 0
		if len(l.segs) == 0 {
			l.start = s.base
		}
		l.segs = append(l.segs, s)
		l.end = s.next
	}
	for base := range txnFiles { // indexes without their segment
		fst.dirDirty = true
		for _, suffix := range segmentSuffixes[1:] {
			if err := cfg.FS.Remove(FileName(cfg.Dir, base, suffix)); err != nil {
				return nil, rec, err
			}
		}
	}
	for i, s := range l.segs {
		if err := fst.loadIndex(s, i == len(l.segs)-1, indexes, &rec); err != nil {
			return nil, rec, err
		}
	}
	if len(l.segs) == 0 {
		s, err := l.newSegment(0, false)
		if err != nil {
			return nil, rec, err
		}
		l.segs = []*segment{s}
	}
	rec.Segments = len(l.segs)
	l.synced = l.end
	if cfg.Now != nil {
		fst.lastSync = cfg.Now()
	}
	return l, rec, l.Sync()
}

// fileSize is the size of the existing file name.
func fileSize(fs vfs.FS, name string) (int64, error) {
	f, size, err := fs.OpenAppend(name)
	if err != nil {
		return 0, err
	}
	return size, f.Close()
}

// recoverSegment opens the segment at base, cuts it at the first bad batch
// (recording where in rec) and reloads its transaction index. The segment
// is read through its file one batch at a time (codec.BatchReader), so
// memory is bounded by its largest batch, not its size; the reader's bound
// is the file's size, so no batch the log holds whole is refused.
func (l *Log) recoverSegment(f *fileStore, base int64, rec *Recovery) (*segment, error) {
	s, err := l.newSegment(base, true)
	if err != nil {
		return nil, err
	}
	size := s.size // the file's, from newSegment
	r := codec.NewBatchReader(io.NewSectionReader(s.file, 0, size), 0, size, int(min(size, math.MaxInt32+codec.LogOverhead)))
	r.CheckCRC = false
	next := base
	pos := int64(0)
	for {
		b, _, err := r.Next()
		if err == io.EOF {
			break
		}
		var fe *codec.FormatError
		switch {
		case errors.As(err, &fe):
			err = fe.Err
		case err != nil:
			return nil, err // the file could not be read
		case b.VerifyCRC() != nil:
			err = codec.ErrCRC
		case b.BaseOffset() < next || b.LastOffsetDelta() < 0:
			err = ErrOffsetRegression
		case b.BaseOffset() >= math.MaxInt64-int64(b.LastOffsetDelta()):
			err = ErrOffsetOverflow
		}
		if err != nil {
			rec.TruncatedSegment, rec.TruncatedAt, rec.Reason = base, pos, err
			rec.TruncatedBytes += size - pos
			if err := s.file.Truncate(pos); err != nil {
				return nil, err
			}
			break
		}
		s.indexBatch(b.LastOffset(), b.MaxTimestamp(), pos)
		next = b.NextOffset()
		pos += int64(len(b))
	}
	s.size, s.next = pos, next
	// Transaction index: keep the whole, increasing entries of surviving markers.
	idx, err := f.fs.ReadFile(FileName(f.dir, base, TxnIndexSuffix))
	if err != nil {
		return nil, err
	}
	keep := 0
	for ; (keep+1)*AbortedTxnSize <= len(idx); keep++ {
		t, err := ParseAbortedTxn(idx[keep*AbortedTxnSize:])
		if err != nil || t.LastOffset >= next ||
			(len(s.aborted) > 0 && t.LastOffset <= s.aborted[len(s.aborted)-1].LastOffset) {
			break
		}
		s.aborted = append(s.aborted, t)
	}
	if keep*AbortedTxnSize != len(idx) {
		if err := s.txn.Truncate(int64(keep) * AbortedTxnSize); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// loadIndex reconciles the index files of s, a segment just recovered (its
// entries derived from its batches), with the derivation: files equal to it
// are kept, others rewritten at the next sync. Every segment but the active
// one is sealed. present lists the index file names found on open. A sealed
// time index of the active segment loses its seal entry instead.
func (f *fileStore) loadIndex(s *segment, active bool, present map[string]bool, rec *Recovery) error {
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
	name := FileName(f.dir, s.base, IndexSuffix)
	got, err := f.readIndex(name, present)
	if err != nil {
		return err
	}
	f.idxBuf = s.appendIndexBytes(f.idxBuf[:0], 0)
	s.idxFlushed = len(s.index)
	if verdict := indexVerdict(got, f.idxBuf, present[filepath.Base(name)], func() error {
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
	name = FileName(f.dir, s.base, TimeIndexSuffix)
	if got, err = f.readIndex(name, present); err != nil {
		return err
	}
	f.idxBuf = s.appendTimeBytes(f.idxBuf[:0], 0)
	s.timesFlushed = len(s.times)
	if active && s.maxTS > s.lastTimestamp() && len(got) == len(f.idxBuf)+TimeIndexEntrySize &&
		bytes.Equal(got[len(f.idxBuf):], AppendTimeEntry(nil, s.base, TimestampOffset{s.maxTS, s.maxTSOffset})) {
		// Sealed: drop the seal so that appends go on as in an open segment.
		got = got[:len(f.idxBuf)]
		if err := s.tidx.Truncate(int64(len(got))); err != nil {
			return err
		}
		s.idxDirty = true
	}
	if verdict := indexVerdict(got, f.idxBuf, present[filepath.Base(name)], func() error {
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
func (f *fileStore) readIndex(name string, present map[string]bool) ([]byte, error) {
	if !present[filepath.Base(name)] {
		return nil, nil
	}
	return f.fs.ReadFile(name)
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
