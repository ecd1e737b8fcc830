package storage

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// File name suffixes, as Kafka's LogFileUtils spells them.
const (
	LogSuffix      = ".log"
	TxnIndexSuffix = ".txnindex"
	SnapshotSuffix = ".snapshot"
)

// FileName is Kafka's <20-digit zero-padded offset><suffix>.
func FileName(dir string, offset int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, suffix))
}

// ParseFileName returns the offset of a name like 00000000000000000042.log.
func ParseFileName(name, suffix string) (int64, bool) {
	s, ok := strings.CutSuffix(name, suffix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	o, err := strconv.ParseInt(s, 10, 64)
	return o, err == nil && o >= 0
}

// segmentSuffixes are the files of one segment.
var segmentSuffixes = [...]string{LogSuffix, TxnIndexSuffix, IndexSuffix, TimeIndexSuffix}

// fileStore keeps a log's segments in the files of Config.Dir through
// Config.FS: <base>.log, .txnindex, .index and .timeindex per segment.
type fileStore struct {
	fs       vfs.FS
	dir      string
	lastSync time.Time
	scratch  []byte // staging buffer
	idxBuf   []byte // index entries being written
	// dirDirty: files were created or removed in dir since the last
	// directory sync.
	dirDirty bool
}

func (*fileStore) take() *segment { return &segment{} }

// open opens (creating when absent) the four files of s.
func (f *fileStore) open(s *segment, recovering bool) error {
	f.dirDirty = true // the segment's files may be new
	lf, fsize, err := f.fs.OpenAppend(FileName(f.dir, s.base, LogSuffix))
	if err != nil {
		return err
	}
	if recovering {
		s.size = fsize // recoverSegment's scan bound; it sets the size kept
	}
	t, _, err := f.fs.OpenAppend(FileName(f.dir, s.base, TxnIndexSuffix))
	if err != nil {
		lf.Close()
		return err
	}
	x, xn, err := f.fs.OpenAppend(FileName(f.dir, s.base, IndexSuffix))
	if err != nil {
		lf.Close()
		t.Close()
		return err
	}
	ti, tn, err := f.fs.OpenAppend(FileName(f.dir, s.base, TimeIndexSuffix))
	if err != nil {
		lf.Close()
		t.Close()
		x.Close()
		return err
	}
	s.file, s.txn, s.idx, s.tidx = lf, t, x, ti
	s.r = lf
	if !recovering {
		// A stale index left at this base (none is expected) would be
		// appended to: start both empty.
		if err := truncateStale(x, xn); err != nil {
			return err
		}
		if err := truncateStale(ti, tn); err != nil {
			return err
		}
	}
	return nil
}

func truncateStale(f vfs.File, size int64) error {
	if size == 0 {
		return nil
	}
	return f.Truncate(0)
}

// remove deletes the files of s and syncs the directory.
func (f *fileStore) remove(s *segment) error {
	s.closeFiles()
	f.dirDirty = true
	for _, suffix := range segmentSuffixes {
		if err := f.fs.Remove(FileName(f.dir, s.base, suffix)); err != nil {
			return err
		}
	}
	return f.syncDir()
}

func (s *segment) closeFiles() {
	s.file.Close()
	s.txn.Close()
	s.idx.Close()
	s.tidx.Close()
}

// stage returns the staging buffer.
func (f *fileStore) stage(_ *segment, n int) []byte { return f.stageRolled(n) }

func (f *fileStore) stageRolled(n int) []byte {
	if cap(f.scratch) < n {
		f.scratch = make([]byte, n, max(n, 2*cap(f.scratch)))
	}
	return f.scratch[:n]
}

// commit writes data to a's file and indexes its batches (both indexes).
// indexDue: no batch of a file log is the caller's to index; commitIndexed
// walks data as commit does (the time index needs each batch's
// maxTimestamp) and ignores idx.
func (*fileStore) indexDue(*segment) int64 { return math.MaxInt64 }

func (f *fileStore) commitIndexed(l *Log, a *segment, data []byte, next int64, _ []OffsetPosition) error {
	return f.commit(l, a, data, next)
}

func (*fileStore) commit(l *Log, a *segment, data []byte, next int64) error {
	pos := a.size
	if _, err := a.file.Write(data); err != nil {
		a.file.Truncate(a.size) // best effort: leave no partial batch behind
		return err
	}
	a.dirty = true
	for off := 0; off < len(data); {
		b := codec.Batch(data[off:])
		a.indexBatch(b.LastOffset(), b.MaxTimestamp(), pos+int64(off))
		off += int(b.BatchLength()) + codec.LogOverhead
	}
	a.size += int64(len(data))
	a.next = next
	l.end = next
	return nil
}

func (*fileStore) appendAborted(s *segment, t AbortedTxn) error {
	var buf [AbortedTxnSize]byte
	if _, err := s.txn.Write(t.AppendTo(buf[:0])); err != nil {
		return err
	}
	s.dirty = true
	return nil
}

func (*fileStore) truncateAborted(s *segment, keep int) error {
	if !s.truncateAborted(keep) {
		return nil
	}
	if err := s.txn.Truncate(int64(keep) * AbortedTxnSize); err != nil {
		return err
	}
	s.dirty = true
	return nil
}

func (f *fileStore) truncate(s *segment, pos, next int64, keep int) error {
	if err := s.file.Truncate(pos); err != nil {
		return err
	}
	s.size, s.next = pos, next
	s.truncateOffsetIndex(pos)
	if err := s.truncateFileIndex(pos); err != nil {
		return err
	}
	if s.truncateAborted(keep) {
		if err := s.txn.Truncate(int64(keep) * AbortedTxnSize); err != nil {
			return err
		}
	}
	s.dirty, s.idxDirty = true, true
	return nil
}

// batches reads the segment's bytes from pos into a new buffer.
func (*fileStore) batches(s *segment, pos int64) ([]byte, error) {
	data := make([]byte, s.size-pos)
	if err := s.readAt(data, pos); err != nil {
		return nil, err
	}
	return data, nil
}

// roll seals the active segment's time index and syncs, whatever the
// policy: Kafka flushes a rolled segment, and its sealed time index with it.
func (*fileStore) roll(l *Log, a *segment) error {
	a.seal()
	return l.Sync()
}

func (f *fileStore) sync(l *Log) error {
	for _, s := range l.segs {
		if err := f.writeIndex(s); err != nil {
			return err
		}
		if s.dirty {
			if err := s.file.Sync(); err != nil {
				return err
			}
			if err := s.txn.Sync(); err != nil {
				return err
			}
			s.dirty = false
		}
		if s.idxDirty {
			if err := s.idx.Sync(); err != nil {
				return err
			}
			if err := s.tidx.Sync(); err != nil {
				return err
			}
			s.idxDirty = false
		}
	}
	if err := f.syncDir(); err != nil {
		return err
	}
	l.synced = l.end
	if l.cfg.Now != nil {
		f.lastSync = l.cfg.Now()
	}
	return nil
}

func (f *fileStore) maybeSync(l *Log) error {
	switch l.cfg.Sync {
	case SyncAlways:
		return l.Sync()
	case SyncInterval:
		if l.cfg.Now().Sub(f.lastSync) >= l.cfg.SyncInterval {
			return l.Sync()
		}
	}
	return nil
}

func (f *fileStore) close(l *Log) error {
	err := l.Sync()
	for _, s := range l.segs {
		s.closeFiles()
	}
	return err
}

// syncDir syncs the log directory when files were created or removed in
// it since its last sync.
func (f *fileStore) syncDir() error {
	if !f.dirDirty {
		return nil
	}
	if err := f.fs.SyncDir(f.dir); err != nil {
		return err
	}
	f.dirDirty = false
	return nil
}

// writeIndex appends the entries of s that are not in its index files yet,
// one Write per file. A failed write is cut back to the last whole entry.
func (f *fileStore) writeIndex(s *segment) error {
	if n := len(s.index); n > s.idxFlushed {
		f.idxBuf = s.appendIndexBytes(f.idxBuf[:0], s.idxFlushed)
		if _, err := s.idx.Write(f.idxBuf); err != nil {
			s.idx.Truncate(int64(s.idxFlushed) * OffsetIndexEntrySize)
			return err
		}
		s.idxFlushed, s.idxDirty = n, true
	}
	if n := len(s.times); n > s.timesFlushed {
		f.idxBuf = s.appendTimeBytes(f.idxBuf[:0], s.timesFlushed)
		if _, err := s.tidx.Write(f.idxBuf); err != nil {
			s.tidx.Truncate(int64(s.timesFlushed) * TimeIndexEntrySize)
			return err
		}
		s.timesFlushed, s.idxDirty = n, true
	}
	return nil
}
