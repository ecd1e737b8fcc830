package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
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
	return 0, fmt.Errorf("storage: unknown fsync policy %q (want never|always|interval)", s)
}

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

// IndexIntervalBytes is Kafka's index.interval.bytes: a batch gets a sparse
// index entry when more than this many bytes lie between it and the last
// entry (index.go).
const IndexIntervalBytes = 4096

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
	aborted     []AbortedTxn
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

// Config says where a log keeps its segments and when it rolls and syncs.
type Config struct {
	// FS is the file layer of a file log.
	FS vfs.FS
	// Dir holds the segment files; "" keeps the log in memory.
	Dir string
	// SegmentBytes rolls a new segment when an append would take the active
	// one past it (log.segment.bytes; default 1 GiB).
	SegmentBytes int64
	// RetainSegments deletes the oldest segments beyond this many on each
	// roll (0 keeps every segment).
	RetainSegments int
	// Sync is the fsync policy of a file log, SyncInterval its interval
	// (default 1 s).
	Sync         SyncPolicy
	SyncInterval time.Duration
	// Now is the clock of SyncInterval (default time.Now).
	Now func() time.Time
}

// Log is the segmented byte log of one partition. It knows batches only by
// their framing; producer state, offset assignment and validation are the
// caller's (appendpath.Partition). Not safe for concurrent use: the caller
// serializes every call.
type Log struct {
	cfg      Config
	segs     []*segment
	start    int64 // log start offset
	end      int64 // log end offset
	synced   int64 // every offset below is on stable storage
	lastSync time.Time
	scratch  []byte     // file log: staging buffer
	idxBuf   []byte     // file log: index entries being written
	free     []*segment // memory log: recycled segments
	pending  *segment   // memory log: the next Roll's segment, once StageRolled staged into it
	// dirDirty: files were created or removed in Config.Dir since the last
	// directory sync (file log).
	dirDirty bool
}

// Memory reports whether the log is kept in memory (Config.Dir == "").
func (l *Log) Memory() bool     { return l.cfg.Dir == "" }
func (l *Log) active() *segment { return l.segs[len(l.segs)-1] }

// Start is the log start offset: the base of the oldest segment kept.
func (l *Log) Start() int64 { return l.start }

// End is the log end offset: the offset the next batch gets.
func (l *Log) End() int64 { return l.end }

// Synced is the durable prefix: every offset below it is on stable storage
// (the log end offset for a memory log).
func (l *Log) Synced() int64 { return l.synced }

// Segments is the number of segments of the log (at least one).
func (l *Log) Segments() int { return len(l.segs) }

// SegmentSize is the size in bytes of segment i (0 is the oldest).
func (l *Log) SegmentSize(i int) int64 { return l.segs[i].size }

// SegmentBase is the base offset of segment i (0 is the oldest).
func (l *Log) SegmentBase(i int) int64 { return l.segs[i].base }

// OffsetIndex appends to dst the sparse offset index of segment i (0 is the
// oldest) as Read looks it up: for a file log what .index holds once synced.
func (l *Log) OffsetIndex(i int, dst []OffsetPosition) []OffsetPosition {
	for _, e := range l.segs[i].index {
		dst = append(dst, OffsetPosition{Offset: e.offset, Position: e.pos})
	}
	return dst
}

// Open opens the log cfg describes: an empty memory log when cfg.Dir is "",
// else the file log in cfg.Dir, created when absent and recovered when not:
// a torn or corrupt tail is cut and the indexes are checked against the
// segments (Recovery says what was found). cfg.FS nil means vfs.OSFS.
func Open(cfg Config) (*Log, Recovery, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.OSFS{}
	}
	if cfg.SegmentBytes <= 0 {
		cfg.SegmentBytes = 1 << 30
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Dir == "" {
		return newMemLog(cfg), Recovery{Segments: 1, TruncatedSegment: -1, TruncatedAt: -1}, nil
	}
	return openFileLog(cfg)
}

func newMemLog(cfg Config) *Log {
	l := &Log{cfg: cfg}
	s := &segment{}
	s.reset(0)
	l.segs = []*segment{s}
	return l
}

// newSegment makes an empty segment at base (files created for a file log).
// When recovering, existing index files are kept for openFileLog to check.
func (l *Log) newSegment(base int64, recovering bool) (*segment, error) {
	var s *segment
	if l.pending != nil {
		// StageRolled's bytes sit at the start of its buffer: reset keeps
		// them (it empties mem, not its capacity) and Commit takes them.
		s, l.pending = l.pending, nil
	} else {
		s = l.takeSegment()
	}
	s.reset(base)
	if l.Memory() {
		return s, nil
	}
	l.dirDirty = true // the segment's files may be new
	f, fsize, err := l.cfg.FS.OpenAppend(FileName(l.cfg.Dir, base, LogSuffix))
	if err != nil {
		return nil, err
	}
	if recovering {
		s.size = fsize // recoverSegment's scan bound; it sets the size kept
	}
	t, _, err := l.cfg.FS.OpenAppend(FileName(l.cfg.Dir, base, TxnIndexSuffix))
	if err != nil {
		f.Close()
		return nil, err
	}
	x, xn, err := l.cfg.FS.OpenAppend(FileName(l.cfg.Dir, base, IndexSuffix))
	if err != nil {
		f.Close()
		t.Close()
		return nil, err
	}
	ti, tn, err := l.cfg.FS.OpenAppend(FileName(l.cfg.Dir, base, TimeIndexSuffix))
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

// NeedsRoll reports whether an append of n bytes must go to a new segment.
func (l *Log) NeedsRoll(n int) bool {
	a := l.active()
	return a.size > 0 && a.size+int64(n) > l.cfg.SegmentBytes
}

// Roll starts a new active segment at the log end offset and applies
// retention (Config.RetainSegments), which advances the log start offset.
// A file log seals the old segment's time index and syncs it first.
func (l *Log) Roll() error {
	if !l.Memory() {
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
	for l.cfg.RetainSegments > 0 && len(l.segs) > l.cfg.RetainSegments {
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
func (l *Log) maybeSyncOnRoll() error {
	if l.Memory() {
		return nil
	}
	return l.Sync()
}

// deleteSegment removes s's files and syncs the directory, or recycles its
// memory. Each deletion is durable before the next: a crash in a run of them
// (retention from the oldest, truncation from the newest) leaves the log
// contiguous, never a segment kept beyond one deleted.
func (l *Log) deleteSegment(s *segment) error {
	if l.Memory() {
		l.free = append(l.free, s)
		return nil
	}
	s.closeFiles()
	l.dirDirty = true
	for _, suffix := range segmentSuffixes {
		if err := l.cfg.FS.Remove(FileName(l.cfg.Dir, s.base, suffix)); err != nil {
			return err
		}
	}
	return l.syncDir()
}

// segmentSuffixes are the files of one segment.
var segmentSuffixes = [...]string{LogSuffix, TxnIndexSuffix, IndexSuffix, TimeIndexSuffix}

func (s *segment) closeFiles() {
	s.file.Close()
	s.txn.Close()
	s.idx.Close()
	s.tidx.Close()
}

// Stage returns n writable bytes where the next append is built: the free
// tail of the active segment's buffer (memory log) or the staging buffer
// (file log). Nothing is part of the log until Commit.
func (l *Log) Stage(n int) []byte {
	if l.Memory() {
		if a := l.active(); cap(a.mem)-len(a.mem) >= n {
			return a.mem[len(a.mem) : len(a.mem)+n]
		}
	}
	return l.stageSlow(n)
}

// takeSegment returns a recycled segment (memory log), or a new one.
func (l *Log) takeSegment() *segment {
	if n := len(l.free); n > 0 {
		s := l.free[n-1]
		l.free = l.free[:n-1]
		return s
	}
	return &segment{}
}

// StageRolled is Stage for an append that must go to a new segment
// (NeedsRoll): n writable bytes at the start of the buffer the next Roll
// gives its segment (memory log), or the staging buffer (file log). So the
// caller can build and check the append before it rolls, and roll only once
// the append is accepted, as Stage lets it do without a roll. Nothing is
// part of the log until Roll and then Commit; if the append is rejected in
// between, the bytes are never seen, and a later roll takes the buffer
// anyway. Stage after StageRolled stages into the active segment again.
func (l *Log) StageRolled(n int) []byte {
	if !l.Memory() {
		return l.stageSlow(n)
	}
	s := l.pending
	if s == nil {
		s = l.takeSegment()
		l.pending = s
	}
	if cap(s.mem) < n {
		s.mem = make([]byte, 0, max(n, 64<<10))
	}
	return s.mem[:n:n]
}

// stageSlow is stage when the memory segment's buffer must grow, and for a
// file log.
func (l *Log) stageSlow(n int) []byte {
	if l.Memory() {
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

// Commit makes the staged bytes data (whole batches with their final
// offsets) part of the active segment and sets the log end offset to next.
func (l *Log) Commit(data []byte, next int64) error {
	a := l.active()
	pos := a.size
	if l.Memory() {
		if len(data) > 0 && (cap(a.mem)-len(a.mem) < len(data) || &a.mem[:len(a.mem)+1][len(a.mem)] != &data[0]) {
			// Not the bytes Stage (or StageRolled, then Roll) returned:
			// taking the segment's tail would store whatever it holds.
			return ErrNotStaged
		}
		a.mem = a.mem[:len(a.mem)+len(data)]
		for off := 0; off < len(data); {
			b := codec.Batch(data[off:])
			if at := pos + int64(off); at-a.lastIndexed > IndexIntervalBytes {
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

// IndexDue is, for a memory log, the staged position past which the next
// batch of the append being staged gets an offset-index entry: a batch
// staged at position pos (0 is the first staged byte) is indexed when
// pos > IndexDue(), and the one after it IndexIntervalBytes further on, as
// Commit's walk does. A caller that frames the staged batches anyway
// collects those entries in its own pass and hands them to CommitIndexed,
// which then walks nothing; it may be negative. For a file log it is
// math.MaxInt64 (no batch is the caller's to index): CommitIndexed indexes
// every batch as Commit does (the time index needs each batch's
// maxTimestamp).
func (l *Log) IndexDue() int64 {
	if !l.Memory() {
		return math.MaxInt64
	}
	a := l.active()
	return a.lastIndexed + IndexIntervalBytes - a.size
}

// CommitIndexed is Commit with the offset-index entries of data collected
// by the caller: idx holds, in staged order, the last offset and staged
// position of each batch IndexDue's rule indexes. A memory log appends them
// instead of walking data; a file log ignores idx and walks, as Commit
// does. idx is not kept.
func (l *Log) CommitIndexed(data []byte, next int64, idx []OffsetPosition) error {
	if !l.Memory() {
		return l.Commit(data, next)
	}
	a := l.active()
	if len(data) > 0 && (cap(a.mem)-len(a.mem) < len(data) || &a.mem[:len(a.mem)+1][len(a.mem)] != &data[0]) {
		return ErrNotStaged
	}
	if invariants.Enabled {
		checkIndexed(data, a.lastIndexed-a.size, idx)
	}
	a.mem = a.mem[:len(a.mem)+len(data)]
	for _, e := range idx {
		at := a.size + e.Position
		a.index = append(a.index, indexEntry{e.Offset, at})
		a.lastIndexed = at
	}
	a.size += int64(len(data))
	a.next = next
	l.end = next
	l.synced = next
	return nil
}

// checkIndexed panics unless idx are the entries Commit's walk of data
// would add to a memory segment whose last entry is at staged position
// last.
func checkIndexed(data []byte, last int64, idx []OffsetPosition) {
	var want []OffsetPosition
	for off := 0; off < len(data); {
		b := codec.Batch(data[off:])
		if int64(off)-last > IndexIntervalBytes {
			want = append(want, OffsetPosition{b.LastOffset(), int64(off)})
			last = int64(off)
		}
		off += int(b.BatchLength()) + codec.LogOverhead
	}
	if len(want) != len(idx) {
		panic(fmt.Sprintf("storage: invariant: %d index entries handed to CommitIndexed, the walk finds %d", len(idx), len(want)))
	}
	for i := range want {
		if want[i] != idx[i] {
			panic(fmt.Sprintf("storage: invariant: index entry %d is %+v, the walk finds %+v", i, idx[i], want[i]))
		}
	}
}

// AppendAborted adds one transaction-index entry to the active segment.
func (l *Log) AppendAborted(t AbortedTxn) error {
	a := l.active()
	a.aborted = append(a.aborted, t)
	if l.Memory() {
		return nil
	}
	var buf [AbortedTxnSize]byte
	if _, err := a.txn.Write(t.AppendTo(buf[:0])); err != nil {
		return err
	}
	a.dirty = true
	return nil
}

// MaybeSync applies the fsync policy after an append.
func (l *Log) MaybeSync() error {
	if l.Memory() {
		return nil
	}
	switch l.cfg.Sync {
	case SyncAlways:
		return l.Sync()
	case SyncInterval:
		if l.cfg.Now().Sub(l.lastSync) >= l.cfg.SyncInterval {
			return l.Sync()
		}
	}
	return nil
}

// Sync flushes every segment with unsynced bytes, writing its pending index
// entries first, then the directory when segments were created or removed
// since its last sync (LocalLog#flush flushes the directory after a roll:
// a synced file whose directory entry is not is lost in a crash);
// afterwards every offset below the log end offset is durable, and so are
// the indexes of every batch below it.
func (l *Log) Sync() error {
	if l.Memory() {
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
	if err := l.syncDir(); err != nil {
		return err
	}
	l.synced = l.end
	if l.cfg.Now != nil {
		l.lastSync = l.cfg.Now()
	}
	return nil
}

// syncDir syncs the log directory when files were created or removed in
// it since its last sync.
func (l *Log) syncDir() error {
	if !l.dirDirty {
		return nil
	}
	if err := l.cfg.FS.SyncDir(l.cfg.Dir); err != nil {
		return err
	}
	l.dirDirty = false
	return nil
}

// SegmentFor returns the index of the segment holding offset: the last one
// whose base is at most offset.
func (l *Log) SegmentFor(offset int64) int {
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > offset }) - 1
	return max(i, 0)
}

// Read copies whole batches starting with the one that holds offset, up to
// maxBytes (at least one batch). Past the end it returns nil.
func (l *Log) Read(offset int64, maxBytes int) ([]byte, error) {
	if offset < l.start {
		return nil, kafkaerr.OffsetOutOfRange
	}
	var out []byte
	for i := l.SegmentFor(offset); i < len(l.segs) && offset < l.end; i++ {
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

// ForEach calls fn with every batch whose base offset is at least from, in
// log order. Batches alias the log (memory) or a per-segment buffer (file)
// and are valid only during the call.
func (l *Log) ForEach(from int64, fn func(b codec.Batch) error) error {
	for i := l.SegmentFor(from); i < len(l.segs); i++ {
		s := l.segs[i]
		if from >= s.next && s.size > 0 {
			continue
		}
		pos, err := s.position(from)
		if err != nil {
			return err
		}
		var data []byte
		if l.Memory() {
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

// Truncate removes every batch whose last offset is at least offset (so a
// batch that holds offset goes as a whole) and sets the log end offset to
// offset. Transaction-index entries of removed markers go too. A file log
// syncs before Truncate returns: a crash never brings back batches that
// producer state, snapshots and the mirror checkpoint already dropped.
func (l *Log) Truncate(offset int64) error {
	if offset >= l.end {
		return nil
	}
	if offset <= l.start {
		// Nothing below offset survives: start over at offset. The newest
		// segment goes first (deleteSegment makes each deletion durable),
		// so that a crash leaves a prefix of the log, never a tail
		// without its head.
		for i := len(l.segs) - 1; i >= 0; i-- {
			if err := l.deleteSegment(l.segs[i]); err != nil {
				return err
			}
		}
		s, err := l.newSegment(offset, false)
		if err != nil {
			return err
		}
		l.segs = append(l.segs[:0], s)
		l.start, l.end, l.synced = offset, offset, min(l.synced, offset)
		return l.Sync()
	}
	i := l.SegmentFor(offset)
	for j := len(l.segs) - 1; j > i; j-- {
		if err := l.deleteSegment(l.segs[j]); err != nil {
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
			if err := s.txn.Truncate(int64(keep) * AbortedTxnSize); err != nil {
				return err
			}
		}
	}
	l.end = offset
	l.synced = min(l.synced, offset)
	s.dirty, s.idxDirty = s.file != nil, s.file != nil
	return l.Sync()
}

// LastEpoch is the partition leader epoch of the last batch of the log, or
// -1 (RecordBatch.NO_PARTITION_LEADER_EPOCH) when the log holds none.
// O(index interval) header reads in the last non-empty segment.
func (l *Log) LastEpoch() (int32, error) {
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

// AbortedTxns appends the transaction-index entries that overlap
// [from, to): last ≥ from and first < to (TransactionIndex.collectAbortedTxns).
func (l *Log) AbortedTxns(dst []AbortedTxn, from, to int64) []AbortedTxn {
	for _, s := range l.segs {
		for _, t := range s.aborted {
			if t.LastOffset >= from && t.FirstOffset < to {
				dst = append(dst, t)
			}
		}
	}
	return dst
}

func (l *Log) Close() error {
	if l.Memory() {
		return nil
	}
	err := l.Sync()
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
}

// ErrOffsetRegression is the Recovery.Reason of a batch whose offsets go
// backwards in a segment, or of a segment that starts below the end of the
// one before it.
var ErrOffsetRegression = errors.New("storage: batch offsets go backwards")

// ErrNotStaged is Commit's error, on a memory log, for bytes that are not
// the ones Stage returned (or StageRolled, after the Roll that takes them):
// nothing is committed.
var ErrNotStaged = errors.New("storage: commit of bytes not staged at the active segment's end")

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
	l := &Log{cfg: cfg}
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
			l.dirDirty = true
			for _, suffix := range segmentSuffixes {
				if err := cfg.FS.Remove(FileName(cfg.Dir, base, suffix)); err != nil {
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
		l.dirDirty = true
		for _, suffix := range segmentSuffixes[1:] {
			if err := cfg.FS.Remove(FileName(cfg.Dir, base, suffix)); err != nil {
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
	if cfg.Now != nil {
		l.lastSync = cfg.Now()
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
func (l *Log) recoverSegment(base int64, rec *Recovery) (*segment, error) {
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
	idx, err := l.cfg.FS.ReadFile(FileName(l.cfg.Dir, base, TxnIndexSuffix))
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

// DropAbortedFrom removes the transaction-index entries whose marker is at
// or above offset, in every segment (they are rewritten by a replay).
func (l *Log) DropAbortedFrom(offset int64) error {
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
			if err := s.txn.Truncate(int64(keep) * AbortedTxnSize); err != nil {
				return err
			}
			s.dirty = true
		}
	}
	return nil
}

// AppendAbortedAt adds an entry to the segment that holds its marker.
func (l *Log) AppendAbortedAt(t AbortedTxn) error {
	s := l.segs[l.SegmentFor(t.LastOffset)]
	s.aborted = append(s.aborted, t)
	if s.txn == nil {
		return nil
	}
	var buf [AbortedTxnSize]byte
	if _, err := s.txn.Write(t.AppendTo(buf[:0])); err != nil {
		return err
	}
	s.dirty = true
	return nil
}
