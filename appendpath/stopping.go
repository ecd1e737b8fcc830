package appendpath

import (
	"errors"
	"fmt"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/enum"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
)

// The STOPPING behaviours of the KIP-1279 prototype, each selectable
// (StopHazards). The zero values are the design's STOPPING
// (docs/strategies.md).

// UnknownSource is what STOPPING does, under strategy barrier, when the
// partition knows no source cluster id (no mirrored append since it opened)
// and the barrier would carry one.
type UnknownSource uint8

const (
	// SourceWrite (design): write the barrier anyway; the reset does not
	// depend on the id.
	SourceWrite UnknownSource = iota
	// SourceSkip (the prototype's later line, hazard R1): skip the barrier
	// and become STOPPED.
	SourceSkip
	// SourceRetry (the prototype's July line): the barrier step fails with
	// ErrUnknownSource and the partition stays STOPPING; every retry fails
	// the same way, so it is never writable.
	SourceRetry
	// SourceFail: the barrier step fails with ErrUnknownSource and the
	// partition moves to FAILED, which the next Stop retries; never
	// writable without a barrier.
	SourceFail
)

// unknownSources spells the policies as scenario's unknown-source option
// does.
var unknownSources = enum.Table[UnknownSource]{Kind: "unknown-source policy",
	Names: []string{"write", "skip", "retry", "fail"}, Err: ErrUnknownName}

// String returns the policy's name: write, skip, retry or fail.
func (u UnknownSource) String() string { return unknownSources.String(u) }

// MarshalText implements encoding.TextMarshaler.
func (u UnknownSource) MarshalText() ([]byte, error) { return unknownSources.MarshalText(u) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (u *UnknownSource) UnmarshalText(b []byte) error { return unknownSources.UnmarshalText(u, b) }

// StepErrors is what a failing STOPPING step does to the partition.
type StepErrors uint8

const (
	// StepErrorsRetry (design): the partition stays STOPPING and the next
	// Stop retries every step.
	StepErrorsRetry StepErrors = iota
	// StepErrorsStuck (the prototype's July line): an error of the
	// checkpoint (last mirrored epochs and offsets), leader-epoch bump or
	// abort steps is only logged; the partition stays STOPPING and later
	// Stop calls do nothing (ErrStopStuck) until it reopens (a restart or a
	// leader change). Other steps are retried as under StepErrorsRetry.
	StepErrorsStuck
	// StepErrorsFailed (the prototype's later line): any failing step moves
	// the partition to FAILED, read-only; the next Stop retries (bounded
	// back-off retries).
	StepErrorsFailed
)

// stepErrors spells the policies as scenario's stop-errors option does.
var stepErrors = enum.Table[StepErrors]{Kind: "STOPPING error policy", Names: []string{"retry", "stuck", "failed"},
	Err: ErrUnknownName}

// String returns the policy's name: retry, stuck or failed.
func (s StepErrors) String() string { return stepErrors.String(s) }

// MarshalText implements encoding.TextMarshaler.
func (s StepErrors) MarshalText() ([]byte, error) { return stepErrors.MarshalText(s) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (s *StepErrors) UnmarshalText(b []byte) error { return stepErrors.UnmarshalText(s, b) }

// checkSource is Hazards.FailOnSourceChange: a mirrored append from another
// cluster than the persisted checkpoint's moves the partition to FAILED for
// good. A checkpoint that names no cluster (a partition that stopped before
// any mirrored append since it opened) is no source to change from.
func (p *Partition) checkSource(source [16]byte) error {
	if !p.cfg.Hazards.FailOnSourceChange || !p.mirrored.Valid || p.mirrored.Source == source ||
		p.mirrored.Source == ([16]byte{}) {
		return nil
	}
	p.state, p.terminal = Failed, true
	return fmt.Errorf("%w: %w: checkpoint names %s, the append %s", kafkaerr.MirrorPartitionFailed, ErrSourceMismatch,
		pid.FormatClusterID(p.mirrored.Source), pid.FormatClusterID(source))
}

// stuckStep reports whether a failure of step s leaves the partition stuck
// under StepErrorsStuck: the checkpoint, epoch-bump and abort steps.
func stuckStep(s StopStep) bool {
	switch s {
	case StepAbort, StepEpoch, StepMarker, StepPersist:
		return true
	}
	return false
}

// stopRefused is the error of a Stop the partition cannot start: FAILED
// for good, or stuck after a failed step.
func (p *Partition) stopRefused() error {
	switch {
	case p.terminal:
		return fmt.Errorf("%w: Stop in %s", ErrTerminal, p.state)
	case p.stuck:
		return fmt.Errorf("%w (state %s)", ErrStopStuck, p.state)
	}
	return nil
}

// stopFailed sets the state a failed STOPPING attempt leaves, at step at
// with err: FAILED for a promotion that can never succeed; for an unknown
// source id, STOPPING (retry) or FAILED (fail); STOPPING for an empty
// partition under HangWhenEmpty; otherwise per opt.Hazards.StepErrors.
func (p *Partition) stopFailed(opt StopOptions, at StopStep, err error) {
	switch {
	case errors.Is(err, ErrPromotionImpossible):
		p.state = Failed
	case errors.Is(err, ErrUnknownSource):
		if opt.Hazards.UnknownSource == SourceFail {
			p.state = Failed
		}
	case errors.Is(err, ErrNoLeaderEpoch):
		// The hang: STOPPING whatever the error policy.
	case opt.Hazards.StepErrors == StepErrorsFailed:
		p.state = Failed
	case opt.Hazards.StepErrors == StepErrorsStuck && stuckStep(at):
		p.stuck = true
	}
}

// barrierWanted reports whether this STOPPING attempt writes the barrier,
// or the error of a partition that knows no source cluster id when the
// barrier must carry one.
func (p *Partition) barrierWanted(opt StopOptions) (bool, error) {
	if p.cfg.Strategy != pid.Barrier || p.cfg.Hazards.NoBarrier {
		return false, nil
	}
	if p.hasSource {
		return true, nil
	}
	u := opt.Hazards.UnknownSource
	if opt.Hazards.SkipBarrierWithoutSource {
		u = SourceSkip
	}
	switch u {
	case SourceSkip:
		return false, nil
	case SourceRetry, SourceFail:
		return false, ErrUnknownSource
	}
	return true, nil
}

// appendStopBarrier appends the STOPPING barrier, with the source cluster
// id or (opt.Hazards.BarrierNoSource) without.
func (p *Partition) appendStopBarrier(opt StopOptions, src string) error {
	var b []byte
	if opt.Hazards.BarrierNoSource {
		b = codec.AppendBarrierNoSource(nil, p.leaderEpoch, p.now().UnixMilli())
	} else {
		b = codec.AppendBarrier(nil, p.leaderEpoch, src, p.now().UnixMilli())
	}
	_, err := p.appendLocked(b, kindCoordinator)
	return err
}

// emptyForStop reports whether the log holds no batch, so that STOPPING has
// no leader epoch to record (StopHazards.HangWhenEmpty).
func (p *Partition) emptyForStop() (bool, error) {
	ep, err := p.log.LastEpoch()
	if err != nil {
		return false, err
	}
	return ep < 0 && p.log.End() == p.log.Start(), nil
}

// FailedForGood reports whether the partition is FAILED for good (Fail, an
// inconsistent source cluster id).
func (p *Partition) FailedForGood() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.terminal
}

// Fail moves the partition to FAILED for good: mirrored and client appends
// are refused and Stop returns ErrTerminal (a mirror loop, an inconsistent
// source cluster id). Only a reopen clears it.
func (p *Partition) Fail() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state, p.terminal = Failed, true
}
