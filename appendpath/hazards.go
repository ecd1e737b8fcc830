package appendpath

// Hazards reproduce, on one partition, documented hazards of the KIP-1279
// prototype and of brokers that predate the barrier, and let the simulator
// inject STOPPING faults. They are not product settings: a broker configures
// a partition with the rest of Config, and the zero value (every hazard off)
// is the design's behaviour (docs/strategies.md, "The prototype's STOPPING,
// switch by switch").
type Hazards struct {
	// Fault, when set, is asked before each STOPPING step; an error fails
	// the step (the scenario language's `fault DEST at=...`).
	// StopHazards.Fault overrides it for one attempt.
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
}

// StopHazards reproduce, in one STOPPING attempt, the KIP-1279 prototype's
// STOPPING behaviours (stopping.go) and let the simulator inject faults.
// They are not product settings: the zero value is the design's STOPPING
// (docs/strategies.md), and a product caller sets only the rest of
// StopOptions.
type StopHazards struct {
	// Fault overrides Hazards.Fault for this attempt.
	Fault func(step StopStep) error
	// SkipBarrierWithoutSource (R1) skips the barrier when the partition
	// knows no source cluster id (no mirrored batch since it opened) and
	// becomes STOPPED anyway; it is UnknownSource SourceSkip.
	SkipBarrierWithoutSource bool
	// IgnoreMarkerFailure (R2) goes on when an ABORT marker cannot be
	// appended, leaving its transaction open.
	IgnoreMarkerFailure bool
	// AbortMarker is how the abort variant writes each ABORT marker
	// (AbortVersioned, the zero value, is the design's).
	AbortMarker AbortMarker
	// UnknownSource: what a partition that knows no source cluster id does
	// at the barrier.
	UnknownSource UnknownSource
	// StepErrors: what a failing step leaves.
	StepErrors StepErrors
	// BarrierNoSource writes the barrier without SourceClusterId.
	BarrierNoSource bool
	// HangWhenEmpty: a partition whose log holds no batch (no leader epoch
	// yet) fails every attempt with ErrNoLeaderEpoch and stays STOPPING.
	HangWhenEmpty bool
}
