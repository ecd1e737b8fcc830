package pid

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Registry errors. A *LogError matches ErrBadLog and also the codec sentinel
// that caused it (codec.ErrCRC, codec.ErrPartial, codec.ErrBadControl, …).
var (
	ErrBadLog   = errors.New("pid: bad mirror-state log")
	ErrLogWrite = errors.New("pid: mirror-state log write failed")
)

// LogError says where Load stopped: Pos is the byte position of the batch in
// the log, Offset its base offset (-1 when the header could not be read).
type LogError struct {
	Pos    int64
	Offset int64
	Err    error
}

func (e *LogError) Error() string {
	return fmt.Sprintf("pid: bad mirror-state log at position %d (offset %d): %v", e.Pos, e.Offset, e.Err)
}

func (e *LogError) Unwrap() error { return e.Err }

func (e *LogError) Is(t error) bool { return t == ErrBadLog }

// Salt is one salt record as the registry holds it: the bitfield mapping of
// (Cluster, PID) in destination partition (TopicID, Partition) uses region
// Fold(Cluster) XOR uint32(Salt). Only the low 32 bits of the int64 wire
// field are used; the registry writes salts in [1, 2^32).
type Salt struct {
	TopicID          [16]byte
	Partition        int32
	Cluster          [16]byte
	PID              int64
	Salt             int64
	CollidingCluster string // provenance only: the cluster that held the slot ("" for the -1 slot)
	TimestampMs      int64
}

// Registry holds the collision salts of every destination partition of a
// broker and appends each new one to the mirror-state log, the stand-in for
// the replicated __mirror_state topic. A leader that starts (restart, leader
// change) builds a Registry and Loads the log: it then knows every salt, but
// not the origins tables of earlier leaders, which are not persisted.
//
// Safe for concurrent use. Writers (new salts, Load) serialize on a mutex and
// publish an immutable per-partition snapshot; Mapper reads that snapshot with
// one atomic load and no lock.
type Registry struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() int64
	next    int64 // base offset of the next record written
	parts   map[partKey]*partSalts
	scratch []byte
}

type partKey struct {
	topic     [16]byte
	partition int32
}

type saltKey struct {
	cluster [16]byte
	pid     int64
}

// partSalts is one destination partition's salts: m is the authoritative copy
// (under Registry.mu), snap what Mappers read.
type partSalts struct {
	snap atomic.Pointer[saltSet]
	m    map[saltKey]Salt
}

// NewRegistry returns an empty registry that appends each new salt record to
// w as one v2 batch (one Write call per batch). w may be nil: salts are then
// kept in memory only. now gives TimestampMs; nil means the wall clock.
func NewRegistry(w io.Writer, now func() int64) *Registry {
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	return &Registry{w: w, now: now, parts: make(map[partKey]*partSalts)}
}

// partition returns the salts of (topic, partition), creating them empty.
func (r *Registry) partition(topic [16]byte, partition int32) *partSalts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.partitionLocked(partKey{topic, partition})
}

func (r *Registry) partitionLocked(k partKey) *partSalts {
	ps := r.parts[k]
	if ps == nil {
		ps = &partSalts{m: make(map[saltKey]Salt)}
		r.parts[k] = ps
	}
	return ps
}

// add records a new salt: it writes the record to the log first and makes the
// salt visible only when the write succeeded, so that a mapping is never used
// before its salt is durable. A failed write matches ErrLogWrite.
func (r *Registry) add(s Salt) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.TimestampMs = r.now()
	if r.w != nil {
		b, err := appendSaltBatch(r.scratch[:0], r.next, s)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrLogWrite, err)
		}
		r.scratch = b
		if _, err := r.w.Write(b); err != nil {
			return fmt.Errorf("%w: %w", ErrLogWrite, err)
		}
	}
	r.next++
	ps := r.partitionLocked(partKey{s.TopicID, s.Partition})
	ps.m[saltKey{s.Cluster, s.PID}] = s
	ps.publish()
	return nil
}

// appendSaltBatch appends s as one uncompressed v2 batch holding one record
// (key MirrorPidCollisionKey, value MirrorPidCollisionValue) at offset off.
func appendSaltBatch(dst []byte, off int64, s Salt) ([]byte, error) {
	key := codec.MirrorPidCollisionKey{
		TopicID:         s.TopicID,
		Partition:       s.Partition,
		SourceClusterID: FormatClusterID(s.Cluster),
		OriginalPID:     s.PID,
	}.AppendTo(nil)
	val := codec.MirrorPidCollisionValue{
		Salt:               s.Salt,
		CollidingClusterID: s.CollidingCluster,
		TimestampMs:        s.TimestampMs,
	}.AppendTo(nil)
	h := codec.BatchHeader{
		BaseOffset:    off,
		BaseTimestamp: s.TimestampMs,
		MaxTimestamp:  s.TimestampMs,
		ProducerID:    codec.NoProducerID,
		ProducerEpoch: codec.NoProducerEpoch,
		BaseSequence:  codec.NoSequence,
	}
	return codec.AppendBatch(dst, h, []codec.Record{{Key: key, Value: val}}, codec.CompressionNone)
}

// Load replays a mirror-state log (back-to-back v2 batches, as written by a
// Registry) on top of what r holds: each salt record sets the salt of its key,
// a record with a null value (a tombstone) removes it, records of other types
// (key type prefix other than 3) and control batches are skipped.
// NextOffset becomes one past the last batch read, if that is higher.
//
// Load stops at the first defect and returns a *LogError with its position:
// bad framing, CRC mismatch, a compressed batch, a malformed record, key or
// value, or a cluster ID in neither spelling. Records before the defect stay
// applied, as a log recovery keeps the valid prefix. A cut trailing batch
// reports codec.ErrPartial.
//
// Memory is bounded by the input: one entry per distinct key, each key at
// least 54 bytes of log, and no allocation sized by a length field. Salt
// strings are copied; nothing aliases log. O(len(log)) plus a snapshot rebuild per touched partition.
func (r *Registry) Load(log []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	touched := make(map[*partSalts]struct{})
	defer func() {
		for ps := range touched {
			ps.publish()
		}
	}()
	rd := codec.NewReader(log, 0)
	for {
		b, pos, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			off := int64(-1)
			if b != nil {
				off = b.BaseOffset()
			}
			return &LogError{Pos: pos, Offset: off, Err: unwrapFormat(err)}
		}
		if err := r.loadBatch(b, touched); err != nil {
			return &LogError{Pos: pos, Offset: b.BaseOffset(), Err: err}
		}
		r.next = max(r.next, b.NextOffset())
	}
}

// unwrapFormat returns the sentinel inside a *codec.FormatError: LogError
// carries the position itself.
func unwrapFormat(err error) error {
	if fe, ok := errors.AsType[*codec.FormatError](err); ok {
		return fe.Err
	}
	return err
}

func (r *Registry) loadBatch(b codec.Batch, touched map[*partSalts]struct{}) error {
	if b.IsControl() {
		return nil
	}
	if b.Compression() != codec.CompressionNone && b.RecordsCount() != 0 {
		return codec.ErrUnsupportedCodec
	}
	it := b.Records()
	for {
		rec, err := it.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(rec.Key) < 2 {
			return codec.ErrBadControl
		}
		if int16(binary.BigEndian.Uint16(rec.Key)) != codec.MirrorPidCollisionKeyType {
			continue
		}
		k, err := codec.ParseMirrorPidCollisionKey(rec.Key)
		if err != nil {
			return err
		}
		cluster, err := ParseClusterID(k.SourceClusterID)
		if err != nil {
			return err
		}
		ps := r.partitionLocked(partKey{k.TopicID, k.Partition})
		touched[ps] = struct{}{}
		sk := saltKey{cluster, k.OriginalPID}
		if rec.Value == nil {
			delete(ps.m, sk)
			continue
		}
		v, err := codec.ParseMirrorPidCollisionValue(rec.Value)
		if err != nil {
			return err
		}
		ps.m[sk] = Salt{
			TopicID:          k.TopicID,
			Partition:        k.Partition,
			Cluster:          cluster,
			PID:              k.OriginalPID,
			Salt:             v.Salt,
			CollidingCluster: v.CollidingClusterID,
			TimestampMs:      v.TimestampMs,
		}
	}
}

// Lookup returns the salt of (cluster, pid) in destination partition
// (topic, partition), for tests and tools. It takes the registry mutex
// briefly; a Mapper reads its partition's snapshot without it. Safe for
// concurrent use.
func (r *Registry) Lookup(topic [16]byte, partition int32, cluster [16]byte, pid int64) (uint32, bool) {
	r.mu.Lock()
	ps := r.parts[partKey{topic, partition}]
	r.mu.Unlock()
	if ps == nil {
		return 0, false
	}
	return ps.snap.Load().lookup(cluster, pid)
}

// Salts returns every salt held, sorted by topic, partition, cluster, PID:
// what the dump tool prints and what tests compare. O(n log n); allocates.
func (r *Registry) Salts() []Salt {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Salt
	for _, ps := range r.parts {
		for _, s := range ps.m {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Salt) int {
		return cmp.Or(
			slices.Compare(a.TopicID[:], b.TopicID[:]),
			cmp.Compare(a.Partition, b.Partition),
			slices.Compare(a.Cluster[:], b.Cluster[:]),
			cmp.Compare(a.PID, b.PID))
	})
	return out
}

// Len is the number of salts held.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ps := range r.parts {
		n += len(ps.m)
	}
	return n
}

// NextOffset is the offset the next salt record will be written at.
func (r *Registry) NextOffset() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// publish rebuilds the lock-free snapshot from ps.m; caller holds
// Registry.mu. O(salts of the partition).
func (ps *partSalts) publish() {
	if len(ps.m) == 0 {
		ps.snap.Store(nil)
		return
	}
	s := newSaltSet(len(ps.m))
	for k, v := range ps.m {
		s.put(k.cluster, k.pid, uint32(v.Salt))
	}
	ps.snap.Store(s)
}

// saltSet is an immutable open-addressing table (cluster, pid) → salt with
// load factor at most 1/2, plus the list of clusters that have any salt so
// that a cluster without salts misses after comparing a few IDs. Pointer-free
// slots; never written after publication.
type saltSet struct {
	clusters [][16]byte
	slots    []saltSlot
	shift    uint8
}

type saltSlot struct {
	cluster [16]byte
	pid     int64
	salt    uint32
	used    bool
}

func newSaltSet(n int) *saltSet {
	size, shift := 8, uint8(64-3)
	for size < 2*n {
		size *= 2
		shift--
	}
	return &saltSet{slots: make([]saltSlot, size), shift: shift}
}

// saltHash mixes a (cluster, pid) key with one multiply; the rotation keeps
// the XOR-clash pairs (hi^d, lo^d), which share a region and so are the
// clusters that get salts, from hashing alike.
func saltHash(cluster [16]byte, pid int64) uint64 {
	h := binary.LittleEndian.Uint64(cluster[:8]) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(cluster[8:]), 32) ^ uint64(pid)
	return h * golden64
}

func (s *saltSet) put(cluster [16]byte, pid int64, salt uint32) {
	if !slices.Contains(s.clusters, cluster) {
		s.clusters = append(s.clusters, cluster)
	}
	mask := uint64(len(s.slots) - 1)
	for i := saltHash(cluster, pid) >> s.shift; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if !sl.used || sl.cluster == cluster && sl.pid == pid {
			*sl = saltSlot{cluster: cluster, pid: pid, salt: salt, used: true}
			return
		}
	}
}

// lookup returns the salt of (cluster, pid). s may be nil. O(1) expected: a
// scan of the salted clusters (usually one) and one probe sequence. No
// allocation.
func (s *saltSet) lookup(cluster [16]byte, pid int64) (uint32, bool) {
	if s == nil || !s.hasCluster(cluster) {
		return 0, false
	}
	return s.probe(cluster, pid)
}

// probe is lookup for a cluster known to have salts in s.
func (s *saltSet) probe(cluster [16]byte, pid int64) (uint32, bool) {
	mask := uint64(len(s.slots) - 1)
	for i := saltHash(cluster, pid) >> s.shift; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if !sl.used {
			return 0, false
		}
		if sl.cluster == cluster && sl.pid == pid {
			return sl.salt, true
		}
	}
}

func (s *saltSet) hasCluster(cluster [16]byte) bool {
	for _, c := range s.clusters {
		if c == cluster {
			return true
		}
	}
	return false
}
