package scenario

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// This file binds the replica interface to appendpath.Partition, the
// project's real log, producer state and PID strategies.

func init() { openReplica = openAppendpath }

// epochMillis is the broker clock of every simulated replica: fixed, so that
// barrier and STOPPING marker timestamps, and therefore output, are
// deterministic. Coordinator markers use the world's own counter, far above.
const epochMillis = 0

// topicID derives a stable topic id for salt records.
func topicID(name string) [16]byte {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("mirrorpath/topic/"+name))
}

// partitionSeed makes each mapper's salt source deterministic.
func partitionSeed(cluster [16]byte, topic string, part int32) (uint64, uint64) {
	t := topicID(topic)
	return binary.BigEndian.Uint64(cluster[:8]) ^ binary.BigEndian.Uint64(t[:8]),
		binary.BigEndian.Uint64(cluster[8:]) ^ binary.BigEndian.Uint64(t[8:]) ^ uint64(part)
}

// registries holds one salt registry per destination cluster of a run (salt
// records survive leader changes because every replica of a cluster reads
// the same registry, the stand-in for its mirror-state log).
type registries map[[16]byte]*pid.Registry

func openAppendpath(cfg replicaConfig) (replica, error) {
	st, err := pid.ParseStrategy(cfg.Strategy)
	if err != nil {
		return nil, err
	}
	fix, err := pid.ParseCRCFix(cfg.Options.Get("crc-fix"))
	if err != nil {
		return nil, err
	}
	pol, err := pid.ParsePolicy(cfg.Options.Get("pid-policy"))
	if err != nil {
		return nil, err
	}
	fold, err := pid.ParseFold(cfg.Options.Get("fold"))
	if err != nil {
		return nil, err
	}
	var reg *pid.Registry
	if cfg.Options.Get("salt-records") == "on" {
		if cfg.registries == nil {
			return nil, errors.New("scenario: no registry set")
		}
		reg = cfg.registries[cfg.ClusterID]
		if reg == nil {
			reg = pid.NewRegistry(nil, func() int64 { return epochMillis })
			cfg.registries[cfg.ClusterID] = reg
		}
	}
	s1, s2 := partitionSeed(cfg.ClusterID, cfg.Topic, cfg.Partition)
	newMapper := func() *pid.Mapper {
		return pid.NewMapper(pid.Config{Strategy: st, Policy: pol, Fold: fold, Rand: rand.NewPCG(s1, s2),
			Registry: reg, TopicID: topicID(cfg.Topic), Partition: cfg.Partition})
	}
	var po psm.Options
	if err := po.HasProducerID.UnmarshalText([]byte(cfg.Options.Get("has-producer-id"))); err != nil {
		return nil, err
	}
	if err := po.BarrierApply.UnmarshalText([]byte(cfg.Options.Get("barrier-apply"))); err != nil {
		return nil, err
	}
	po.DedupCRC = cfg.Options.Get("dedup-check") == "crc"
	po.Release = release(cfg.Options)
	a := &apReplica{newMapper: newMapper, seed1: s1, seed2: s2, cfg: appendpath.Config{
		Dir:                 "log",
		FS:                  vfs.NewMemFS(),
		LeaderEpoch:         cfg.LeaderEpoch,
		ManualHighWatermark: true,
		Strategy:            st,
		CRCFix:              fix,
		Policy:              pol,
		Fold:                fold,
		MirrorOffsets:       appendpath.PreserveOffsets,
		PSMOptions:          po,
		SegmentBytes:        int64(cfg.SegmentBytes),
		RetainSegments:      cfg.RetainSegments,
		Now:                 func() time.Time { return time.UnixMilli(epochMillis) },
		Hazards: appendpath.Hazards{
			BarrierUnaware: cfg.BarrierUnaware,
			NoBarrier:      cfg.NoBarrier,
			// recovery-barrier=ignore: the prototype's segment recovery.
			RecoveryIgnoresBarrier: cfg.Options.Get("recovery-barrier") == "ignore",
			FailOnSourceChange:     cfg.Options.Get("source-change") == "fail",
		},
	}}
	if err := a.open(appendpath.Stopped, cfg.LeaderEpoch); err != nil {
		return nil, err
	}
	return a, nil
}

// apReplica adapts *appendpath.Partition to replica. Each replica keeps its
// log in files of its own in-memory file system, so that a restart or a
// crash can reopen it: the reopened partition recovers producer state from
// its snapshot and log, and starts with an empty origins table. A
// leadership change reopens nothing (BecomeLeader).
type apReplica struct {
	p            *appendpath.Partition
	cfg          appendpath.Config
	newMapper    func() *pid.Mapper
	seed1, seed2 uint64 // the crash source's seed
	crashes      uint64
	terminal     bool // Fail: FAILED for good across reopens
}

// open (re)opens the partition from its files in mirror state st.
func (a *apReplica) open(st appendpath.MirrorState, epoch int32) error {
	if a.p != nil {
		if err := a.p.Close(); err != nil {
			return err
		}
	}
	cfg := a.cfg
	cfg.State, cfg.LeaderEpoch, cfg.Mapper = st, epoch, a.newMapper()
	p, err := appendpath.Open(cfg)
	if err != nil {
		return err
	}
	a.p = p
	if a.terminal {
		p.Fail()
	}
	return nil
}

func result(r appendpath.Result) appendResult {
	return appendResult{FirstOffset: r.FirstOffset, LastOffset: r.LastOffset, Duplicate: r.Duplicate, Batches: r.Batches}
}

func (a *apReplica) AppendClient(b []byte) (appendResult, error) {
	r, err := a.p.AppendClient(b)
	return result(r), err
}

func (a *apReplica) AppendCoordinator(b []byte, tv psm.TxnVersion) (appendResult, error) {
	r, err := a.p.AppendTxnMarker(b, tv)
	return result(r), err
}

func (a *apReplica) AppendMirrored(b []byte, source [16]byte, fanIn bool) (appendResult, error) {
	mode := appendpath.PreserveOffsets
	if fanIn {
		mode = appendpath.AssignOffsets
	}
	a.p.SetMirrorOffsets(mode)
	r, err := a.p.AppendMirrored(b, source)
	return result(r), err
}

func (a *apReplica) AppendReplica(b []byte) (appendResult, error) {
	r, err := a.p.AppendReplica(b)
	return result(r), err
}

func (a *apReplica) Read(offset int64, maxBytes int) ([]byte, error) {
	return a.p.Read(offset, maxBytes)
}
func (a *apReplica) LogEndOffset() int64         { return a.p.LogEndOffset() }
func (a *apReplica) LogStartOffset() int64       { return a.p.LogStartOffset() }
func (a *apReplica) HighWatermark() int64        { return a.p.HighWatermark() }
func (a *apReplica) LastStableOffset() int64     { return a.p.LastStableOffset() }
func (a *apReplica) SetHighWatermark(hw int64)   { a.p.SetHighWatermark(hw) }
func (a *apReplica) StartMirroring() error       { return a.p.StartMirroring() }
func (a *apReplica) Truncate(offset int64) error { return a.p.Truncate(offset) }

// Fail moves the partition to FAILED for good; the replica reapplies it
// whenever it reopens (a restart, a crash, an election).
func (a *apReplica) Fail() { a.terminal = true; a.p.Fail() }

func (a *apReplica) FailedForGood() bool { return a.terminal || a.p.FailedForGood() }

func (a *apReplica) State() string {
	switch a.p.State() {
	case appendpath.Mirroring:
		return stateMirroring
	case appendpath.Stopping:
		return stateStopping
	case appendpath.Failed:
		return stateFailed
	}
	return stateStopped
}

func (a *apReplica) Stop(req stopRequest) error {
	var opt appendpath.StopOptions
	if err := opt.Variant.UnmarshalText([]byte(req.Variant)); err != nil {
		return err
	}
	opt.TxnVersion = req.TxnVersion
	opt.Hazards = appendpath.StopHazards{SkipBarrierWithoutSource: req.SkipBarrierWithoutSource,
		IgnoreMarkerFailure: req.IgnoreMarkerFailure, BarrierNoSource: req.BarrierNoSource,
		HangWhenEmpty: req.HangWhenEmpty}
	if err := opt.Hazards.AbortMarker.UnmarshalText([]byte(req.AbortMarker)); err != nil {
		return err
	}
	if req.UnknownSource != "" {
		if err := opt.Hazards.UnknownSource.UnmarshalText([]byte(req.UnknownSource)); err != nil {
			return err
		}
	}
	if req.StepErrors != "" {
		if err := opt.Hazards.StepErrors.UnmarshalText([]byte(req.StepErrors)); err != nil {
			return err
		}
	}
	if req.Promote != nil {
		opt.Promote = func() error {
			err := req.Promote()
			if errors.Is(err, errAllocatorExhausted) {
				return errors.Join(appendpath.ErrPromotionImpossible, err)
			}
			return err
		}
	}
	if req.FailAt != "" {
		var at appendpath.StopStep
		if err := at.UnmarshalText([]byte(req.FailAt)); err != nil {
			return err
		}
		opt.Hazards.Fault = func(s appendpath.StopStep) error {
			if s == at {
				return errInjected
			}
			return nil
		}
	}
	return a.p.Stop(opt)
}

var errInjected = errors.New("scenario: fault injected by the scenario")

// BecomeLeader makes the replica the leader at the new leader epoch, in the
// mirror state the controller holds for the partition, without reopening
// it (appendpath.Partition.BecomeLeader, Kafka's Partition#makeLeader): its
// producer state is the one it built as a follower.
func (a *apReplica) BecomeLeader(epoch int32, state string) error {
	st := appendpath.Stopped
	switch state {
	case stateMirroring, stateStopping:
		st = appendpath.Mirroring // STOPPING is retried by the next stop
	case stateFailed:
		st = appendpath.Failed
	}
	if err := a.p.BecomeLeader(epoch, st); err != nil {
		return err
	}
	if a.terminal {
		a.p.Fail()
	}
	return nil
}

// Restart reopens the replica from its files (the recovery path): producer
// state from the newest snapshot plus a replay, an empty origins table.
func (a *apReplica) Restart() error { return a.open(a.p.State(), a.p.LeaderEpoch()) }

// Crash is an unclean restart: the replica's files become what a power cut
// leaves (vfs.MemFS.Crash: each file keeps its synced prefix and a
// pseudo-random part of its unsynced rest, a torn write, drawn from a
// source seeded by the partition and the number of crashes, so runs are
// deterministic), its newest snapshot is lost too, and it reopens without a
// clean close, so recovery rebuilds producer state from an older snapshot
// or the log start through whatever barriers the log holds. The simulated
// brokers sync the log at a clean close, a roll and after a rebuild, never
// on an interval (their clock stands still).
func (a *apReplica) Crash() error {
	mem, ok := a.cfg.FS.(*vfs.MemFS)
	if !ok {
		return errors.New("scenario: crash needs an in-memory file system")
	}
	st, epoch := a.p.State(), a.p.LeaderEpoch()
	a.crashes++
	fs := mem.Crash(rand.New(rand.NewPCG(a.seed1^a.crashes, a.seed2)), nil)
	names, err := fs.ReadDir(a.cfg.Dir)
	if err != nil {
		return err
	}
	newest := ""
	for _, n := range names {
		// <20-digit offset>.snapshot: the newest sorts last.
		if strings.HasSuffix(n, ".snapshot") && n > newest {
			newest = n
		}
	}
	if newest != "" {
		if err := fs.Remove(filepath.Join(a.cfg.Dir, newest)); err != nil {
			return err
		}
	}
	a.cfg.FS, a.p = fs, nil // the old partition is abandoned, not closed
	return a.open(st, epoch)
}

func (a *apReplica) Producers() []producerEntry {
	es := a.p.Producers()
	out := make([]producerEntry, 0, len(es))
	for i := range es {
		e := &es[i]
		pe := producerEntry{PID: e.ProducerID, Epoch: e.Epoch, LastSeq: e.LastSeq(), TxnFirstOffset: e.TxnFirstOffset,
			CoordinatorEpoch: e.CoordinatorEpoch, LastTimestamp: e.LastTimestamp}
		for _, b := range e.Window() {
			pe.BatchOffsets = append(pe.BatchOffsets, b.LastOffset)
			pe.Window = append(pe.Window, cachedBatch{LastOffset: b.LastOffset, Timestamp: b.Timestamp,
				LastSeq: b.LastSeq, OffsetDelta: b.OffsetDelta})
		}
		out = append(out, pe)
	}
	return out
}

func (a *apReplica) OpenTxns() []openTxn {
	var out []openTxn
	for _, t := range a.p.OpenTxns(nil) {
		out = append(out, openTxn{PID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset})
	}
	return out
}

func (a *apReplica) AbortedTxns(from, to int64) []abortedTxn {
	var out []abortedTxn
	for _, t := range a.p.AbortedTxns(nil, from, to) {
		out = append(out, abortedTxn{PID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset})
	}
	return out
}

// errorName is the Kafka name of an append error (a *kafkaerr.Error), else
// the error text.
func errorName(err error) string {
	var ke *kafkaerr.Error
	if errors.As(err, &ke) {
		return ke.Name
	}
	return err.Error()
}
