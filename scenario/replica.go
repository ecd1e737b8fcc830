package scenario

// This file is the seam between the simulator and the broker. A replica is
// one appendpath.Partition (docs/design.md): the simulator never decides what
// a broker accepts, it only calls these methods and reads the log back.

import "github.com/mirrorpath/mirrorpath/psm"

// Mirror states as the simulator names them (docs/strategies.md).
const (
	stateNone      = ""          // never mirrored: a plain writable partition
	stateMirroring = "MIRRORING" // read-only, fed by a mirror fetcher
	stateStopping  = "STOPPING"  // a STOPPING attempt failed; read-only
	stateStopped   = "STOPPED"   // writable
	stateFailed    = "FAILED"    // an unmappable PID stopped the mirror
)

// appendResult is appendpath.Result.
type appendResult struct {
	FirstOffset, LastOffset int64
	Duplicate               bool
	Batches                 int
}

// producerEntry is what the oracle reads of one producer-state entry.
type producerEntry struct {
	PID              int64
	Epoch            int16
	LastSeq          int32
	TxnFirstOffset   int64   // -1 when no transaction is open
	BatchOffsets     []int64 // last offset of each cached batch, oldest first
	CoordinatorEpoch int32
	LastTimestamp    int64
	Window           []cachedBatch // the duplicate window, oldest first
}

// cachedBatch is one batch of an entry's duplicate window (psm.BatchMetadata).
type cachedBatch struct {
	LastOffset  int64
	Timestamp   int64
	LastSeq     int32
	OffsetDelta int32
}

// openTxn is one open (or completed, not yet below the high watermark)
// transaction of a replica's producer state.
type openTxn struct {
	PID                     int64
	FirstOffset, LastOffset int64
}

// replicaConfig is what the world chooses for one replica.
type replicaConfig struct {
	Strategy    string
	Options     Options
	ClusterID   [16]byte
	Topic       string
	Partition   int32
	LeaderEpoch int32
	// BarrierUnaware: a broker that predates control type 7 (hazard R8);
	// NoBarrier: the cluster's feature level does not enable the barrier.
	BarrierUnaware, NoBarrier bool
	// SegmentBytes (0: the default) and RetainSegments (0: keep all):
	// appendpath.Config's.
	SegmentBytes, RetainSegments int
	// registries: one salt registry per destination cluster of the run,
	// shared by the cluster's replicas (wire.go).
	registries registries
}

// stopRequest is one STOPPING attempt (docs/strategies.md): Variant is abort
// or truncate; FailAt names the step that fails ("" none), one of stopSteps.
type stopRequest struct {
	Variant string
	FailAt  string
	// The prototype's hazards (options hazard-r2; unknown-source=skip is
	// SkipBarrierWithoutSource).
	SkipBarrierWithoutSource, IgnoreMarkerFailure bool
	// The prototype's STOPPING behaviours: options unknown-source,
	// stop-errors (appendpath names), barrier-source=off, empty-stop=hang.
	UnknownSource, StepErrors      string
	BarrierNoSource, HangWhenEmpty bool
	// AbortMarker is how the ABORT markers are written (option
	// stop-abort-marker), TxnVersion the transactions' version they state
	// (option txn-version).
	AbortMarker string
	TxnVersion  psm.TxnVersion
	// Promote runs last, before the partition becomes writable (strategy
	// allocator's PID allocator advance); errAllocatorExhausted is terminal.
	Promote func() error
}

// replica is the narrow view of appendpath.Partition the simulator uses.
type replica interface {
	AppendClient(batch []byte) (appendResult, error)
	// AppendCoordinator appends a COMMIT or ABORT marker whose
	// WriteTxnMarkers request states transaction version tv.
	AppendCoordinator(batch []byte, tv psm.TxnVersion) (appendResult, error)
	// AppendMirrored appends mirrored batches at their source offsets, or
	// with fanIn at this log's next offsets (a fan-in of several sources).
	AppendMirrored(batches []byte, source [16]byte, fanIn bool) (appendResult, error)
	AppendReplica(batches []byte) (appendResult, error)
	// Read returns whole batches from offset, at most maxBytes unless the
	// first batch alone is larger.
	Read(offset int64, maxBytes int) ([]byte, error)
	LogEndOffset() int64
	// LogStartOffset is the first offset retention left (retain-segments).
	LogStartOffset() int64
	HighWatermark() int64
	LastStableOffset() int64
	SetHighWatermark(hw int64)
	State() string
	StartMirroring() error
	Stop(req stopRequest) error
	Truncate(offset int64) error
	// Fail moves the replica to FAILED for good (a mirror loop), across
	// reopens; FailedForGood reports it.
	Fail()
	FailedForGood() bool
	// BecomeLeader makes the replica the leader at epoch, in the mirror
	// state the controller holds for the partition; it keeps the producer
	// state it holds in memory (Partition#makeLeader reloads nothing).
	BecomeLeader(epoch int32, state string) error
	// Restart is a clean restart: close (sync, snapshot at the log end) and
	// reopen, so recovery loads that snapshot and replays nothing.
	Restart() error
	// Crash is an unclean restart: the unsynced tail of the log (but for a
	// torn part of it) and the newest snapshot are lost, and recovery
	// replays from an older snapshot or the log start.
	Crash() error
	Producers() []producerEntry
	// OpenTxns lists the open transactions by first offset.
	OpenTxns() []openTxn
	// AbortedTxns lists the transaction-index entries overlapping
	// [from, to): what a read_committed fetch gets with its data.
	AbortedTxns(from, to int64) []abortedTxn
}

// abortedTxn is one .txnindex entry.
type abortedTxn struct {
	PID                     int64
	FirstOffset, LastOffset int64
}

// openReplica opens one replica; wire.go binds it to appendpath.
var openReplica func(cfg replicaConfig) (replica, error)
