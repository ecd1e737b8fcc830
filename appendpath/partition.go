package appendpath

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// MirrorOffsets says what a mirrored append does with the source's offsets.
type MirrorOffsets uint8

const (
	// PreserveOffsets (default): mirrored batches keep their source offsets
	// and partition leader epochs, as a follower's do (KIP-1279 mirrors are
	// offset-preserving); offsets must not go backwards.
	PreserveOffsets MirrorOffsets = iota
	// AssignOffsets gives mirrored batches the next offsets of this log and
	// this partition's leader epoch, as a leader does. Fan-in of several
	// sources into one partition (the replay tool) needs it.
	AssignOffsets
)

// Config configures one Partition. The zero value is an in-memory, writable
// partition with Kafka's defaults and strategy verbatim. Hazards stands
// apart: the simulator's reproductions of documented hazards, never set by
// a product caller.
type Config struct {
	// Dir holds the segment files; "" keeps the log in memory.
	Dir string
	// FS is the file layer of a file-backed log; nil means vfs.OSFS.
	FS vfs.FS
	// SegmentBytes rolls a new segment when an append would take the active
	// one past it (log.segment.bytes; default 1 GiB).
	SegmentBytes int64
	// RetainSegments deletes the oldest segments beyond this many on each
	// roll, advancing the log start offset (a stand-in for retention;
	// 0 keeps every segment). Memory segments are recycled, so a benchmark's
	// log stops allocating once it has rolled RetainSegments+1 times.
	RetainSegments int
	// SkipRollSnapshots: no producer snapshot on segment roll (benchmarks
	// with a million producers). Rebuilds then replay from an older snapshot
	// or the log start.
	SkipRollSnapshots bool
	// Sync and SyncInterval: the fsync policy of a file-backed log.
	Sync         storage.SyncPolicy
	SyncInterval time.Duration // default 1 s
	// MaxMessageBytes bounds a batch on CLIENT and COORDINATOR appends
	// (max.message.bytes; default 1048588).
	MaxMessageBytes int
	// LeaderEpoch is the epoch stamped on CLIENT and COORDINATOR batches.
	LeaderEpoch int32
	// ManualHighWatermark: the high watermark moves only by SetHighWatermark
	// (a replicated partition). By default it follows the log end offset.
	ManualHighWatermark bool

	// Mirroring.
	State         MirrorState // initial state; Stopped (writable) by default
	Strategy      pid.Strategy
	CRCFix        pid.CRCFix
	Policy        pid.Policy
	Fold          pid.Fold
	Mapper        *pid.Mapper // optional; default NewMapper with no salt registry
	MirrorOffsets MirrorOffsets

	// Producer state: a shared Store and this partition's ID in it, or nil
	// for a Store of its own built with PSMOptions. The append path calls
	// the concrete *psm.Store (no dynamic dispatch per batch).
	PSM         *psm.Store
	PartitionID psm.PartitionID
	PSMOptions  psm.Options

	// Now is the clock (marker and barrier timestamps, snapshot expiry,
	// fsync interval, LogValidator's "now"); default time.Now.
	Now func() time.Time

	// LogValidator's topic settings, for CLIENT appends only
	// (LogValidator; see validate.go). Zero values are
	// Kafka's defaults.
	//
	// TimestampType is message.timestamp.type (default CreateTime).
	TimestampType TimestampType
	// TimestampBeforeMaxMs and TimestampAfterMaxMs are
	// message.timestamp.before.max.ms and message.timestamp.after.max.ms: a
	// CreateTime record timestamp t ≠ -1 needs now−t ≤ before and
	// t−now ≤ after. 0 means Kafka 3.x's default, math.MaxInt64 (no limit),
	// for both; Kafka 4.0 lowered after's default to 3600000 (one hour): set
	// it to get 4.x behaviour. (A window of exactly 0 ms cannot be asked for:
	// use 1.) Negative values make Open fail with ErrInvalidConfig.
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
	// Compacted: cleanup.policy includes compact, so every record needs a
	// non-null key (INVALID_RECORD otherwise).
	Compacted bool
	// MaxDecompressedBytes bounds the decompressed records of a compressed
	// CLIENT batch (default DefaultMaxDecompressedBytes, 64 MiB; a limit
	// Kafka does not have). Beyond it: INVALID_RECORD, ErrDecompressedTooLarge.
	MaxDecompressedBytes int

	// Hazards reproduce the prototype's and older brokers' documented
	// hazards for the simulator; not product settings (zero: none).
	Hazards Hazards
}

// Result is the answer to an append.
type Result struct {
	FirstOffset int64 // base offset of the first batch
	LastOffset  int64 // last offset of the last batch
	// Duplicate: a CLIENT batch repeated one of its producer's last five
	// batches; nothing was written and the offsets are the original ones.
	Duplicate bool
	Batches   int
	// Result keeps to four fields on purpose: with a fifth (such as Kafka's
	// log_append_time_ms) the compiler no longer returns it in registers,
	// which costs the 100 B append several nanoseconds. On a LogAppendTime
	// topic the stamp is the stored batch's maxTimestamp (Read).
}

// Partition is one replica of one partition: its log, its producer state and
// its mirror state. Every method is safe for concurrent use; appends to one
// partition are serialized by its lock (Kafka's log lock), different
// partitions append in parallel.
type Partition struct {
	mu     sync.Mutex
	cfg    Config
	log    *storage.Log
	snaps  *storage.SnapshotDir
	psm    *psm.Store
	app    *psm.StoreAppender // this partition's in psm, held: each append Begins it (psm.Store.Appender)
	pb     psm.Batch          // the one Batch handed to psm's Add, reused (a local would escape)
	id     psm.PartitionID
	mapper *pid.Mapper
	now    func() time.Time

	state       MirrorState
	leaderEpoch int32
	maxEpoch    int32 // largest partition leader epoch in the log
	hw          int64
	source      [16]byte // cluster of the last mirrored append
	hasSource   bool
	stuck       bool // a STOPPING step failed under StepErrorsStuck
	terminal    bool // FAILED for good (Fail)
	recovering  bool // Open's rebuild is under way (Hazards.RecoveryIgnoresBarrier)
	mirrored    MirrorCheckpoint
	recovery    Recovery
	snapBuf     []byte
	closed      bool

	// lastSnap is ProducerStateManager's lastSnapOffset: takeSnapshot writes
	// only past it. It is the offset of the snapshot written or loaded last,
	// the log start after a rebuild that loads none, 0 after a truncation
	// of the whole log (ProducerStateManager#truncateFullyAndStartAt).
	lastSnap   int64
	truncFully bool // the rebuild under way follows a truncation of the whole log

	// Per-partition constants of the hot path, from cfg.
	rewrites bool // cfg.Strategy.Rewrites()
	assign   bool // cfg.MirrorOffsets == AssignOffsets

	val validator // LogValidator of CLIENT appends: settings, scratch, fix-ups

	// markerTV is the transaction version a COORDINATOR marker of the
	// append in progress states (appendMarkerLocked); TV0 otherwise.
	markerTV psm.TxnVersion

	idx []storage.OffsetPosition // index entries of the chunk being appended (appendChunkLocked)
}

// kind is the caller of an append; it picks origin, checks and offsets.
type kind uint8

const (
	kindClient kind = iota
	kindCoordinator
	kindMirror
	kindReplica
)

func (k kind) origin() psm.Origin {
	switch k {
	case kindClient:
		return psm.Client
	case kindCoordinator:
		return psm.Coordinator
	}
	return psm.Replication
}

// AppendClient appends one producer batch as the leader (CLIENT origin):
// exactly one batch, baseOffset 0, the size limit, the CRC, the LogValidator
// batch and record rules of LogValidator (validate.go), then
// producer state (sequence, epoch, duplicates). Offsets, the leader epoch and
// LogValidator's maxTimestamp/LogAppendTime fix are applied in the log's
// copy (a compressed batch with inner offsets other than 0..n-1 is rebuilt
// and the rebuilt batch stored); batch is never modified. Refused with
// kafkaerr.ReadOnlyTopic unless the partition is writable (Stopped). Errors are
// bare *kafkaerr.Error sentinels, except record-rule rejections: a
// *RecordError that matches its sentinel with errors.Is. O(len(batch)) for
// the CRC, the record walk (plus decompression) and one copy; no allocation
// unless rejected by a record rule or rebuilt.
func (p *Partition) AppendClient(batch []byte) (Result, error) {
	p.mu.Lock()
	if p.state != Stopped {
		p.mu.Unlock()
		return Result{}, kafkaerr.ReadOnlyTopic
	}
	res, err := p.appendLocked(batch, kindClient)
	p.mu.Unlock()
	return res, err
}

// AppendCoordinator appends one batch written by a coordinator (transaction
// markers; COORDINATOR origin): size, CRC, epoch checks, offsets assigned.
// A marker states transaction version 0, as a WriteTxnMarkers request
// below version 2 does. Refused with kafkaerr.ReadOnlyTopic unless the partition
// is writable.
func (p *Partition) AppendCoordinator(batch []byte) (Result, error) {
	return p.AppendTxnMarker(batch, psm.TV0)
}

// AppendTxnMarker is AppendCoordinator for a COMMIT or ABORT marker whose
// WriteTxnMarkers request states transaction version tv (KIP-1228):
// producer state checks the marker's epoch by it (psm.TxnVersion), and
// refuses psm.TVUnknown.
func (p *Partition) AppendTxnMarker(batch []byte, tv psm.TxnVersion) (Result, error) {
	p.mu.Lock()
	if p.state != Stopped {
		p.mu.Unlock()
		return Result{}, kafkaerr.ReadOnlyTopic
	}
	res, err := p.appendMarkerLocked(batch, tv)
	p.mu.Unlock()
	return res, err
}

// appendMarkerLocked appends batch with COORDINATOR origin, its marker
// stating transaction version tv.
func (p *Partition) appendMarkerLocked(batch []byte, tv psm.TxnVersion) (Result, error) {
	p.markerTV = tv
	res, err := p.appendLocked(batch, kindCoordinator)
	p.markerTV = psm.TV0
	return res, err
}

// AppendMirrored appends a chunk of batches fetched from source cluster
// source (REPLICATION origin) while the partition is MIRRORING: each batch is
// CRC-checked, its producer ID mapped by the strategy (rewritten in the log's
// copy with the configured CRC fix), its offsets kept or assigned per
// Config.MirrorOffsets, and run through producer state. If any batch is
// rejected nothing of the chunk is written, the log and producer state are
// unchanged, and batches is never modified. An unmappable PID (bitfield,
// policy reject) moves the partition to FAILED. Errors are *BatchError.
func (p *Partition) AppendMirrored(batches []byte, source [16]byte) (Result, error) {
	p.mu.Lock()
	if p.state != Mirroring {
		err := kafkaerr.NotMirroring
		if p.state == Failed {
			err = kafkaerr.MirrorPartitionFailed
		}
		p.mu.Unlock()
		return Result{}, err
	}
	if err := p.checkSource(source); err != nil {
		p.mu.Unlock()
		return Result{}, err
	}
	p.source, p.hasSource = source, true
	res, err := p.appendLocked(batches, kindMirror)
	p.mu.Unlock()
	return res, err
}

// AppendReplica appends a chunk fetched by a follower from its leader:
// bytes as-is (no mapping, offsets and epochs kept, offsets must not go
// backwards), CRC-checked, REPLICATION origin. Allowed in every mirror state.
func (p *Partition) AppendReplica(batches []byte) (Result, error) {
	p.mu.Lock()
	res, err := p.appendLocked(batches, kindReplica)
	p.mu.Unlock()
	return res, err
}

// fail wraps err for a multi-batch kind; single-batch kinds return it bare.
func fail(k kind, i, pos int, err error) error {
	if k == kindClient || k == kindCoordinator {
		return err
	}
	return &BatchError{Index: i, Pos: pos, Err: err}
}

// frameSize is codec.Next's framing check in a form the compiler inlines:
// the size of the whole v2 batch at the start of buf, or -1 where codec.Next
// fails (partial, bad length, bad magic). FuzzFrameSize holds the two equal.
func frameSize(buf []byte) int {
	if len(buf) < codec.HeaderSizeUpToMagic || buf[codec.OffMagic] != codec.MagicV2 {
		return -1
	}
	n := int(int32(binary.BigEndian.Uint32(buf[codec.OffBatchLength:])))
	if n < codec.HeaderSize-codec.LogOverhead || n > len(buf)-codec.LogOverhead {
		return -1
	}
	return n + codec.LogOverhead
}

// fuseMin is the batch size from which the CRC check and the copy into the
// log share one pass (codec.ChecksumCopyCold). Under it, the fused kernel's
// 8-byte stores land just before the header fields are read back from the
// copy (producerId at 43 straddles two of them), and the loads wait for the
// stores to retire instead of being forwarded: +20 ns per 100-byte batch
// under the bitfield strategy with 1000 producers, where a plain copy's wide
// stores forward. From 1 KiB the fused pass wins (48 against 53 ns). The
// staging is done before the checks only for appends of fuseMin bytes or
// more (appendLocked: step 3 ahead of step 1); runs of smaller batches in
// them are copied in one piece, as without it.
const fuseMin = 1024

// fusedCopy is the append path's one fused CRC and copy (appendLocked,
// stageChecked, applyChunk), for a batch of fuseMin bytes or more and the
// smaller batches before it not copied yet: it copies head into headDst
// (those batches and the batch's header, up to codec.CRCStart), then body
// into bodyDst in the pass that computes body's CRC-32C, which it returns
// (codec.ChecksumCopyCold): one pass over the covered bytes instead of two.
// The destinations are the log's staging bytes. The callers slice, so that
// it stays small enough to inline.
func fusedCopy(headDst, head, bodyDst, body []byte) uint32 {
	copy(headDst, head)
	return codec.ChecksumCopyCold(bodyDst, body)
}

// intact reports whether replicated batch b passes the checks a mirrored or
// replica batch gets before producer state: its CRC is crc, the CRC-32C of
// its covered bytes (RecordBatch#ensureValid, which
// UnifiedLog#analyzeAndValidateRecords calls for every origin), and its
// lastOffsetDelta is not negative (ours: a negative one would put its last
// offset before its base offset in our log).
func intact(b codec.Batch, crc uint32) bool {
	return crc == b.CRC() && b.LastOffsetDelta() >= 0
}

// keptOffsets checks the offsets of a replicated batch that keeps its own
// (a replica's, a mirror's that preserves them) against next, the log end:
// they must not go below it, and the batch must end before math.MaxInt64 so
// the next offset is an int64 (lastOffsetDelta ≥ 0: intact).
func keptOffsets(b codec.Batch, next int64) error {
	return offsetsFrom(b.BaseOffset(), b.LastOffsetDelta(), next)
}

// offsetsFrom is keptOffsets of a batch whose baseOffset and
// lastOffsetDelta are read already.
func offsetsFrom(base int64, delta int32, next int64) error {
	switch {
	case base < next:
		return ErrOffsetsOutOfOrder
	case base >= math.MaxInt64-int64(delta):
		return ErrOffsetOverflow
	}
	return nil
}

// appendLocked is the append path, in the five steps of Kafka's order that
// doc.go lists (UnifiedLog#append), one block each: frame and check (1),
// roll (2), stage the copy (3), per batch in the copy the mapping, offsets
// and producer state (4), write and commit (5). A replicated append of
// fuseMin bytes or more takes its staging bytes before step 1, which then
// copies its batches there in their CRC's pass. The steps are blocks of one
// function, not functions: the calls and the values handed between them
// cost a one-batch append about 5 % more instructions
// (results/appendpath/appendlocked-ab/). It returns every defect of src as
// an error and never panics (the fuzz targets hold it to that), so the
// Append* entry points unlock without defer.
func (p *Partition) appendLocked(src []byte, k kind) (Result, error) {
	if p.closed {
		return Result{}, ErrClosed
	}
	leader := k == kindClient || k == kindCoordinator
	if !leader && frameSize(src) != len(src) && !p.log.NeedsRoll(len(src)) {
		// A chunk of several batches (or none, or one that does not
		// frame) that fits the active segment: one pass (chunk.go).
		return p.appendChunkLocked(src, k)
	}

	// 3, ahead of 1 for a replicated append of fuseMin bytes or more: the
	// staging bytes, the log's next ones, or, when the append must go to a
	// new segment, the start of the next segment's buffer
	// (storage.Log.StageRolled), the roll waiting for the checks. Staged
	// bytes are not the log's until step 5, so a rejected append leaves
	// them unpublished. Where the CRC does not fuse with the copy
	// (codec.ChecksumCopyFuses: -tags purego, other CPUs) an append due a
	// roll is not staged ahead, which then costs the same two passes.
	var dst []byte // the staged copy, once made
	rollDue := false
	if !leader && len(src) >= fuseMin {
		switch rollDue = p.log.NeedsRoll(len(src)); {
		case !rollDue:
			dst = p.log.Stage(len(src))
		case codec.ChecksumCopyFuses():
			dst = p.log.StageRolled(len(src))
		}
	}

	// 1. Frame every batch of the caller's bytes and check it as its origin
	// calls for: a leader's one batch by LogValidator's rules
	// (checkLeader); a replicated batch intact and, when staged ahead,
	// copied on the way (from fuseMin bytes in its CRC's pass, fusedCopy;
	// runs of smaller ones in one copy).
	n, run := 0, 0 // with dst: src[run:] is not copied yet
	for pos := 0; pos < len(src); n++ {
		size := frameSize(src[pos:])
		if size < 0 {
			return Result{}, fail(k, n, pos, kafkaerr.CorruptMessage)
		}
		b := codec.Batch(src[pos : pos+size])
		if leader {
			if n > 0 {
				return Result{}, kafkaerr.InvalidRecord // one batch per partition (LogValidator#validateOneBatchRecords)
			}
			if err := p.checkLeader(b, k); err != nil {
				return Result{}, err
			}
		} else {
			var crc uint32
			if dst == nil || size < fuseMin {
				crc = codec.Checksum(b[codec.CRCStart:])
			} else {
				at, end := pos+codec.CRCStart, pos+size
				crc, run = fusedCopy(dst[run:at], src[run:at], dst[at:end], src[at:end]), end
			}
			if !intact(b, crc) {
				return Result{}, fail(k, n, pos, kafkaerr.CorruptMessage)
			}
		}
		pos += size
	}
	if dst != nil {
		copy(dst[run:], src[run:])
	}
	if n == 0 {
		if k == kindMirror || k == kindReplica {
			return Result{FirstOffset: -1, LastOffset: -1}, nil // an empty fetch
		}
		return Result{}, kafkaerr.InvalidRecord
	}
	if leader && p.val.rebuilt {
		src = p.val.out // LogValidator rebuilt the batch: write that instead
	}

	if dst == nil {
		// 2. Roll if the append does not fit the active segment.
		if p.log.NeedsRoll(len(src)) {
			if err := p.roll(); err != nil {
				return Result{}, err
			}
		}
		// 3. Copy into the log's staging bytes: from here on only the
		// copy changes.
		dst = p.log.Stage(len(src))
		copy(dst, src)
	} else if rollDue {
		// 2. The roll, whose new segment starts with the copy staged
		// ahead (3).
		if err := p.roll(); err != nil {
			return Result{}, err
		}
	}
	if leader && p.val.rebuilt {
		p.val.trim(true) // the rebuilt batch is staged: free it if huge
	}

	// 4. Per batch in the copy: the mapping of its producer ID (mirrored,
	// rewriting strategies), its base offset and partition leader epoch
	// where its origin calls for them (both outside the CRC), then
	// producer state, on the copy of it the Appender begins here.
	app := p.app
	app.Begin(k.origin())
	next := p.log.End()
	res := Result{FirstOffset: -1, Batches: n}
	maxEpoch, lastEpoch := p.maxEpoch, int32(0)
	for pos, i := 0, 0; pos < len(dst); i++ {
		b := codec.Batch(dst[pos : pos+int(codec.Batch(dst[pos:]).BatchLength())+codec.LogOverhead])
		var sent uint32 // a CLIENT batch's CRC before LogValidator's stamp
		switch k {
		case kindMirror:
			if p.rewrites {
				if _, err := p.mapper.RewriteBatch(b, p.source, p.cfg.CRCFix); err != nil {
					return Result{}, fail(k, i, pos, p.unmappable(app, err))
				}
			}
			if p.assign {
				b.SetBaseOffset(next)
				b.SetPartitionLeaderEpoch(p.leaderEpoch)
			} else if err := keptOffsets(b, next); err != nil {
				app.Abort()
				return Result{}, fail(k, i, pos, err)
			}
		case kindReplica:
			if err := keptOffsets(b, next); err != nil {
				app.Abort()
				return Result{}, fail(k, i, pos, err)
			}
		default: // CLIENT and COORDINATOR
			b.SetBaseOffset(next)
			b.SetPartitionLeaderEpoch(p.leaderEpoch)
			sent = b.CRC()    // baseOffset and partitionLeaderEpoch are outside the CRC
			p.val.applyFix(b) // LogValidator's setMaxTimestamp, before producer state reads it
		}
		lastEpoch = b.PartitionLeaderEpoch()
		maxEpoch = max(maxEpoch, lastEpoch)
		var err error
		switch {
		case k == kindClient:
			// Only a CLIENT batch can be a duplicate.
			var out *psm.Outcome
			if out, err = addClient(app, b, &p.pb, sent); err == nil && out.Duplicate.Found {
				app.Abort()
				return Result{FirstOffset: out.Duplicate.FirstOffset, LastOffset: out.Duplicate.LastOffset,
					Duplicate: true, Batches: 1}, nil
			}
		case b.IsControl():
			if !p.skipsControl(b) {
				// A leader's marker states the version of its request
				// (AppendTxnMarker); a replicated one states none.
				tv := psm.TVUnknown
				if k == kindCoordinator {
					tv = p.markerTV
				}
				_, err = addBatch(app, b, &p.pb, tv)
			}
		default:
			err = addData(app, b, &p.pb)
		}
		if err != nil {
			app.Abort()
			return Result{}, fail(k, i, pos, err)
		}
		if res.FirstOffset < 0 {
			res.FirstOffset = b.BaseOffset()
		}
		res.LastOffset = b.LastOffset()
		next = b.NextOffset()
		pos += len(b)
	}

	// 5. Write, then commit producer state (published).
	if invariants.Enabled {
		checkStaged(dst, p.log.End(), next)
	}
	if err := p.log.Commit(dst, next); err != nil {
		app.Abort()
		return Result{}, err
	}
	return p.published(app, k, res, next, maxEpoch, lastEpoch)
}

// published finishes an append whose batches the log holds, up to next:
// the largest partition leader epoch and, for a mirrored append, the mirror
// checkpoint (next, lastEpoch); producer state's commit and what it
// reports; the fsync policy.
func (p *Partition) published(app *psm.StoreAppender, k kind, res Result, next int64, maxEpoch, lastEpoch int32) (Result, error) {
	p.maxEpoch = maxEpoch
	if k == kindMirror {
		p.mirrored.Offset, p.mirrored.Epoch = next, lastEpoch
	}
	if err := p.committed(app.Commit()); err != nil {
		return res, err
	}
	if p.log.Memory() {
		return res, nil
	}
	return res, p.log.MaybeSync()
}

// roll starts a new segment at the log end offset; for a file log the old
// segment is synced first (Kafka flushes rolled segments), and a producer
// snapshot is taken at the new base unless SkipRollSnapshots.
func (p *Partition) roll() error {
	if !p.log.Memory() {
		if err := p.log.Sync(); err != nil {
			return err
		}
	}
	if err := p.log.Roll(); err != nil {
		return err
	}
	if !p.cfg.SkipRollSnapshots {
		if err := p.takeSnapshot(p.log.End()); err != nil {
			return err
		}
	}
	return p.snaps.RemoveBelow(p.log.Start())
}

// takeSnapshot writes producer state as of offset (the map end offset)
// when it moved past the last snapshot (ProducerStateManager#takeSnapshot:
// lastMapOffset > lastSnapOffset). So an empty log has no snapshot, and a
// rebuild that ends at the offset of the snapshot it loaded writes none.
func (p *Partition) takeSnapshot(offset int64) error {
	if offset <= p.lastSnap || p.snaps.Newest() == offset {
		return nil
	}
	p.snapBuf = p.psm.AppendSnapshot(p.snapBuf[:0], p.id)
	if err := p.snaps.Write(offset, p.snapBuf); err != nil {
		return err
	}
	p.lastSnap = offset
	return nil
}

// unmappable refuses the append of a batch the strategy cannot map (a PID
// >= 2^31 under policy reject, the -1 slot without salts, no free region, a
// salt that cannot be recorded): producer state's pending append is dropped
// and the partition moves to FAILED, whatever the cause. The error matches
// kafkaerr.UnmappableProducerID.
func (p *Partition) unmappable(app *psm.StoreAppender, err error) error {
	app.Abort()
	p.state = Failed
	if !errors.Is(err, kafkaerr.UnmappableProducerID) {
		err = fmt.Errorf("%w: %w", kafkaerr.UnmappableProducerID, err)
	}
	return err
}
