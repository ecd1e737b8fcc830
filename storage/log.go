package storage

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/enum"
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

// ErrUnknownName reports a SyncPolicy name that is not one of the names
// this package prints.
var ErrUnknownName = errors.New("storage: unknown name")

// syncPolicies spells each policy as the flags and docs do.
var syncPolicies = enum.Table[SyncPolicy]{Kind: "fsync policy", Names: []string{"never", "always", "interval"},
	Err: ErrUnknownName}

// String returns the policy's name: never, always or interval.
func (s SyncPolicy) String() string { return syncPolicies.String(s) }

// MarshalText implements encoding.TextMarshaler.
func (s SyncPolicy) MarshalText() ([]byte, error) { return syncPolicies.MarshalText(s) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (s *SyncPolicy) UnmarshalText(b []byte) error { return syncPolicies.UnmarshalText(s, b) }

// IndexIntervalBytes is Kafka's index.interval.bytes: a batch gets a sparse
// index entry when more than this many bytes lie between it and the last
// entry (index.go).
const IndexIntervalBytes = 4096

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
	cfg    Config
	st     store // memStore or fileStore, chosen by Open
	segs   []*segment
	start  int64 // log start offset
	end    int64 // log end offset
	synced int64 // every offset below is on stable storage
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
		l := &Log{cfg: cfg, st: &memStore{}}
		s, err := l.newSegment(0, false)
		if err != nil {
			return nil, Recovery{}, err
		}
		l.segs = []*segment{s}
		return l, Recovery{Segments: 1, TruncatedSegment: -1, TruncatedAt: -1}, nil
	}
	return openFileLog(cfg)
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
	if err := l.st.roll(l, l.active()); err != nil {
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

// Stage returns n writable bytes where the next append is built: the free
// tail of the active segment's buffer (memory log) or the staging buffer
// (file log). Nothing is part of the log until Commit.
//
// A memory segment whose buffer has room is staged into inline; a file
// segment has no buffer, so the store stages it, as it does a memory
// segment whose buffer must grow.
func (l *Log) Stage(n int) []byte {
	if a := l.active(); cap(a.mem)-len(a.mem) >= n {
		return a.mem[len(a.mem) : len(a.mem)+n]
	}
	return l.st.stage(l.active(), n)
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
	return l.st.stageRolled(n)
}

// Commit makes the staged bytes data (whole batches with their final
// offsets) part of the active segment and sets the log end offset to next.
func (l *Log) Commit(data []byte, next int64) error {
	return l.st.commit(l, l.active(), data, next)
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
func (l *Log) IndexDue() int64 { return l.st.indexDue(l.active()) }

// CommitIndexed is Commit with the offset-index entries of data collected
// by the caller: idx holds, in staged order, the last offset and staged
// position of each batch IndexDue's rule indexes. A memory log appends them
// instead of walking data; a file log ignores idx and walks, as Commit
// does. idx is not kept.
func (l *Log) CommitIndexed(data []byte, next int64, idx []OffsetPosition) error {
	return l.st.commitIndexed(l, l.active(), data, next, idx)
}

// checkIndexed panics unless idx are the entries Commit's walk of data
// would add to a memory segment whose last entry is at staged position
// last.
func checkIndexed(data []byte, last int64, idx []OffsetPosition) {
	n := 0 // entries the walk finds; it allocates nothing, so the append path's allocation tests hold under -tags invariants
	for off := 0; off < len(data); {
		b := codec.Batch(data[off:])
		if int64(off)-last > IndexIntervalBytes {
			want := OffsetPosition{b.LastOffset(), int64(off)}
			if n >= len(idx) || idx[n] != want {
				panic(fmt.Sprintf("storage: invariant: index entry %d handed to CommitIndexed differs from the walk's %+v (%d entries handed)", n, want, len(idx)))
			}
			n++
			last = int64(off)
		}
		off += int(b.BatchLength()) + codec.LogOverhead
	}
	if n != len(idx) {
		panic(fmt.Sprintf("storage: invariant: %d index entries handed to CommitIndexed, the walk finds %d", len(idx), n))
	}
}

// AppendAborted adds one transaction-index entry to the active segment.
func (l *Log) AppendAborted(t AbortedTxn) error {
	a := l.active()
	a.aborted = append(a.aborted, t)
	return l.st.appendAborted(a, t)
}

// MaybeSync applies the fsync policy after an append.
func (l *Log) MaybeSync() error {
	return l.st.maybeSync(l)
}

// Sync flushes every segment with unsynced bytes, writing its pending index
// entries first, then the directory when segments were created or removed
// since its last sync (LocalLog#flush flushes the directory after a roll:
// a synced file whose directory entry is not is lost in a crash);
// afterwards every offset below the log end offset is durable, and so are
// the indexes of every batch below it.
func (l *Log) Sync() error {
	return l.st.sync(l)
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
		data, err := l.st.batches(s, pos)
		if err != nil {
			return err
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
	return l.st.close(l)
}

// ErrNotStaged is Commit's error, on a memory log, for bytes that are not
// the ones Stage returned (or StageRolled, after the Roll that takes them):
// nothing is committed.
var ErrNotStaged = errors.New("storage: commit of bytes not staged at the active segment's end")
