package psm

import (
	"iter"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/enum"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/storage"
)

// PartitionID names one partition inside a Store or Model. It is a small dense index
// the caller assigns (0, 1, 2, …): the Store keeps its partitions in a slice
// indexed by it, so an ID of MaxPartitions or more is refused with a panic.
type PartitionID uint32

// MaxPartitions bounds PartitionID for the Store (its partition directory is a
// slice). The Model accepts any value.
const MaxPartitions = 1 << 20

// Origin is who appends a batch (org.apache.kafka.storage.internals.log.AppendOrigin).
// It decides which checks run (ProducerAppendInfo#maybeValidateDataBatch).
type Origin uint8

const (
	// Replication: follower fetch, mirror fetch and log recovery. No sequence
	// check; epoch and coordinator-epoch regressions are accepted.
	Replication Origin = iota
	// Coordinator: transaction markers and coordinator-written batches. Epoch
	// and coordinator-epoch checks, no sequence check, no duplicate lookup.
	Coordinator
	// Client: a producer's request. Every check, plus the duplicate lookup.
	Client
)

var originNames = [...]string{"REPLICATION", "COORDINATOR", "CLIENT"}

// String returns Kafka's name of the origin.
func (o Origin) String() string {
	if int(o) < len(originNames) {
		return originNames[o]
	}
	return "UNKNOWN"
}

// HasProducerIDRule decides which producer IDs are tracked at all.
type HasProducerIDRule uint8

const (
	// Stock is Kafka's RecordBatch.hasProducerId: pid > -1. A negative PID is
	// "no producer" and skips all producer-state tracking (failure mode M5 when
	// a strategy maps PIDs to negative values).
	Stock HasProducerIDRule = iota
	// NonNegativeOne tracks every PID except -1 (NO_PRODUCER_ID).
	NonNegativeOne
)

// hasProducerIDRules spells the rules as scenario's has-producer-id option
// does.
var hasProducerIDRules = enum.Table[HasProducerIDRule]{Kind: "has-producer-id rule",
	Names: []string{"stock", "not-minus-one"}, Err: ErrUnknownName}

// HasProducerIDRules lists every rule.
func HasProducerIDRules() []HasProducerIDRule { return hasProducerIDRules.Values() }

// String returns the rule's name: stock or not-minus-one.
func (r HasProducerIDRule) String() string { return hasProducerIDRules.String(r) }

// MarshalText implements encoding.TextMarshaler.
func (r HasProducerIDRule) MarshalText() ([]byte, error) { return hasProducerIDRules.MarshalText(r) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name matches
// ErrUnknownName.
func (r *HasProducerIDRule) UnmarshalText(b []byte) error {
	return hasProducerIDRules.UnmarshalText(r, b)
}

// BarrierApply selects how a MIRROR_PID_RESET barrier inside a multi-batch
// append is ordered against the other batches of that append.
type BarrierApply uint8

const (
	// Exact (default): the state after the append equals applying its batches
	// one by one. Entries built by batches before the barrier are removed;
	// batches after it start from an empty producer table
	// (docs/producer-state.md).
	Exact BarrierApply = iota
	// Prototype reproduces the KIP-1279 prototype (expireMirroredProducers,
	// applied where the validation loop meets the barrier): the producer
	// entries are removed at once, and only they; verification entries
	// stay. The updates of the append's batches before the
	// barrier stay pending and are applied at Commit, which resurrects
	// their entries, and an append rejected at a later batch has still
	// removed the producers (docs/producer-state.md, "The barrier").
	Prototype
)

// barrierApplies spells the orders as scenario's barrier-apply option does.
var barrierApplies = enum.Table[BarrierApply]{Kind: "barrier apply", Names: []string{"exact", "prototype"},
	Err: ErrUnknownName}

// BarrierApplies lists every order.
func BarrierApplies() []BarrierApply { return barrierApplies.Values() }

// String returns the order's name: exact or prototype.
func (b BarrierApply) String() string { return barrierApplies.String(b) }

// MarshalText implements encoding.TextMarshaler.
func (b BarrierApply) MarshalText() ([]byte, error) { return barrierApplies.MarshalText(b) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name matches
// ErrUnknownName.
func (b *BarrierApply) UnmarshalText(text []byte) error { return barrierApplies.UnmarshalText(b, text) }

// Kafka defaults (TransactionLogConfig, ProducerStateEntry).
const (
	DefaultExpirationMs = 86400000 // producer.id.expiration.ms
	NumBatchesToRetain  = 5        // ProducerStateEntry.NUM_BATCHES_TO_RETAIN
)

// The bound of HasLateTransaction (ProducerStateManager#hasLateTransaction).
const (
	// DefaultMaxTransactionTimeoutMs is transaction.max.timeout.ms.
	DefaultMaxTransactionTimeoutMs = 900000
	// LateTransactionBufferMs is ProducerStateManager.LATE_TRANSACTION_BUFFER_MS.
	LateTransactionBufferMs = 5 * 60 * 1000
)

// Options configure a Store or a Model. The zero value is Kafka's stock
// behaviour with the default expiration.
type Options struct {
	HasProducerID HasProducerIDRule
	BarrierApply  BarrierApply
	// ExpirationMs is producer.id.expiration.ms; values below 1 mean the
	// default (Kafka's minimum is 1).
	ExpirationMs int64
	// VerifyTransactions turns on the KIP-890 verification guard
	// (transaction.partition.verification.enable): a transactional data
	// batch from CLIENT or COORDINATOR with no open transaction needs the guard
	// returned by StartVerification. Off by default here because the append
	// path has no transaction coordinator to ask; Kafka's default is on.
	VerifyTransactions bool
	// MaxTransactionTimeoutMs is transaction.max.timeout.ms, the bound of
	// HasLateTransaction; values below 1 mean the default.
	MaxTransactionTimeoutMs int64
	// Release is the Kafka release whose rules apply where they changed
	// between releases still in use; the zero value is Kafka4 (4.2 and
	// later).
	Release Release
	// DedupCRC (dedup-check=crc) keeps each cached batch's CRC in the
	// five-batch window, and a CLIENT batch that matches a cached batch's
	// epoch and first and last sequence but not its CRC is refused with
	// ErrDuplicateCRCMismatch instead of being acknowledged as a duplicate.
	// Off by default, as in Kafka, which compares sequences only.
	DedupCRC bool
}

// Release names the Apache Kafka release line whose producer-state rules
// apply where a rule changed between releases still in use
// (docs/producer-state.md, "Which Kafka", which lists each rule with the
// release that brought it). Every other rule is the same in all of them.
type Release uint8

const (
	// Kafka4 is Apache Kafka 4.2 and later (the default): every rule below.
	// A transactional batch or marker from CLIENT or COORDINATOR whose
	// epoch is below its producer's is refused with INVALID_PRODUCER_EPOCH
	// before any other check (UnifiedLog#analyzeAndValidateProducerState,
	// KAFKA-19690). A COMMIT or ABORT marker is checked by the transaction
	// version its WriteTxnMarkers request states (Batch.TxnVersion,
	// KIP-1228, KAFKA-19446): see TxnVersion.
	Kafka4 Release = iota
	// Kafka3 is Apache Kafka 3.6 to 3.9 (KIP-890 verification without
	// KAFKA-14563): an open transaction at any epoch counts as ongoing, so
	// a transactional batch of a higher epoch needs no guard and
	// StartVerification hands out the sentinel. Markers follow the TV0/TV1
	// rule whatever Batch.TxnVersion says, and any transactional batch
	// removes its producer's verification entry.
	Kafka3
	// Kafka40 is Apache Kafka 4.0. A transaction counts as ongoing for the
	// verification guard only at the batch's epoch
	// (UnifiedLog#hasOngoingTransaction(producerId, producerEpoch),
	// KAFKA-14563), and a TV2 marker at the epoch of a verification entry
	// created by a TV2 request keeps that entry (UnifiedLog#updateProducers,
	// KAFKA-18654). Markers follow the TV0/TV1 rule whatever
	// Batch.TxnVersion says: the partition leader is not told the version.
	Kafka40
	// Kafka41 is Apache Kafka 4.1: Kafka40's rules, and StartVerification
	// refuses an epoch below the producer's with kafkaerr.InvalidProducerEpoch
	// (UnifiedLog#maybeStartTransactionVerification, KAFKA-18042); a CLIENT
	// batch of a producer whose verification entry was created by a TV2
	// request and whose committed entry caches no batch must start at
	// sequence 0 (ProducerAppendInfo#checkSequence, KAFKA-18202).
	Kafka41
)

// releaseNames spells each release as scenario's kafka-release option does: the
// first Kafka version its rules describe.
var releaseNames = enum.Table[Release]{Kind: "release", Names: []string{"4.2", "3.6", "4.0", "4.1"}, Err: ErrUnknownName}

// String returns the release's name: 4.2, 4.1, 4.0 or 3.6.
func (r Release) String() string { return releaseNames.String(r) }

// MarshalText implements encoding.TextMarshaler.
func (r Release) MarshalText() ([]byte, error) { return releaseNames.MarshalText(r) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name matches
// ErrUnknownName.
func (r *Release) UnmarshalText(b []byte) error { return releaseNames.UnmarshalText(r, b) }

// staleEpochFirst: a transactional batch or marker from CLIENT or
// COORDINATOR whose epoch is below its producer's is refused before the
// other checks (KAFKA-19690, 4.2).
func (r Release) staleEpochFirst() bool { return r == Kafka4 }

// markerTxnVersion: a marker is checked by the transaction version its
// request states (KAFKA-19446, 4.2).
func (r Release) markerTxnVersion() bool { return r == Kafka4 }

// refusesStaleVerification: StartVerification refuses an epoch below the
// producer's (KAFKA-18042, 4.1).
func (r Release) refusesStaleVerification() bool { return r == Kafka4 || r == Kafka41 }

// tv2StartsAtZero: a producer verified by a TV2 request whose committed
// entry caches no batch starts at sequence 0 (KAFKA-18202, 4.1).
func (r Release) tv2StartsAtZero() bool { return r == Kafka4 || r == Kafka41 }

// keepsTV2Verification: a marker at the epoch of a verification entry
// that supports the epoch bump keeps the entry (KAFKA-18654, 4.0).
func (r Release) keepsTV2Verification() bool { return r != Kafka3 }

// HasOngoingTransaction is UnifiedLog#hasOngoingTransaction under release r
// for a producer whose entry has open transaction txnFirst (-1: none) at
// epoch entryEpoch, asked for a batch or verification of epoch: Kafka 4
// compares the epochs (KAFKA-14563), Kafka 3 does not.
func (r Release) HasOngoingTransaction(txnFirst int64, entryEpoch, epoch int16) bool {
	return txnFirst >= 0 && (r == Kafka3 || entryEpoch == epoch)
}

// ongoing is HasOngoingTransaction under o's release.
func (o Options) ongoing(txnFirst int64, entryEpoch, epoch int16) bool {
	return o.Release.HasOngoingTransaction(txnFirst, entryEpoch, epoch)
}

// TxnVersion is a transaction version (org.apache.kafka.server.common
// .TransactionVersion, the transaction.version feature level), numbered as
// Kafka numbers it. The coordinator states it per marker in the
// WriteTxnMarkers request (KIP-1228); it is not part of the marker's
// bytes, so a replicated marker carries none.
type TxnVersion int8

const (
	// TVUnknown (TransactionVersion.TV_UNKNOWN): no version stated. A data
	// batch's, and a REPLICATION marker's, which is checked as TV0. Under
	// Kafka4 a COORDINATOR or CLIENT marker stating none is refused with
	// ErrMarkerWithoutTxnVersion (ProducerAppendInfo#appendEndTxnMarker).
	TVUnknown TxnVersion = -1
	// TV0 (the zero value) and TV1: a marker's epoch must not be below the
	// producer's (ProducerAppendInfo#checkProducerEpoch).
	TV0 TxnVersion = 0
	TV1 TxnVersion = 1
	// TV2 (KIP-890 part 2): the coordinator bumps the epoch at every commit
	// or abort, so a marker's epoch must be above the producer's; one equal
	// to it is accepted only when no transaction is open (a retried marker,
	// KAFKA-19999). The marker's epoch becomes the producer's, which clears
	// its cached batches.
	TV2 TxnVersion = 2
)

// txnVersions spells each version from TVUnknown up.
var txnVersions = enum.Table[TxnVersion]{Kind: "transaction version", First: TVUnknown, Err: ErrUnknownName,
	Names: []string{"TV_UNKNOWN", "TV0", "TV1", "TV2"}}

// String returns the version's name: TV_UNKNOWN, TV0, TV1 or TV2.
func (v TxnVersion) String() string { return txnVersions.String(v) }

// MarshalText implements encoding.TextMarshaler.
func (v TxnVersion) MarshalText() ([]byte, error) { return txnVersions.MarshalText(v) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (v *TxnVersion) UnmarshalText(b []byte) error { return txnVersions.UnmarshalText(v, b) }

// markerEpoch is the epoch check of a COMMIT or ABORT marker of epoch from
// origin, stating version tv, for a producer whose pending entry is at
// epoch cur with open transaction txnFirst (-1: none):
// ProducerAppendInfo#appendEndTxnMarker's version check, then
// #checkProducerEpoch. A REPLICATION marker is never refused (a lower epoch
// is only logged).
func (o *Options) markerEpoch(origin Origin, tv TxnVersion, epoch, cur int16, txnFirst int64) error {
	if origin == Replication {
		return nil
	}
	if !o.Release.markerTxnVersion() || tv < TV2 {
		if tv == TVUnknown && o.Release.markerTxnVersion() {
			return ErrMarkerWithoutTxnVersion
		}
		if epoch < cur {
			return kafkaerr.InvalidProducerEpoch
		}
		return nil
	}
	if epoch > cur || (epoch == cur && txnFirst < 0) {
		return nil
	}
	return kafkaerr.InvalidProducerEpoch
}

func (o Options) withDefaults() Options {
	if o.ExpirationMs < 1 {
		o.ExpirationMs = DefaultExpirationMs
	}
	if o.MaxTransactionTimeoutMs < 1 {
		o.MaxTransactionTimeoutMs = DefaultMaxTransactionTimeoutMs
	}
	return o
}

// late is the test of ProducerStateManager#hasLateTransaction on the last
// timestamp of the oldest open transaction's producer (-1: none).
func (o Options) late(lastTS, nowMs int64) bool {
	return lastTS > 0 && nowMs-lastTS > o.MaxTransactionTimeoutMs+LateTransactionBufferMs
}

// windowCRC is what the duplicate window keeps of b's CRC: b's, when known
// and under DedupCRC; none (0, false) otherwise.
func (o *Options) windowCRC(b *Batch) (uint32, bool) {
	if o.DedupCRC && b.HasCRC {
		return b.CRC, true
	}
	return 0, false
}

func (o Options) tracks(pid int64) bool {
	if o.HasProducerID == NonNegativeOne {
		return pid != codec.NoProducerID
	}
	return pid > codec.NoProducerID
}

// Batch is what producer state reads from one batch: the v2 header and, for a
// control batch, its first record. BatchOf fills it from a codec.Batch.
type Batch struct {
	ProducerID       int64
	ProducerEpoch    int16
	BaseSequence     int32
	LastOffsetDelta  int32
	BaseOffset       int64 // the offset assigned to the batch
	MaxTimestamp     int64
	RecordsCount     int32
	Transactional    bool
	Control          bool
	ControlType      codec.ControlType // when Control && RecordsCount > 0
	CoordinatorEpoch int32             // COMMIT and ABORT markers
	ControlTimestamp int64             // timestamp of the first control record
	// CRC is the batch's CRC-32C as its producer sent it (it excludes
	// baseOffset and partitionLeaderEpoch); HasCRC is false when it is not
	// known (a broker-stamped LogAppendTime batch). Read only under
	// Options.DedupCRC.
	CRC    uint32
	HasCRC bool
	// TxnVersion is the transaction version the marker's WriteTxnMarkers
	// request states (COMMIT and ABORT markers from COORDINATOR); it is not
	// in the batch's bytes, so BatchOf leaves it TV0 and the caller sets it.
	TxnVersion TxnVersion
}

// LastSequence is -1 when BaseSequence is -1, else BaseSequence advanced by
// LastOffsetDelta with wrap-around (DefaultRecordBatch.lastSequence).
func (b *Batch) LastSequence() int32 {
	if b.BaseSequence == codec.NoSequence {
		return codec.NoSequence
	}
	return codec.IncrementSequence(b.BaseSequence, b.LastOffsetDelta)
}

// LastOffset is BaseOffset + LastOffsetDelta.
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// isBarrier reports a MIRROR_PID_RESET control batch, whatever its PID.
func (b *Batch) isBarrier() bool {
	return b.Control && b.RecordsCount > 0 && b.ControlType == codec.ControlMirrorPidReset
}

// BatchMetadata is one cached batch of a producer (BatchMetadata.java).
type BatchMetadata struct {
	LastOffset  int64
	Timestamp   int64
	LastSeq     int32
	OffsetDelta int32
	// CRC and HasCRC: the batch's CRC as sent, under Options.DedupCRC only
	// (zero otherwise, and after a snapshot reload, which does not keep it).
	CRC    uint32
	HasCRC bool
}

// crcMismatch reports a CLIENT batch that repeats m's sequences but is not
// the same batch: both CRCs known and different.
func (m *BatchMetadata) crcMismatch(b *Batch) bool { return m.HasCRC && b.HasCRC && m.CRC != b.CRC }

// FirstSeq is LastSeq moved back by OffsetDelta with wrap-around.
func (m BatchMetadata) FirstSeq() int32 { return codec.DecrementSequence(m.LastSeq, m.OffsetDelta) }

// FirstOffset is LastOffset - OffsetDelta.
func (m BatchMetadata) FirstOffset() int64 { return m.LastOffset - int64(m.OffsetDelta) }

// ProducerInfo is a copy of one producer entry (ProducerStateEntry.java).
// Batches[:NumBatches] is the window of cached batches, oldest first.
type ProducerInfo struct {
	ProducerID       int64
	Epoch            int16 // -1 for an entry that never saw a batch
	CoordinatorEpoch int32 // -1 fresh
	LastTimestamp    int64 // -1 fresh
	TxnFirstOffset   int64 // first offset of the open transaction, -1 none
	NumBatches       int
	Batches          [NumBatchesToRetain]BatchMetadata
}

// LastSeq is the last sequence of the newest cached batch, or -1.
func (e ProducerInfo) LastSeq() int32 {
	if e.NumBatches == 0 {
		return codec.NoSequence
	}
	return e.Batches[e.NumBatches-1].LastSeq
}

// Window returns the cached batches, oldest first. It aliases e.
func (e *ProducerInfo) Window() []BatchMetadata { return e.Batches[:e.NumBatches] }

// Duplicate answers a CLIENT batch that exactly repeats one of the producer's
// last five batches (same epoch, same first and last sequence): the caller
// writes nothing and acknowledges with the original offsets
// (ProducerStateEntry#findDuplicateBatch).
type Duplicate struct {
	Found       bool
	FirstOffset int64
	LastOffset  int64
	Timestamp   int64
}

// CompletedTxn is a transaction closed by a COMMIT or ABORT marker
// (CompletedTxn.java). LastOffset is the marker's offset.
type CompletedTxn struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
	Aborted     bool
}

// TxnInfo is an open or completed-but-unreplicated transaction
// (TxnMetadata.java). LastOffset is -1 while the transaction is open.
type TxnInfo struct {
	ProducerID  int64
	FirstOffset int64
	LastOffset  int64
}

// Outcome is what Add reports about one accepted batch. Add returns it by
// pointer, owned by the Appender and valid until the next call on it; it is
// read-only (a plain acceptance may share one zero Outcome).
type Outcome struct {
	// Duplicate is set for a CLIENT exact duplicate; the batch was not applied.
	Duplicate Duplicate
	// Completed is valid when TxnCompleted: the batch was a COMMIT or ABORT
	// marker that closed an open transaction.
	Completed    CompletedTxn
	TxnCompleted bool
	// Barrier is set when the batch was a MIRROR_PID_RESET control batch.
	Barrier bool
}

// Committed is what Commit applied. Commit returns it by pointer, owned by
// the Appender like its slices (which alias the Store's or Model's scratch): all stay
// valid until the next Begin on the same partition. It is read-only.
type Committed struct {
	// Completed lists the transactions closed by this append, in batch order.
	Completed []CompletedTxn
	// Aborted lists the .txnindex entries to write, in batch order, each with
	// the LSO at its completion (ProducerStateManager#lastStableOffset).
	Aborted []storage.AbortedTxn
	// Barriers counts the MIRROR_PID_RESET batches applied.
	Barriers int
	// KeptOpenTxns is the number of open transactions a barrier of this append
	// left in place (the last barrier's count): non-zero means the LSO stays
	// pinned, failure mode M6.
	KeptOpenTxns int
}

// Guard is a transaction-verification guard (VerificationGuard.java). The zero
// value is the sentinel, which never verifies.
type Guard uint64

// Appender is one append to one partition: batches are validated in order
// against the committed state plus the earlier batches of the same append;
// nothing is visible until Commit. An Appender is owned by its Store or Model and
// reused by the next Begin on the same partition; it must not be used after
// Commit or Abort.
type Appender interface {
	// SetGuard sets the request's verification guard (see Options.VerifyTransactions).
	SetGuard(g Guard)
	// Add validates one batch. On error (a *kafkaerr.Error sentinel) the batch is
	// not applied and the append is unchanged, so the caller may Abort or go
	// on; the Outcome is then nil. Otherwise it is never nil. Add reads *b
	// during the call only and never keeps it; but through this interface
	// the compiler cannot know that, so a pointer to a local variable makes
	// it escape (one allocation): an allocation-free caller reuses one Batch
	// it owns (a field of its own struct). Arguments and results are
	// pointers, not values, because 64- to 80-byte structs copied through an
	// interface call cost more than the Store's whole update (results/psm.md).
	Add(b *Batch) (*Outcome, error)
	// Pending returns pid's pending entry before Commit: ProducerAppendInfo
	// #toEntry, the committed entry's scalars as the accepted batches of
	// this append left them, with only this append's batches cached. ok is
	// false when no accepted batch of this append is pid's. For inspection
	// (Kafka's ProducerStateManagerTest reads it); not on the hot path.
	Pending(pid int64) (ProducerInfo, bool)
	// Commit applies every accepted batch (after the log write succeeded).
	Commit() *Committed
	// Abort discards the append.
	Abort()
}

// manager is the producer-state manager of many partitions. Store (fast) and
// Model (reference) implement it with the same behaviour; the tests run both
// through it. Methods that name a partition must not run concurrently with
// other calls on the same partition; Store allows different partitions in
// parallel.
type manager interface {
	// Begin starts an append to p, discarding an unfinished one.
	Begin(p PartitionID, origin Origin) Appender
	// Update is an append of b alone, in one call: Begin, Add, then Commit
	// if Add accepted b and found no duplicate, else Abort. It returns Add's
	// answers, and Commit's (nil on an error or a duplicate). For a caller
	// whose log already holds b (recovery rebuilding producer state) or that
	// applies producer state before its write; the Outcome and Committed
	// stay valid until the next call on p. On the Store, a plain batch of a
	// known producer costs one lookup and one write (results/psm.md).
	Update(p PartitionID, origin Origin, b *Batch) (*Outcome, *Committed, error)
	// Reset applies a barrier to p outside an append: every producer entry
	// is removed, and under BarrierApply Exact every verification entry;
	// open transactions are kept. It returns the number of open
	// transactions kept.
	Reset(p PartitionID) (keptOpenTxns int)
	// Clear forgets p's producers and transactions (the reset of
	// ProducerStateManager#truncateAndReload, before a rebuild); p's
	// verification entries stay, as Kafka keeps them across a truncation.
	Clear(p PartitionID)
	// StartVerification is UnifiedLog#maybeStartTransactionVerification:
	// under Kafka 4.1 and later kafkaerr.InvalidProducerEpoch (and nothing
	// changed) when epoch is below the producer's (KAFKA-18042); else the
	// sentinel when the producer has an open transaction at this epoch,
	// else the guard of its (new or updated) verification entry. tv is the
	// produce request's transaction version: a new entry created by a TV2
	// request supports the epoch bump (VerificationStateEntry
	// #supportsEpochBump), and from Kafka 4.1 the producer's CLIENT batches
	// must then start at sequence 0 while its committed entry caches no
	// batch (ProducerAppendInfo#checkSequence).
	StartVerification(p PartitionID, pid int64, seq int32, epoch int16, tv TxnVersion, nowMs int64) (Guard, error)
	// Producer returns a copy of pid's entry.
	Producer(p PartitionID, pid int64) (ProducerInfo, bool)
	// Producers iterates p's entries in no particular order.
	Producers(p PartitionID) iter.Seq[ProducerInfo]
	// ProducerCount is the number of entries of p.
	ProducerCount(p PartitionID) int
	// OpenTxns appends p's open transactions, by first offset, to dst.
	OpenTxns(dst []TxnInfo, p PartitionID) []TxnInfo
	// UnreplicatedTxns appends p's completed transactions whose marker is not
	// yet below the high watermark, by first offset, to dst.
	UnreplicatedTxns(dst []TxnInfo, p PartitionID) []TxnInfo
	// FirstUnstableOffset is the first offset of the earliest open or
	// unreplicated transaction; ok is false when there is none.
	FirstUnstableOffset(p PartitionID) (offset int64, ok bool)
	// LastStableOffset is FirstUnstableOffset when below hw, else hw. The
	// caller clamps it to its log start offset.
	LastStableOffset(p PartitionID, hw int64) int64
	// OnHighWatermark drops unreplicated transactions whose marker is below hw.
	OnHighWatermark(p PartitionID, hw int64)
	// ExpireProducers removes entries with no open transaction whose last
	// timestamp is at least ExpirationMs before nowMs, and verification
	// entries as old. It returns the number of producers removed.
	ExpireProducers(p PartitionID, nowMs int64) int
	// HasLateTransaction is ProducerStateManager#hasLateTransaction (the
	// broker's hanging-transaction metric): the producer of p's oldest open
	// transaction (by first offset) has a last timestamp above 0 and more
	// than MaxTransactionTimeoutMs + LateTransactionBufferMs before nowMs.
	HasLateTransaction(p PartitionID, nowMs int64) bool
	// AppendSnapshot appends p's snapshot file (ProducerStateManager#writeSnapshot),
	// entries sorted by PID.
	AppendSnapshot(dst []byte, p PartitionID) []byte
	// LoadSnapshot replaces p's producers and transactions (Clear) with
	// the snapshot in src, dropping entries expired at nowMs. A corrupt src is an error matching
	// ErrCorruptSnapshot and leaves p unchanged.
	LoadSnapshot(p PartitionID, src []byte, nowMs int64) error
}
