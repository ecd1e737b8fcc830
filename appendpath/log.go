package appendpath

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// SyncPolicy says when a file-backed log calls fsync.
type SyncPolicy uint8

const (
	// SyncNever leaves flushing to the operating system (Kafka's default:
	// log.flush.interval.messages = MaxLong). Only Sync and Close sync.
	SyncNever SyncPolicy = iota
	// SyncAlways syncs after every append, before the append returns.
	SyncAlways
	// SyncInterval syncs on the first append at least Config.SyncInterval
	// after the previous sync.
	SyncInterval
)

var syncPolicyNames = [...]string{"never", "always", "interval"}

func (s SyncPolicy) String() string {
	if int(s) < len(syncPolicyNames) {
		return syncPolicyNames[s]
	}
	return "unknown"
}

// ParseSyncPolicy parses "never", "always" or "interval".
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	for i, n := range syncPolicyNames {
		if n == s {
			return SyncPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("appendpath: unknown fsync policy %q (want never|always|interval)", s)
}

// File name suffixes, as Kafka's LogFileUtils spells them.
const (
	logSuffix      = ".log"
	txnIndexSuffix = ".txnindex"
	snapshotSuffix = ".snapshot"
)

// fileName is Kafka's <20-digit zero-padded offset><suffix>.
func fileName(dir string, offset int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", offset, suffix))
}

// parseFileName returns the offset of a name like 00000000000000000042.log.
func parseFileName(name, suffix string) (int64, bool) {
	s, ok := strings.CutSuffix(name, suffix)
	if !ok || len(s) != 20 {
		return 0, false
	}
	o, err := strconv.ParseInt(s, 10, 64)
	return o, err == nil && o >= 0
}

// indexIntervalBytes is Kafka's index.interval.bytes: a batch gets a sparse
// index entry when more than this many bytes lie between it and the last
// entry (index.go).
const indexIntervalBytes = 4096

// segment is one file of the log (or its in-memory stand-in).
type segment struct {
	// The fields an append to a memory segment touches come first.
	base        int64
	next        int64 // log end offset of the segment (base when empty)
	size        int64
	mem         []byte       // memory log: the bytes, len == size
	index       []indexEntry // sparse offset index, by position (both logs)
	lastIndexed int64        // position of the last index entry, 0 when none
	file        vfs.File     // file log
	txn         vfs.File
	idx, tidx   vfs.File // file log: .index and .timeindex
	aborted     []psm.AbortedTxn
	times       []timeEntry // time index (file log)
	// maxTs is the largest batch maxTimestamp so far (NO_TIMESTAMP when
	// none) and maxTsOffset the last offset of the first batch that had it
	// (file log).
	maxTs, maxTsOffset int64
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
	s.file, s.txn, s.idx, s.tidx = nil, nil, nil, nil
	s.aborted = s.aborted[:0]
	s.index = s.index[:0]
	s.times = s.times[:0]
	s.lastIndexed = 0
	s.maxTs, s.maxTsOffset = indexNoTimestamp, -1
	s.sealed = false
	s.idxFlushed, s.timesFlushed = 0, 0
	s.dirty, s.idxDirty = false, false
}

// header reads the first len(dst) bytes of the batch at pos.
func (s *segment) header(dst []byte, pos int64) error {
	if s.file == nil {
		if int64(len(dst)) > s.size-pos {
			return io.ErrUnexpectedEOF
		}
		copy(dst, s.mem[pos:])
		return nil
	}
	_, err := s.file.ReadAt(dst, pos)
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

func (s *segment) readAt(dst []byte, pos int64) error {
	if s.file == nil {
		copy(dst, s.mem[pos:])
		return nil
	}
	_, err := s.file.ReadAt(dst, pos)
	if err == io.EOF {
		err = nil
	}
	return err
}

// logConfig is what the log takes from Config.
type logConfig struct {
	fs           vfs.FS
	dir          string // "" = in memory
	segmentBytes int64
	retain       int
	sync         SyncPolicy
	interval     time.Duration
	now          func() time.Time
}

// log is the segmented byte log of one partition. It knows batches only by
// their framing; producer state, offsets and validation live in Partition.
// Not safe for concurrent use (Partition holds its lock).
type log struct {
	cfg      logConfig
	segs     []*segment
	start    int64 // log start offset
	end      int64 // log end offset
	synced   int64 // every offset below is on stable storage
	lastSync time.Time
	scratch  []byte     // file log: staging buffer
	idxBuf   []byte     // file log: index entries being written
	free     []*segment // memory log: recycled segments
}

func (l *log) memory() bool     { return l.cfg.dir == "" }
func (l *log) active() *segment { return l.segs[len(l.segs)-1] }

func newMemLog(cfg logConfig) *log {
	l := &log{cfg: cfg}
	s := &segment{}
	s.reset(0)
	l.segs = []*segment{s}
	return l
}

// newSegment makes an empty segment at base (files created for a file log).
// When recovering, existing index files are kept for openFileLog to check.
func (l *log) newSegment(base int64, recovering bool) (*segment, error) {
	var s *segment
	if n := len(l.free); n > 0 {
		s, l.free = l.free[n-1], l.free[:n-1]
	} else {
		s = &segment{}
	}
	s.reset(base)
	if l.memory() {
		return s, nil
	}
	f, _, err := l.cfg.fs.OpenAppend(fileName(l.cfg.dir, base, logSuffix))
	if err != nil {
		return nil, err
	}
	t, _, err := l.cfg.fs.OpenAppend(fileName(l.cfg.dir, base, txnIndexSuffix))
	if err != nil {
		f.Close()
		return nil, err
	}
	x, xn, err := l.cfg.fs.OpenAppend(fileName(l.cfg.dir, base, offsetIndexSuffix))
	if err != nil {
		f.Close()
		t.Close()
		return nil, err
	}
	ti, tn, err := l.cfg.fs.OpenAppend(fileName(l.cfg.dir, base, timeIndexSuffix))
	if err != nil {
		f.Close()
		t.Close()
		x.Close()
		return nil, err
	}
	s.file, s.txn, s.idx, s.tidx = f, t, x, ti
	if !recovering {
		// A stale index left at this base (none is expected) would be
		// appended to: start both empty.
		if err := truncateStale(x, xn); err != nil {
			return nil, err
		}
		if err := truncateStale(ti, tn); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func truncateStale(f vfs.File, size int64) error {
	if size == 0 {
		return nil
	}
	return f.Truncate(0)
}

// needsRoll reports whether an append of n bytes must go to a new segment.
func (l *log) needsRoll(n int) bool {
	a := l.active()
	return a.size > 0 && a.size+int64(n) > l.cfg.segmentBytes
}

// roll starts a new active segment at the log end offset and applies
// retention (Config.RetainSegments), which advances the log start offset.
// A file log seals the old segment's time index and syncs it first.
func (l *log) roll() error {
	if !l.memory() {
		l.active().seal()
	}
	if err := l.maybeSyncOnRoll(); err != nil {
		return err
	}
	s, err := l.newSegment(l.end, false)
	if err != nil {
		return err
	}
	l.segs = append(l.segs, s)
	for l.cfg.retain > 0 && len(l.segs) > l.cfg.retain {
		if err := l.deleteSegment(l.segs[0]); err != nil {
			return err
		}
		copy(l.segs, l.segs[1:])
		l.segs[len(l.segs)-1] = nil
		l.segs = l.segs[:len(l.segs)-1]
		l.start = l.segs[0].base
	}
	return nil
}

// maybeSyncOnRoll syncs a file log before a roll, whatever the policy:
// Kafka flushes a rolled segment, and its sealed time index with it.
func (l *log) maybeSyncOnRoll() error {
	if l.memory() {
		return nil
	}
	return l.sync()
}

// deleteSegment removes s's files, or recycles its memory.
func (l *log) deleteSegment(s *segment) error {
	if l.memory() {
		l.free = append(l.free, s)
		return nil
	}
	s.closeFiles()
	for _, suffix := range segmentSuffixes {
		if err := l.cfg.fs.Remove(fileName(l.cfg.dir, s.base, suffix)); err != nil {
			return err
		}
	}
	return nil
}

// segmentSuffixes are the files of one segment.
var segmentSuffixes = [...]string{logSuffix, txnIndexSuffix, offsetIndexSuffix, timeIndexSuffix}

func (s *segment) closeFiles() {
	s.file.Close()
	s.txn.Close()
	s.idx.Close()
	s.tidx.Close()
}

// stage returns n writable bytes where the next append is built: the free
// tail of the active segment's buffer (memory log) or the staging buffer
// (file log). Nothing is part of the log until commit.
func (l *log) stage(n int) []byte {
	if l.memory() {
		if a := l.active(); cap(a.mem)-len(a.mem) >= n {
			return a.mem[len(a.mem) : len(a.mem)+n]
		}
	}
	return l.stageSlow(n)
}

// stageSlow is stage when the memory segment's buffer must grow, and for a
// file log.
func (l *log) stageSlow(n int) []byte {
	if l.memory() {
		a := l.active()
		grown := make([]byte, len(a.mem), max(2*cap(a.mem), len(a.mem)+n, 64<<10))
		copy(grown, a.mem)
		a.mem = grown
		return a.mem[len(a.mem) : len(a.mem)+n]
	}
	if cap(l.scratch) < n {
		l.scratch = make([]byte, n, max(n, 2*cap(l.scratch)))
	}
	return l.scratch[:n]
}

// commit makes the staged bytes data (whole batches with their final
// offsets) part of the active segment and sets the log end offset to next.
func (l *log) commit(data []byte, next int64) error {
	a := l.active()
	pos := a.size
	if l.memory() {
		a.mem = a.mem[:len(a.mem)+len(data)]
		for off := 0; off < len(data); {
			b := codec.Batch(data[off:])
			if at := pos + int64(off); at-a.lastIndexed > indexIntervalBytes {
				a.index = append(a.index, indexEntry{b.LastOffset(), at})
				a.lastIndexed = at
			}
			off += int(b.BatchLength()) + codec.LogOverhead
		}
		a.size += int64(len(data))
		a.next = next
		l.end = next
		l.synced = next
		return nil
	}
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

// appendAborted adds one transaction-index entry to the active segment.
func (l *log) appendAborted(t psm.AbortedTxn) error {
	a := l.active()
	a.aborted = append(a.aborted, t)
	if l.memory() {
		return nil
	}
	var buf [psm.AbortedTxnSize]byte
	if _, err := a.txn.Write(t.AppendTo(buf[:0])); err != nil {
		return err
	}
	a.dirty = true
	return nil
}

// maybeSync applies the fsync policy after an append.
func (l *log) maybeSync() error {
	if l.memory() {
		return nil
	}
	switch l.cfg.sync {
	case SyncAlways:
		return l.sync()
	case SyncInterval:
		if l.cfg.now().Sub(l.lastSync) >= l.cfg.interval {
			return l.sync()
		}
	}
	return nil
}

// sync flushes every segment with unsynced bytes, writing its pending index
// entries first; afterwards every offset below the log end offset is
// durable, and so are the indexes of every batch below it.
func (l *log) sync() error {
	if l.memory() {
		return nil
	}
	for _, s := range l.segs {
		if err := l.writeIndex(s); err != nil {
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
	l.synced = l.end
	if l.cfg.now != nil {
		l.lastSync = l.cfg.now()
	}
	return nil
}

// segmentFor returns the index of the segment holding offset: the last one
// whose base is at most offset.
func (l *log) segmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	return max(i, 0)
}

// read copies whole batches starting with the one that holds offset, up to
// maxBytes (at least one batch). Past the end it returns nil.
func (l *log) read(offset int64, maxBytes int) ([]byte, error) {
	if offset < l.start {
		return nil, ErrOffsetOutOfRange
	}
	var out []byte
	for i := l.segmentFor(offset); i < len(l.segs) && offset < l.end; i++ {
		s := l.segs[i]
		if offset >= s.next {
			continue
		}
		budget := int64(maxBytes - len(out))
		from, to, full := int64(-1), int64(-1), false
		err := s.walk(offset, func(_, last, pos, size int64) bool {
			switch {
			case last < offset:
				return true
			case from < 0 && len(out) > 0 && size > budget, from >= 0 && pos+size-from > budget:
				full = true
				return false
			case from < 0:
				from = pos
			}
			to = pos + size
			return true
		})
		if err != nil {
			return nil, err
		}
		if from < 0 {
			if full {
				break
			}
			offset = s.next
			continue
		}
		n := len(out)
		out = slices.Grow(out, int(to-from))[:n+int(to-from)]
		if err := s.readAt(out[n:], from); err != nil {
			return nil, err
		}
		if full {
			break
		}
		offset = s.next
	}
	return out, nil
}

// forEach calls fn with every batch whose base offset is at least from, in
// log order. Batches alias the log (memory) or a per-segment buffer (file)
// and are valid only during the call.
func (l *log) forEach(from int64, fn func(b codec.Batch) error) error {
	for i := l.segmentFor(from); i < len(l.segs); i++ {
		s := l.segs[i]
		if from >= s.next && s.size > 0 {
			continue
		}
		pos, err := s.position(from)
		if err != nil {
			return err
		}
		var data []byte
		if l.memory() {
			data = s.mem[pos:s.size]
		} else {
			data = make([]byte, s.size-pos)
			if err := s.readAt(data, pos); err != nil {
				return err
			}
		}
		for len(data) > 0 {
			b, rest, err := codec.Next(data)
			if err != nil {
				return err
			}
			if b.BaseOffset() >= from {
				if err := fn(b); err != nil {
					return err
				}
			}
			data = rest
		}
	}
	return nil
}

// truncate removes every batch whose last offset is at least offset (so a
// batch that holds offset goes as a whole) and sets the log end offset to
// offset. Transaction-index entries of removed markers go too.
func (l *log) truncate(offset int64) error {
	if offset >= l.end {
		return nil
	}
	if offset <= l.start {
		// Nothing below offset survives: start over at offset.
		for _, s := range l.segs {
			if err := l.deleteSegment(s); err != nil {
				return err
			}
		}
		s, err := l.newSegment(offset, false)
		if err != nil {
			return err
		}
		l.segs = append(l.segs[:0], s)
		l.start, l.end, l.synced = offset, offset, min(l.synced, offset)
		return nil
	}
	i := l.segmentFor(offset)
	for _, s := range l.segs[i+1:] {
		if err := l.deleteSegment(s); err != nil {
			return err
		}
	}
	clear(l.segs[i+1:])
	l.segs = l.segs[:i+1]
	s := l.segs[i]
	pos, err := s.position(offset)
	if err != nil {
		return err
	}
	if s.file != nil {
		if err := s.file.Truncate(pos); err != nil {
			return err
		}
	} else {
		s.mem = s.mem[:pos]
	}
	s.size = pos
	s.next = max(offset, s.base)
	if err := s.truncateIndex(pos); err != nil {
		return err
	}
	keep := len(s.aborted)
	for keep > 0 && s.aborted[keep-1].LastOffset >= offset {
		keep--
	}
	if keep < len(s.aborted) {
		s.aborted = s.aborted[:keep]
		if s.txn != nil {
			if err := s.txn.Truncate(int64(keep) * psm.AbortedTxnSize); err != nil {
				return err
			}
		}
	}
	l.end = offset
	l.synced = min(l.synced, offset)
	return nil
}

// lastEpoch is the partition leader epoch of the last batch of the log, or
// -1 (RecordBatch.NO_PARTITION_LEADER_EPOCH) when the log holds none.
// O(index interval) header reads in the last non-empty segment.
func (l *log) lastEpoch() (int32, error) {
	for i := len(l.segs) - 1; i >= 0; i-- {
		s := l.segs[i]
		if s.size == 0 {
			continue
		}
		last := int64(-1)
		if err := s.walk(s.next-1, func(_, _, pos, _ int64) bool {
			last = pos
			return true
		}); err != nil {
			return 0, err
		}
		var h [codec.OffPartitionLeaderEpoch + 4]byte
		if err := s.header(h[:], last); err != nil {
			return 0, err
		}
		return codec.Batch(h[:]).PartitionLeaderEpoch(), nil
	}
	return -1, nil
}

// abortedTxns appends the transaction-index entries that overlap
// [from, to): last ≥ from and first < to (TransactionIndex.collectAbortedTxns).
func (l *log) abortedTxns(dst []psm.AbortedTxn, from, to int64) []psm.AbortedTxn {
	for _, s := range l.segs {
		for _, t := range s.aborted {
			if t.LastOffset >= from && t.FirstOffset < to {
				dst = append(dst, t)
			}
		}
	}
	return dst
}

func (l *log) close() error {
	if l.memory() {
		return nil
	}
	err := l.sync()
	for _, s := range l.segs {
		s.closeFiles()
	}
	return err
}

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
	// Snapshot is the offset of the producer snapshot loaded, or -1.
	Snapshot int64
	// Replayed counts the batches replayed into producer state.
	Replayed int
}

// errOffsetRegression marks a batch whose offsets go backwards in a segment.
var errOffsetRegression = errors.New("appendpath: batch offsets go backwards")

// openFileLog opens (creating when empty) the log in cfg.dir, cutting a torn
// tail: every segment is read, and at the first batch that is partial,
// fails its CRC or goes backwards in offsets the segment is truncated and
// every later segment deleted.
func openFileLog(cfg logConfig) (*log, Recovery, error) {
	rec := Recovery{TruncatedSegment: -1, TruncatedAt: -1, Snapshot: -1}
	if err := cfg.fs.MkdirAll(cfg.dir); err != nil {
		return nil, rec, err
	}
	names, err := cfg.fs.ReadDir(cfg.dir)
	if err != nil {
		return nil, rec, err
	}
	var bases []int64
	txnFiles := map[int64]bool{} // bases with index files of any kind
	indexes := map[string]bool{} // .index and .timeindex names present
	for _, n := range names {
		if o, ok := parseFileName(n, logSuffix); ok {
			bases = append(bases, o)
		} else if o, ok := parseFileName(n, txnIndexSuffix); ok {
			txnFiles[o] = true
		} else if o, ok := parseFileName(n, offsetIndexSuffix); ok {
			txnFiles[o], indexes[n] = true, true
		} else if o, ok := parseFileName(n, timeIndexSuffix); ok {
			txnFiles[o], indexes[n] = true, true
		}
	}
	slices.Sort(bases)
	l := &log{cfg: cfg}
	cut := false
	for _, base := range bases {
		name := fileName(cfg.dir, base, logSuffix)
		delete(txnFiles, base)
		if cut || (len(l.segs) > 0 && base != l.end) {
			if !cut {
				cut, rec.Reason = true, errOffsetRegression
				rec.TruncatedSegment, rec.TruncatedAt = base, 0
			}
			data, err := cfg.fs.ReadFile(name)
			if err != nil {
				return nil, rec, err
			}
			rec.TruncatedBytes += int64(len(data))
			for _, suffix := range segmentSuffixes {
				if err := cfg.fs.Remove(fileName(cfg.dir, base, suffix)); err != nil {
					return nil, rec, err
				}
			}
			continue
		}
		s, err := l.recoverSegment(base, &rec)
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
		for _, suffix := range segmentSuffixes[1:] {
			if err := cfg.fs.Remove(fileName(cfg.dir, base, suffix)); err != nil {
				return nil, rec, err
			}
		}
	}
	for i, s := range l.segs {
		if err := l.loadIndex(s, i == len(l.segs)-1, indexes, &rec); err != nil {
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
	if cfg.now != nil {
		l.lastSync = cfg.now()
	}
	return l, rec, l.sync()
}

// recoverSegment opens the segment at base, cuts it at the first bad batch
// (recording where in rec) and reloads its transaction index.
func (l *log) recoverSegment(base int64, rec *Recovery) (*segment, error) {
	data, err := l.cfg.fs.ReadFile(fileName(l.cfg.dir, base, logSuffix))
	if err != nil {
		return nil, err
	}
	s, err := l.newSegment(base, true)
	if err != nil {
		return nil, err
	}
	next := base
	pos := 0
	for pos < len(data) {
		b, _, err := codec.Next(data[pos:])
		if err == nil {
			switch {
			case b.VerifyCRC() != nil:
				err = codec.ErrCRC
			case b.BaseOffset() < next || b.LastOffsetDelta() < 0:
				err = errOffsetRegression
			}
		}
		if err != nil {
			rec.TruncatedSegment, rec.TruncatedAt, rec.Reason = base, int64(pos), err
			rec.TruncatedBytes += int64(len(data) - pos)
			if err := s.file.Truncate(int64(pos)); err != nil {
				return nil, err
			}
			break
		}
		s.indexBatch(b.LastOffset(), b.MaxTimestamp(), int64(pos))
		next = b.NextOffset()
		pos += len(b)
	}
	s.size, s.next = int64(pos), next
	// Transaction index: keep the whole, increasing entries of surviving markers.
	idx, err := l.cfg.fs.ReadFile(fileName(l.cfg.dir, base, txnIndexSuffix))
	if err != nil {
		return nil, err
	}
	keep := 0
	for ; (keep+1)*psm.AbortedTxnSize <= len(idx); keep++ {
		t, err := psm.ParseAbortedTxn(idx[keep*psm.AbortedTxnSize:])
		if err != nil || t.LastOffset >= next ||
			(len(s.aborted) > 0 && t.LastOffset <= s.aborted[len(s.aborted)-1].LastOffset) {
			break
		}
		s.aborted = append(s.aborted, t)
	}
	if keep*psm.AbortedTxnSize != len(idx) {
		if err := s.txn.Truncate(int64(keep) * psm.AbortedTxnSize); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// dropAbortedFrom removes the transaction-index entries whose marker is at
// or above offset, in every segment (they are rewritten by a replay).
func (l *log) dropAbortedFrom(offset int64) error {
	for _, s := range l.segs {
		keep := len(s.aborted)
		for keep > 0 && s.aborted[keep-1].LastOffset >= offset {
			keep--
		}
		if keep == len(s.aborted) {
			continue
		}
		s.aborted = s.aborted[:keep]
		if s.txn != nil {
			if err := s.txn.Truncate(int64(keep) * psm.AbortedTxnSize); err != nil {
				return err
			}
			s.dirty = true
		}
	}
	return nil
}

// appendAbortedAt adds an entry to the segment that holds its marker.
func (l *log) appendAbortedAt(t psm.AbortedTxn) error {
	s := l.segs[l.segmentFor(t.LastOffset)]
	s.aborted = append(s.aborted, t)
	if s.txn == nil {
		return nil
	}
	var buf [psm.AbortedTxnSize]byte
	if _, err := s.txn.Write(t.AppendTo(buf[:0])); err != nil {
		return err
	}
	s.dirty = true
	return nil
}
