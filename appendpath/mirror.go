package appendpath

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/enum"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// MirrorState is the mirror state of a partition (docs/strategies.md).
type MirrorState uint8

const (
	// Stopped is writable: a plain partition, or a mirror that has stopped.
	Stopped MirrorState = iota
	// Mirroring is read-only for clients; only mirrored batches are appended.
	Mirroring
	// Stopping: the fetcher is gone and the STOPPING steps have not all
	// succeeded yet; read-only, Stop retries.
	Stopping
	// Failed: a mirrored batch could not be mapped; read-only until Stop.
	Failed
)

var stateNames = [...]string{"STOPPED", "MIRRORING", "STOPPING", "FAILED"}

func (s MirrorState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// StopVariant is how STOPPING closes open transactions.
type StopVariant uint8

const (
	// StopAbort (default): bump the leader epoch and append an ABORT marker
	// for each open transaction with its producer's PID, epoch (as
	// StopHazards.AbortMarker says) and coordinator epoch, COORDINATOR
	// origin.
	StopAbort StopVariant = iota
	// StopTruncate: truncate the log to the last stable offset.
	StopTruncate
)

// stopVariants spells the variants as scenario's stop-variant option does.
var stopVariants = enum.Table[StopVariant]{Kind: "stop variant", Names: []string{"abort", "truncate"},
	Err: ErrUnknownName}

// StopVariants lists every variant.
func StopVariants() []StopVariant { return stopVariants.Values() }

// String returns the variant's name: abort or truncate.
func (v StopVariant) String() string { return stopVariants.String(v) }

// MarshalText implements encoding.TextMarshaler.
func (v StopVariant) MarshalText() ([]byte, error) { return stopVariants.MarshalText(v) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (v *StopVariant) UnmarshalText(b []byte) error { return stopVariants.UnmarshalText(v, b) }

// AbortMarker is how the abort variant of STOPPING writes the ABORT marker
// of each open transaction (docs/strategies.md, "STOPPING and the
// transaction version").
type AbortMarker uint8

const (
	// AbortVersioned (default) writes the marker a coordinator of the
	// transaction's version writes and states that version
	// (StopOptions.TxnVersion): TV0 and TV1 end a transaction at the
	// producer's epoch, TV2 at its epoch + 1 (the bump of every TV2 commit
	// or abort, KIP-890 part 2).
	AbortVersioned AbortMarker = iota
	// AbortCurrentEpoch writes the marker at the producer's epoch and
	// states StopOptions.TxnVersion: right for TV0 and TV1; for a TV2
	// transaction Kafka 4.2 refuses it (the epoch must be above the
	// producer's, ProducerAppendInfo#checkProducerEpoch).
	AbortCurrentEpoch
	// AbortPrototype is the KIP-1279 prototype's ABORT: the producer's
	// epoch and no transaction version stated, which Kafka 4.2 refuses
	// from COORDINATOR whatever the transaction's version (KAFKA-19446,
	// ProducerAppendInfo#appendEndTxnMarker).
	AbortPrototype
)

// abortMarkers spells the markers as scenario's stop-abort-marker option
// does.
var abortMarkers = enum.Table[AbortMarker]{Kind: "abort marker",
	Names: []string{"versioned", "current-epoch", "prototype"}, Err: ErrUnknownName}

// AbortMarkers lists every way of writing the ABORT marker.
func AbortMarkers() []AbortMarker { return abortMarkers.Values() }

// String returns the marker's name: versioned, current-epoch or prototype.
func (m AbortMarker) String() string { return abortMarkers.String(m) }

// MarshalText implements encoding.TextMarshaler.
func (m AbortMarker) MarshalText() ([]byte, error) { return abortMarkers.MarshalText(m) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (m *AbortMarker) UnmarshalText(b []byte) error { return abortMarkers.UnmarshalText(m, b) }

// StopStep names a STOPPING step that can fail (fault hooks), in the order
// STOPPING runs them.
type StopStep uint8

const (
	StepFetcher   StopStep = iota // remove the mirror fetcher (the first step)
	StepAbort                     // close open transactions (either variant)
	StepEpoch                     // bump the leader epoch (abort variant)
	StepMarker                    // append one ABORT marker (abort variant, once per open transaction)
	StepPersist                   // persist the last mirrored offset and epoch
	StepBarrier                   // append the barrier (strategy barrier)
	StepAllocator                 // the promotion check (StopOptions.Promote), the last step
)

// stopSteps spells the steps as scenario's fault at= does.
var stopSteps = enum.Table[StopStep]{Kind: "stop step", Err: ErrUnknownName,
	Names: []string{"fetcher", "abort", "epoch", "marker", "persist", "barrier", "allocator"}}

// StopSteps lists every step in the order STOPPING runs them.
func StopSteps() []StopStep { return stopSteps.Values() }

// String returns the step's name: fetcher, abort, epoch, marker, persist,
// barrier or allocator.
func (s StopStep) String() string { return stopSteps.String(s) }

// MarshalText implements encoding.TextMarshaler.
func (s StopStep) MarshalText() ([]byte, error) { return stopSteps.MarshalText(s) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (s *StopStep) UnmarshalText(b []byte) error { return stopSteps.UnmarshalText(s, b) }

// StopOptions configure one STOPPING attempt.
type StopOptions struct {
	Variant StopVariant
	// TxnVersion is the transaction version of the open transactions (the
	// source cluster's transaction.version), which the abort variant's
	// markers state (StopHazards.AbortMarker says how).
	TxnVersion psm.TxnVersion
	// Promote, when set, runs after every other step and before the
	// partition becomes writable: the strategy allocator's cluster-wide PID
	// allocator advance. An error leaves the partition STOPPING (read-only,
	// retried by the next Stop); an error matching ErrPromotionImpossible
	// moves it to FAILED.
	Promote func() error

	// Hazards reproduce the prototype's STOPPING for the simulator; not
	// product settings (zero: the design's STOPPING).
	Hazards StopHazards
}

// MirrorCheckpoint is what STOPPING persists: where mirroring left off. It
// never points past the log: a truncation (the truncate variant of STOPPING,
// Truncate, Failback) or a recovery that cuts below it moves it to the new
// log end, with the epoch of the last batch left.
type MirrorCheckpoint struct {
	Offset int64    // next offset after the last mirrored batch, at most the log end offset
	Epoch  int32    // partition leader epoch of the last mirrored batch (-1, codec.NoPartitionLeaderEpoch: none mirrored or none left)
	Source [16]byte // cluster last mirrored; zero (Uuid.ZERO_UUID, never a cluster id) when the stop knew none
	Valid  bool
}

// State returns the mirror state.
func (p *Partition) State() MirrorState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Checkpoint returns the last persisted mirror checkpoint.
func (p *Partition) Checkpoint() MirrorCheckpoint {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mirrored
}

// StartMirroring makes a writable partition a mirror (read-only for
// clients). A failback first truncates to the divergence point (Truncate).
func (p *Partition) StartMirroring() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case Mirroring:
		return nil
	case Stopped:
		p.state = Mirroring
		return nil
	}
	return fmt.Errorf("%w: StartMirroring in %s", ErrState, p.state)
}

// BecomeLeader makes the replica its partition's leader at leader epoch
// epoch, in mirror state st (Stopped, Mirroring or Failed: the state the
// controller holds for the partition). Like Kafka's Partition#makeLeader it
// reloads nothing: producer state, with each producer's duplicate window
// of up to five batches, the log, its indexes and the high watermark stay
// what the replica holds in memory. What only a leader has starts empty,
// as on a broker that was a follower: the source cluster of the last
// mirrored append (a leader learns it from its first mirrored append), a
// stuck STOPPING, and the PID mapper's origins table (Mapper.Reset; salts
// are the Registry's). A partition FAILED for good (Fail) stays FAILED.
func (p *Partition) BecomeLeader(epoch int32, st MirrorState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	switch st {
	case Stopped, Mirroring, Failed:
	default:
		return fmt.Errorf("%w: BecomeLeader in %s", ErrState, st)
	}
	p.leaderEpoch, p.maxEpoch = epoch, max(p.maxEpoch, epoch)
	p.source, p.hasSource, p.stuck = [16]byte{}, false, false
	p.mapper.Reset()
	if !p.terminal {
		p.state = st
	}
	return nil
}

// SetMirrorOffsets sets what the next mirrored appends do with the source's
// offsets (Config.MirrorOffsets): a mirror fetcher that fans several
// sources into this partition assigns, an offset-preserving one keeps them.
func (p *Partition) SetMirrorOffsets(m MirrorOffsets) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg.MirrorOffsets, p.assign = m, m == AssignOffsets
}

// Failback truncates the log to the divergence point, rebuilding producer
// state, and starts mirroring the other side's log from there.
func (p *Partition) Failback(divergence int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != Stopped {
		return fmt.Errorf("%w: Failback in %s", ErrState, p.state)
	}
	if err := p.truncateLocked(divergence); err != nil {
		return err
	}
	p.state = Mirroring
	return nil
}

// Stop runs one STOPPING attempt (docs/strategies.md): the fetcher is removed
// (state STOPPING, mirrored appends refused), open transactions are closed
// (opt.Variant), the mirror checkpoint is persisted, the barrier is appended
// under strategy barrier, and the partition becomes STOPPED (writable). A
// failing step returns its error and leaves the partition in STOPPING,
// read-only, never writable without its barrier; calling Stop again retries
// every step. (The prototype's behaviours in StopHazards can leave it
// FAILED, retried the same way, or stuck: stopping.go.) Stop on a STOPPED
// partition is ErrState; on one FAILED for good (Fail) ErrTerminal.
func (p *Partition) Stop(opt StopOptions) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.state {
	case Mirroring, Stopping, Failed:
	default:
		return fmt.Errorf("%w: Stop in %s", ErrState, p.state)
	}
	if p.closed {
		return ErrClosed
	}
	if err := p.stopRefused(); err != nil {
		return err
	}
	p.state = Stopping
	at := StepFetcher
	if err := p.stopAttempt(opt, &at); err != nil {
		p.stopFailed(opt, at, err)
		return err
	}
	p.state = Stopped
	return nil
}

// stopAttempt runs the STOPPING steps in order; *at is the step under way.
func (p *Partition) stopAttempt(opt StopOptions, at *StopStep) error {
	fault := opt.Hazards.Fault
	if fault == nil {
		fault = p.cfg.Hazards.Fault
	}
	step := func(s StopStep) error {
		*at = s
		if fault == nil {
			return nil
		}
		if err := fault(s); err != nil {
			return fmt.Errorf("appendpath: STOPPING step %s: %w", s, errors.Join(ErrFault, err))
		}
		return nil
	}
	if err := step(StepFetcher); err != nil {
		return err
	}
	if opt.Hazards.HangWhenEmpty {
		empty, err := p.emptyForStop()
		if err != nil {
			return err
		}
		if empty {
			return ErrNoLeaderEpoch
		}
	}
	if err := step(StepAbort); err != nil {
		return err
	}
	switch opt.Variant {
	case StopTruncate:
		if err := p.truncateLocked(p.lso()); err != nil {
			return err
		}
	default:
		if err := step(StepEpoch); err != nil {
			return err
		}
		if err := p.abortOpenTxns(step, opt.Hazards.IgnoreMarkerFailure, opt.Hazards.AbortMarker, opt.TxnVersion); err != nil {
			return err
		}
	}
	if err := step(StepPersist); err != nil {
		return err
	}
	if err := p.persistCheckpoint(); err != nil {
		return err
	}
	*at = StepBarrier
	write, err := p.barrierWanted(opt)
	if err != nil {
		return err
	}
	if write {
		if err := step(StepBarrier); err != nil {
			return err
		}
		var src string
		if p.hasSource {
			src = pid.FormatClusterID(p.source)
		}
		if err := p.appendStopBarrier(opt, src); err != nil {
			return err
		}
		// The barrier must outlive a crash before the partition takes
		// local writes: a log that kept the mirrored batches and lost it
		// would let the cluster's own PIDs meet the mirrored ones.
		if err := p.log.Sync(); err != nil {
			return err
		}
	}
	if opt.Promote != nil {
		if err := step(StepAllocator); err != nil {
			return err
		}
		if err := opt.Promote(); err != nil {
			return fmt.Errorf("appendpath: STOPPING promotion: %w", err)
		}
	}
	return nil
}

// abortOpenTxns bumps the leader epoch past every epoch in the log and
// appends an ABORT marker for each open transaction, with its producer's
// coordinator epoch (COORDINATOR origin), its epoch and stated transaction
// version as how says (tv: the transactions' version). A transaction whose
// producer entry is gone (cleared by a barrier) cannot be aborted this way
// and stays open. step is the fault hook of each marker; with ignore (hazard
// R2) a marker that fails, or that producer state refuses, is skipped and
// its transaction stays open.
func (p *Partition) abortOpenTxns(step func(StopStep) error, ignore bool, how AbortMarker, tv psm.TxnVersion) error {
	p.leaderEpoch = max(p.leaderEpoch, p.maxEpoch) + 1
	p.maxEpoch = p.leaderEpoch
	ts := p.now().UnixMilli()
	var buf []byte
	for _, t := range p.psm.OpenTxns(nil, p.id) {
		e, ok := p.psm.Producer(p.id, t.ProducerID)
		if !ok {
			continue
		}
		// A producer that never saw a marker has coordinator epoch -1; a marker
		// carries a real one, so the lowest is 0.
		epoch, stated := e.Epoch, tv
		switch {
		case how == AbortPrototype:
			stated = psm.TVUnknown
		case how == AbortVersioned && tv >= psm.TV2 && epoch < math.MaxInt16:
			// At the highest epoch there is no bump: TV2 would need a new
			// producer ID, so producer state refuses the marker.
			epoch++
		}
		buf = codec.AppendEndTxnMarker(buf[:0], t.ProducerID, epoch, max(e.CoordinatorEpoch, 0), true, ts)
		err := step(StepMarker)
		if err == nil {
			_, err = p.appendMarkerLocked(buf, stated)
		}
		if err != nil && !ignore {
			return err
		}
	}
	return nil
}

const checkpointFile = "mirror.checkpoint"

// persistCheckpoint records the last mirrored offset and epoch (a synced
// file for a file log).
func (p *Partition) persistCheckpoint() error {
	cp := p.mirrored
	cp.Valid = true
	if p.hasSource {
		cp.Source = p.source
	}
	if err := p.writeCheckpoint(cp); err != nil {
		return err
	}
	p.mirrored = cp
	return nil
}

// writeCheckpoint replaces the checkpoint file of a file log with cp, whole
// and durable (vfs.WriteAtomic, as Kafka's CheckpointFile#write): a crash
// leaves the old checkpoint or the new one, never a torn one.
func (p *Partition) writeCheckpoint(cp MirrorCheckpoint) error {
	if p.log.Memory() {
		return nil
	}
	line := fmt.Sprintf("%d %d %s\n", cp.Offset, cp.Epoch, pid.FormatClusterID(cp.Source))
	return vfs.WriteAtomic(p.cfg.FS, filepath.Join(p.cfg.Dir, checkpointFile), []byte(line))
}

// clampCheckpoint keeps the mirror checkpoint inside the log after a
// truncation or a recovery cut its tail: an offset past the log end becomes
// the log end, with the epoch of the last batch left (-1 when none is), so
// that a failback trusting it never starts past the data it has. A persisted
// checkpoint is rewritten. O(1) when the checkpoint is already inside.
func (p *Partition) clampCheckpoint() error {
	if p.mirrored.Offset <= p.log.End() {
		return nil
	}
	ep, err := p.log.LastEpoch()
	if err != nil {
		return err
	}
	p.mirrored.Offset, p.mirrored.Epoch = p.log.End(), ep
	if p.mirrored.Valid {
		return p.writeCheckpoint(p.mirrored)
	}
	return nil
}

// loadCheckpoint reads the checkpoint file of a file log, if any.
func (p *Partition) loadCheckpoint() error {
	data, err := p.cfg.FS.ReadFile(filepath.Join(p.cfg.Dir, checkpointFile))
	if err != nil {
		return nil // none yet
	}
	var cp MirrorCheckpoint
	var src string
	if _, err := fmt.Sscanf(string(data), "%d %d %s", &cp.Offset, &cp.Epoch, &src); err != nil {
		return fmt.Errorf("appendpath: %s: %w", checkpointFile, err)
	}
	if cp.Source, err = pid.ParseClusterID(src); err != nil {
		return fmt.Errorf("appendpath: %s: %w", checkpointFile, err)
	}
	cp.Valid = true
	p.mirrored = cp
	return nil
}
