package appendpath

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
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
// partition with Kafka's defaults and strategy verbatim.
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
	// Fault, when set, is asked before each STOPPING step; an error fails
	// the step (the scenario language's `fault DEST at=...`).
	Fault func(step StopStep) error
	// BarrierUnaware makes the partition a broker that predates control type
	// 7 (hazard R8): a MIRROR_PID_RESET batch is stored and replicated like
	// any control batch, but producer state skips it, as Kafka's
	// ProducerStateManager skips control records it does not know.
	BarrierUnaware bool
	// NoBarrier: the feature level that enables the barrier is not reached,
	// so STOPPING writes none (under strategy barrier).
	NoBarrier bool
	// RecoveryIgnoresBarrier: the replay of Open (recovery after an unclean
	// shutdown; a clean Close leaves a snapshot at the log end, so nothing
	// is replayed then) stores barriers without applying them, as the
	// prototype's per-segment recovery does: the producer entries built
	// before the barrier come back after a crash, with their duplicate
	// windows. Rebuilds after a truncation apply them.
	RecoveryIgnoresBarrier bool
	// FailOnSourceChange: a mirrored append from a cluster other than the
	// one the persisted mirror checkpoint names (the partition stopped
	// mirroring one cluster and now mirrors another into the same log)
	// moves the partition to FAILED for good, as the prototype does for an
	// inconsistent source cluster id.
	FailOnSourceChange bool

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
	recovering  bool // Open's rebuild is under way (Config.RecoveryIgnoresBarrier)
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
}

// Open opens a partition. With cfg.Dir set it opens (or creates) the log
// there and recovers it: a torn or corrupt tail is cut at the last whole,
// CRC-valid batch and producer state is rebuilt from the newest valid
// snapshot plus a replay of the batches after it.
func Open(cfg Config) (*Partition, error) {
	if cfg.FS == nil {
		cfg.FS = vfs.OSFS{}
	}
	// SegmentBytes and SyncInterval are the log's: storage.Open defaults
	// them.
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 1048588
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := validatorDefaults(&cfg); err != nil {
		return nil, err
	}
	p := &Partition{cfg: cfg, now: cfg.Now, state: cfg.State, leaderEpoch: cfg.LeaderEpoch, maxEpoch: cfg.LeaderEpoch,
		rewrites: cfg.Strategy.Rewrites(), assign: cfg.MirrorOffsets == AssignOffsets}
	p.val = newValidator(&cfg)
	p.psm, p.id = cfg.PSM, cfg.PartitionID
	if p.psm == nil {
		p.psm, p.id = psm.NewStore(cfg.PSMOptions), 0
	}
	p.app = p.psm.Appender(p.id)
	p.mapper = cfg.Mapper
	if p.mapper == nil {
		p.mapper = pid.NewMapper(pid.Config{Strategy: cfg.Strategy, Policy: cfg.Policy, Fold: cfg.Fold})
	}
	l, rec, err := storage.Open(storage.Config{FS: cfg.FS, Dir: cfg.Dir, SegmentBytes: cfg.SegmentBytes,
		RetainSegments: cfg.RetainSegments, Sync: cfg.Sync, SyncInterval: cfg.SyncInterval, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	p.log = l
	if p.snaps, err = storage.OpenSnapshotDir(cfg.FS, cfg.Dir); err != nil {
		return nil, err
	}
	p.recovery = Recovery{Recovery: rec, Snapshot: -1}
	if cfg.Dir == "" {
		p.hw = 0
		return p, nil
	}
	// LogLoader#load: ProducerStateManager#removeStraySnapshots with the
	// segment base offsets, then the rebuild.
	bases := make([]int64, l.Segments())
	for i := range bases {
		bases[i] = l.SegmentBase(i)
	}
	if err := p.snaps.RemoveStray(bases); err != nil {
		return nil, err
	}
	if err := p.snaps.RemoveAbove(l.End()); err != nil {
		return nil, err
	}
	if err := p.loadCheckpoint(); err != nil {
		return nil, err
	}
	if err := p.clampCheckpoint(); err != nil { // a recovery cut the tail
		return nil, err
	}
	p.recovering = true
	err = p.rebuild(&p.recovery, true)
	p.recovering = false
	if err != nil {
		return nil, err
	}
	p.hw = p.log.End()
	return p, nil
}

// Recovery is what Open found in a file-backed log: the log's own recovery
// (storage.Recovery: torn tails cut, indexes rebuilt) and the rebuild of
// producer state after it.
type Recovery struct {
	storage.Recovery
	// Snapshot is the offset of the producer snapshot loaded, or -1.
	Snapshot int64
	// Replayed counts the batches replayed into producer state.
	Replayed int
}

// Recovery reports what Open found in a file-backed log.
func (p *Partition) Recovery() Recovery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.recovery
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
// more with no roll due; runs of smaller batches in them are copied in one
// piece, as without it.
const fuseMin = 1024

// checkLeader runs the checks of a CLIENT or COORDINATOR batch that read
// only the caller's bytes (UnifiedLog#analyzeAndValidateRecords, then
// LogValidator#validateBatch), in Kafka's order; the last is
// LogValidator's record walk (p.val.validate), which Kafka runs for every
// leader append (origin other than REPLICATION and RAFT_LEADER): the
// batch-level rules before it are CLIENT-only, the record rules and the
// maxTimestamp / LogAppendTime stamp apply to COORDINATOR batches too.
func (p *Partition) checkLeader(b codec.Batch, k kind) error {
	if k == kindClient && b.BaseOffset() != 0 {
		return kafkaerr.InvalidRecord
	}
	if len(b) > p.cfg.MaxMessageBytes {
		return kafkaerr.MessageTooLarge
	}
	if b.VerifyCRC() != nil {
		return kafkaerr.CorruptMessage
	}
	if k != kindClient {
		if b.LastOffsetDelta() < 0 {
			// Kafka does not check a COORDINATOR batch's offset range; a
			// negative one would put lastOffset before baseOffset in our log.
			return kafkaerr.CorruptMessage
		}
	} else {
		// LogValidator#validateBatch: lastOffset−baseOffset+1 > 0 (baseOffset
		// is 0 here), recordsCount > 0, and the two equal; all
		// InvalidRecordException. Compared in int64, as the Java does: a
		// count of MinInt32 beside a lastOffsetDelta of MaxInt32 is not equal.
		n := b.RecordsCount()
		switch {
		case b.LastOffsetDelta() < 0, n <= 0, int64(n) != int64(b.LastOffsetDelta())+1:
			return kafkaerr.InvalidRecord
		case b.IsControl():
			return kafkaerr.InvalidRecord
		case b.HasProducerID() && b.BaseSequence() < 0:
			return kafkaerr.InvalidRecord
		}
	}
	// LogValidator's record checks (validate.go); p.val says what the staged
	// copy then needs.
	return p.val.validate(b, p.now, p.cfg.MaxMessageBytes)
}

// appendLocked is the append path, in Kafka's order (UnifiedLog#append):
// frame and check every batch of src (CRC included); roll if needed; copy
// src into the log's staging bytes (for replicated batches in the CRC's own
// pass when no roll is due); per batch in the copy: map the PID,
// assign offsets and epoch, read producer-state fields (barrier and markers
// included) and validate on the Appender's copy; write; commit producer
// state; write .txnindex entries; move the high watermark; fsync per policy.
// It returns every defect of src as an error and never panics (the fuzz
// targets hold it to that), so the Append* entry points unlock without defer.
func (p *Partition) appendLocked(src []byte, k kind) (Result, error) {
	if p.closed {
		return Result{}, ErrClosed
	}
	// 1. Framing and checks on the caller's bytes. A replicated batch
	// (mirror, follower) needs its CRC and a non-negative lastOffsetDelta;
	// its bytes are copied into the log's staging bytes in the same pass as
	// the CRC (codec.ChecksumCopyCold: the staging bytes are the log's next
	// ones, not in L1), which are not the log's until commit, so a rejected
	// append leaves them unpublished. When the append must go to a new
	// segment, the staging bytes are the start of the next segment's buffer
	// (storage.Log.StageRolled) and the roll waits for the checks, as it
	// does on the other paths; where the CRC does not fuse with the copy
	// (codec.ChecksumCopyFuses: -tags purego, other CPUs) such an append
	// keeps the path without staging, which then costs the same two passes.
	leader := k == kindClient || k == kindCoordinator
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
				// The small batches before it and its header in one copy,
				// then the covered bytes with their CRC.
				at := pos + codec.CRCStart
				copy(dst[run:at], src[run:at])
				crc = codec.ChecksumCopyCold(dst[at:pos+size], src[at:pos+size])
				run = pos + size
			}
			if crc != b.CRC() || b.LastOffsetDelta() < 0 {
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
		// 2. Roll before the append if it does not fit the active segment.
		if p.log.NeedsRoll(len(src)) {
			if err := p.roll(); err != nil {
				return Result{}, err
			}
		}
		// 3. Copy into the log's staging bytes: from here on only the copy changes.
		dst = p.log.Stage(len(src))
		copy(dst, src)
	} else if rollDue {
		// 2. The roll, whose new segment starts with the staged copy.
		if err := p.roll(); err != nil {
			return Result{}, err
		}
	}
	if leader && p.val.rebuilt {
		p.val.trim(true) // the rebuilt batch is staged: free it if huge
	}
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
					// A batch the strategy cannot map (a PID >= 2^31 under
					// policy reject, the -1 slot without salts, no free
					// region, a salt that cannot be recorded) is refused and
					// the partition moves to FAILED, whatever the cause.
					app.Abort()
					p.state = Failed
					if !errors.Is(err, kafkaerr.UnmappableProducerID) {
						err = fmt.Errorf("%w: %w", kafkaerr.UnmappableProducerID, err)
					}
					return Result{}, fail(k, i, pos, err)
				}
			}
			if p.assign {
				b.SetBaseOffset(next)
				b.SetPartitionLeaderEpoch(p.leaderEpoch)
			} else if b.BaseOffset() < next {
				app.Abort()
				return Result{}, fail(k, i, pos, ErrOffsetsOutOfOrder)
			}
		case kindReplica:
			if b.BaseOffset() < next {
				app.Abort()
				return Result{}, fail(k, i, pos, ErrOffsetsOutOfOrder)
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
	// 4. Write, then commit producer state.
	if invariants.Enabled {
		checkStaged(dst, p.log.End(), next)
	}
	if err := p.log.Commit(dst, next); err != nil {
		app.Abort()
		return Result{}, err
	}
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

// skipsControl reports whether producer state must not see control batch b:
// a barrier on a BarrierUnaware partition, or in Open's replay under
// Config.RecoveryIgnoresBarrier.
func (p *Partition) skipsControl(b codec.Batch) bool {
	if !p.cfg.BarrierUnaware && !(p.recovering && p.cfg.RecoveryIgnoresBarrier) {
		return false
	}
	cr, err := b.ControlRecord()
	return err == nil && cr.Type == codec.ControlMirrorPidReset
}

// addBatch runs one batch through app with psm.BatchOf into *pb (control
// batches and CLIENT appends, which need the Outcome); a marker states
// transaction version tv.
func addBatch(app *psm.StoreAppender, b codec.Batch, pb *psm.Batch, tv psm.TxnVersion) (*psm.Outcome, error) {
	var err error
	if *pb, err = psm.BatchOf(b); err != nil {
		return nil, err
	}
	pb.TxnVersion = tv
	return app.Add(pb)
}

// addClient is addBatch for a CLIENT batch whose CRC was sent as sent: a
// stamp of LogValidator's (LogAppendTime, a corrected maxTimestamp) that
// changed the CRC makes the stored one not the client's, so the duplicate
// window does not keep it (psm.Options.DedupCRC).
func addClient(app *psm.StoreAppender, b codec.Batch, pb *psm.Batch, sent uint32) (*psm.Outcome, error) {
	var err error
	if *pb, err = psm.BatchOf(b); err != nil {
		return nil, err
	}
	pb.HasCRC = pb.HasCRC && pb.CRC == sent
	return app.Add(pb)
}

// addData runs one data (non-control) batch through app: psm.BatchOf's
// fields read from the header straight into *pb, field by field (every field
// is written: pb is reused), the Outcome discarded (it matters only for
// CLIENT duplicates). FuzzAddData holds *pb equal to BatchOf whatever pb
// held before. b must hold a whole header.
func addData(app *psm.StoreAppender, b codec.Batch, pb *psm.Batch) error {
	_ = b[codec.HeaderSize-1]
	pb.ProducerID, pb.ProducerEpoch, pb.BaseSequence = b.ProducerID(), b.ProducerEpoch(), b.BaseSequence()
	pb.LastOffsetDelta, pb.BaseOffset, pb.MaxTimestamp = b.LastOffsetDelta(), b.BaseOffset(), b.MaxTimestamp()
	pb.RecordsCount, pb.Transactional, pb.Control = b.RecordsCount(), b.IsTransactional(), false
	pb.ControlType, pb.CoordinatorEpoch, pb.ControlTimestamp = codec.ControlUnknown, 0, 0
	pb.CRC, pb.HasCRC = b.CRC(), !b.Attributes().LogAppendTime()
	pb.TxnVersion = psm.TV0
	_, err := app.Add(pb)
	return err
}

// committed applies what producer state's Commit reports: .txnindex entries
// and the high watermark.
func (p *Partition) committed(c *psm.Committed) error {
	for _, t := range c.Aborted {
		if err := p.log.AppendAborted(t); err != nil {
			return err
		}
	}
	if !p.cfg.ManualHighWatermark {
		p.hw = p.log.End()
		if len(c.Completed) > 0 {
			p.psm.OnHighWatermark(p.id, p.hw)
		}
	}
	return nil
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

// Read returns a copy of whole batches starting with the one that holds
// offset, at most maxBytes of them but at least one batch. At or past the
// log end offset it returns nil; below the log start kafkaerr.OffsetOutOfRange.
// Allocates the result.
func (p *Partition) Read(offset int64, maxBytes int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Read(offset, maxBytes)
}

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Start()
}

// LogEndOffset is the offset the next batch gets.
func (p *Partition) LogEndOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.End()
}

// SyncedOffset is the durable log end: every offset below it survives a
// crash. Equal to LogEndOffset for a memory log.
func (p *Partition) SyncedOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Synced()
}

// HighWatermark is the replicated offset (the log end offset unless
// Config.ManualHighWatermark).
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw
}

// SetHighWatermark moves the high watermark (clamped to the log end offset)
// and lets producer state drop completed transactions below it.
func (p *Partition) SetHighWatermark(hw int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw = min(max(hw, p.log.Start()), p.log.End())
	p.psm.OnHighWatermark(p.id, p.hw)
}

// LastStableOffset is the first offset of the earliest open or unreplicated
// transaction when below the high watermark, else the high watermark;
// never below the log start (ProducerStateManager#firstUndecidedOffset,
// UnifiedLog#lastStableOffset).
func (p *Partition) LastStableOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lso()
}

// HasLateTransaction reports a transaction open longer than
// transaction.max.timeout.ms plus Kafka's buffer at the partition's clock
// (UnifiedLog#hasLateTransaction, the broker's hanging-transaction metric;
// psm.Store.HasLateTransaction).
func (p *Partition) HasLateTransaction() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.HasLateTransaction(p.id, p.now().UnixMilli())
}

func (p *Partition) lso() int64 {
	return max(p.psm.LastStableOffset(p.id, p.hw), p.log.Start())
}

// LeaderEpoch is the epoch stamped on CLIENT and COORDINATOR batches.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leaderEpoch
}

// AbortedTxns appends the .txnindex entries overlapping [from, to) to dst
// (what a READ_COMMITTED fetch returns with its data).
func (p *Partition) AbortedTxns(dst []storage.AbortedTxn, from, to int64) []storage.AbortedTxn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.AbortedTxns(dst, from, to)
}

// OpenTxns appends the open transactions, by first offset, to dst.
func (p *Partition) OpenTxns(dst []psm.TxnInfo) []psm.TxnInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.OpenTxns(dst, p.id)
}

// Producers returns a copy of every producer entry, in no particular order.
func (p *Partition) Producers() []psm.ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []psm.ProducerInfo
	for e := range p.psm.Producers(p.id) {
		out = append(out, e)
	}
	return out
}

// Producer returns a copy of one producer entry.
func (p *Partition) Producer(pid int64) (psm.ProducerInfo, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.Producer(p.id, pid)
}

// ProducerCount is the number of producer entries.
func (p *Partition) ProducerCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.ProducerCount(p.id)
}

// Snapshot returns producer state in Kafka's snapshot file format (entries
// sorted by PID), for comparing two partitions.
func (p *Partition) Snapshot() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.AppendSnapshot(nil, p.id)
}

// Batches iterates the batches whose base offset is at least from, with a
// framing error at the end if any. Each batch aliases the log (memory) or a
// per-segment buffer (file) and is valid only until the next iteration. The
// partition's lock is held during the iteration: the loop body must not call
// other methods of p.
func (p *Partition) Batches(from int64) iter.Seq2[codec.Batch, error] {
	return func(yield func(codec.Batch, error) bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		stop := errors.New("stop")
		err := p.log.ForEach(from, func(b codec.Batch) error {
			if !yield(b, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield(nil, err)
		}
	}
}

// Sync flushes the log to stable storage.
func (p *Partition) Sync() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Sync()
}

// Close syncs a file-backed log, writes a snapshot at the log end offset and
// closes the files. The partition refuses appends afterwards.
func (p *Partition) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.log.Memory() {
		return nil
	}
	err := p.log.Sync()
	if err == nil {
		err = p.takeSnapshot(p.log.End())
	}
	if cerr := p.log.Close(); err == nil {
		err = cerr
	}
	return err
}

// Truncate removes every batch at or above offset (a batch holding offset
// goes whole), drops their .txnindex entries and snapshots, and rebuilds
// producer state from the newest snapshot at or below offset plus a replay:
// the follower truncation and failback step to a divergence point.
func (p *Partition) Truncate(offset int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.truncateLocked(offset)
}

func (p *Partition) truncateLocked(offset int64) error {
	if offset >= p.log.End() {
		return nil
	}
	// UnifiedLog#truncateTo truncates a log fully when nothing below offset
	// is left.
	full := offset <= p.log.Start()
	if err := p.log.Truncate(offset); err != nil {
		return err
	}
	if err := p.snaps.RemoveAbove(p.log.End()); err != nil {
		return err
	}
	p.truncFully = full
	err := p.rebuild(nil, false)
	p.truncFully = false
	if err != nil {
		return err
	}
	p.hw = min(p.hw, p.log.End())
	if !p.cfg.ManualHighWatermark {
		p.hw = p.log.End()
	}
	// Last: a failed checkpoint write leaves log and producer state agreeing.
	return p.clampCheckpoint()
}

// reindexed writes the .txnindex entries of one replayed commit when the
// rebuild reindexes.
func (p *Partition) reindexed(c *psm.Committed, reindex bool) error {
	if !reindex {
		return nil
	}
	for _, t := range c.Aborted {
		if err := p.log.AppendAbortedAt(t); err != nil {
			return err
		}
	}
	return nil
}

// replaySegments is the replay of psm.Prototype, the prototype's
// LogLoader#loadProducersFromRecords: every batch of one segment goes
// through one Appender (one map of per-producer updates for the segment,
// flushed after the loop), so a barrier inside a segment resurrects the
// entries its batches before it built, as on the append paths. It returns
// the number of batches replayed.
func (p *Partition) replaySegments(from int64, reindex bool) (int, error) {
	var app psm.Appender
	seg, replayed := -1, 0
	flush := func() error {
		if app == nil {
			return nil
		}
		c := app.Commit()
		app = nil
		return p.reindexed(c, reindex)
	}
	err := p.log.ForEach(from, func(b codec.Batch) error {
		if s := p.log.SegmentFor(b.BaseOffset()); app == nil || s != seg {
			if err := flush(); err != nil {
				return err
			}
			app, seg = p.psm.Begin(p.id, psm.Replication), s
		}
		var err error
		if !b.IsControl() || !p.skipsControl(b) { // else stored, not applied: Config.BarrierUnaware
			if p.pb, err = psm.BatchOf(b); err == nil {
				_, err = app.Add(&p.pb)
			}
		}
		if err != nil {
			app.Abort()
			app = nil
			return err
		}
		p.maxEpoch = max(p.maxEpoch, b.PartitionLeaderEpoch())
		replayed++
		return nil
	})
	if err != nil {
		if app != nil {
			app.Abort()
		}
		return replayed, err
	}
	return replayed, flush()
}

// Rebuild drops producer state and rebuilds it from the newest valid
// snapshot plus a replay of the log (what a broker restart does).
func (p *Partition) Rebuild() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rebuild(nil, false)
}

// rebuild is rebuildProducerState (Kafka's ProducerStateManager and
// LogLoader): delete the snapshots out of (log start, log end], clear,
// load the newest snapshot left (corrupt ones are deleted and the next
// older tried), replay every later
// batch with REPLICATION rules, one by one (barriers in exact order) or,
// under psm.Prototype, a segment per Appender (replaySegments), then
// snapshot at the log end. With
// reindex the .txnindex entries of the replayed range are rewritten from the
// replay (recovery after a crash, when they may be missing).
func (p *Partition) rebuild(rec *Recovery, reindex bool) error {
	// ProducerStateManager#truncateAndReload first deletes every snapshot
	// out of range: past the log end, and at or below the log start (<=: a
	// snapshot at the log start is never loaded; its producers are rebuilt
	// from the log, so those whose batches went with deleted segments are
	// forgotten).
	if err := p.snaps.RemoveAbove(p.log.End()); err != nil {
		return err
	}
	if err := p.snaps.RemoveBelow(p.log.Start() + 1); err != nil {
		return err
	}
	p.psm.Clear(p.id)
	from := p.log.Start()
	nowMs := p.now().UnixMilli()
	o, err := p.snaps.LoadNewest(p.log.Start()+1, p.log.End(), func(data []byte) error {
		return p.psm.LoadSnapshot(p.id, data, nowMs)
	}, func(err error) bool { return errors.Is(err, psm.ErrCorruptSnapshot) })
	if err != nil {
		return err
	}
	p.lastSnap = from
	if o >= 0 {
		from, p.lastSnap = o, o
		if rec != nil {
			rec.Snapshot = o
		}
	}
	if p.truncFully {
		p.lastSnap = 0
	}
	if reindex {
		if err := p.log.DropAbortedFrom(from); err != nil {
			return err
		}
	}
	replayed := 0
	if p.cfg.PSMOptions.BarrierApply == psm.Prototype {
		replayed, err = p.replaySegments(from, reindex)
	} else {
		err = p.log.ForEach(from, func(b codec.Batch) error {
			if b.IsControl() && p.skipsControl(b) {
				return nil
			}
			var err error
			if p.pb, err = psm.BatchOf(b); err != nil {
				return err
			}
			_, c, err := p.psm.Update(p.id, psm.Replication, &p.pb)
			if err != nil {
				return err
			}
			if err := p.reindexed(c, reindex); err != nil {
				return err
			}
			p.maxEpoch = max(p.maxEpoch, b.PartitionLeaderEpoch())
			replayed++
			return nil
		})
	}
	if err != nil {
		return err
	}
	if rec != nil {
		rec.Replayed = replayed
	}
	if !p.log.Memory() {
		if err := p.log.Sync(); err != nil {
			return err
		}
	}
	p.psm.OnHighWatermark(p.id, p.log.End())
	return p.takeSnapshot(p.log.End())
}
