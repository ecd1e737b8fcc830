package appendpath

import (
	"errors"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

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
		rewrites: cfg.Strategy.Rewrites(), assign: cfg.MirrorOffsets == AssignOffsets,
		mirrored: MirrorCheckpoint{Epoch: codec.NoPartitionLeaderEpoch}} // nothing mirrored yet
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
		if !b.IsControl() || !p.skipsControl(b) { // else stored, not applied: Hazards.BarrierUnaware
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
	// The replay completed every transaction whose marker it met; those
	// above the high watermark stay unreplicated (they pin the LSO) until it
	// passes them, as UnifiedLog#updateHighWatermarkMetadata calls
	// ProducerStateManager#onHighWatermarkUpdated with the high watermark
	// after a reload. A recovering Open starts with the high watermark at
	// the log end; a replicated partition (Config.ManualHighWatermark)
	// otherwise keeps its own, clamped to the log end as truncateTo does.
	hw := p.log.End()
	if p.cfg.ManualHighWatermark && !p.recovering {
		hw = min(p.hw, hw)
	}
	p.psm.OnHighWatermark(p.id, hw)
	return p.takeSnapshot(p.log.End())
}
