package appendpath

import (
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
)

// appendChunkLocked is appendLocked for a chunk of several replicated
// batches (AppendMirrored, AppendReplica) that fits the active segment (and
// for an empty chunk, or one whose first batch does not frame). Kafka's
// order holds (UnifiedLog#append: analyzeAndValidateRecords over the whole
// chunk, then analyzeAndValidateProducerState, then the write): a chunk in
// which any batch does not frame or fails its CRC or offset-range check is
// refused with the first such batch, whatever producer state or the offsets
// say of the batches before it; otherwise with the first batch producer
// state, the offset order or the mapping refuses; otherwise it is written
// and producer state committed. Where the strategy maps no PID, those two
// stages share one pass over the chunk: each batch is framed, checked and
// staged, then stamped and run through producer state, and its index entry
// (storage.Log.IndexDue) collected, so that the log's commit walks nothing.
// A refusal by producer state stops the calls to it but not the checks of
// the batches after it, which decide the answer. Where the strategy maps
// PIDs, the mapper records what it maps, so nothing of a chunk is mapped
// before all of it has framed and checked: the checks run first, with the
// copy (stageChecked), and the second pass reads the staged copy.
func (p *Partition) appendChunkLocked(src []byte, k kind) (Result, error) {
	if len(src) == 0 {
		return Result{FirstOffset: -1, LastOffset: -1}, nil // an empty fetch
	}
	dst := p.log.Stage(len(src))
	if k == kindMirror && p.rewrites {
		if err := stageChecked(src, dst, k); err != nil {
			return Result{}, err
		}
		return p.applyChunk(dst, dst, k, true)
	}
	return p.applyChunk(src, dst, k, false)
}

// stageChecked is appendLocked's step 1 for the chunk of a mapping
// strategy: it frames every batch of src, checks it is intact (CRC,
// non-negative lastOffsetDelta) and copies it into dst: a batch of fuseMin
// bytes or more in the CRC's own pass (fusedCopy), runs of smaller ones in
// one copy.
func stageChecked(src, dst []byte, k kind) error {
	n, run := 0, 0 // src[run:] is not copied yet
	for pos := 0; pos < len(src); n++ {
		size := frameSize(src[pos:])
		if size < 0 {
			return fail(k, n, pos, kafkaerr.CorruptMessage)
		}
		b := codec.Batch(src[pos : pos+size])
		var crc uint32
		if size < fuseMin {
			crc = codec.Checksum(b[codec.CRCStart:])
		} else {
			at, end := pos+codec.CRCStart, pos+size
			crc, run = fusedCopy(dst[run:at], src[run:at], dst[at:end], src[at:end]), end
		}
		if !intact(b, crc) {
			return fail(k, n, pos, kafkaerr.CorruptMessage)
		}
		pos += size
	}
	copy(dst[run:], src[run:])
	return nil
}

// applyChunk runs the batches of src, staged in dst, through offsets, the
// mapping and producer state, and commits them (appendChunkLocked). With
// checked, src is dst and its batches were framed and checked
// (stageChecked); without, each batch is framed, checked and copied here
// first: a chunk that starts with a batch under fuseMin is copied whole up
// front (one copy), else each batch is copied with its CRC, in one pass from
// fuseMin bytes (fusedCopy).
func (p *Partition) applyChunk(src, dst []byte, k kind, checked bool) (Result, error) {
	bulk := false // the chunk is staged by one copy (its first batch is under fuseMin)
	app := p.app
	app.BeginChunk(k.origin())
	assign := k == kindMirror && p.assign
	next := p.log.End()
	res := Result{FirstOffset: -1}
	maxEpoch, lastEpoch := p.maxEpoch, int32(0)
	due := p.log.IndexDue()
	idx := p.idx[:0]
	// refused is the first refusal of producer state, offsets or mapping,
	// at batch refusedAt (position refusedPos): the answer unless a later
	// batch fails a check.
	var refused error
	refusedAt, refusedPos := 0, 0
	n := 0
	for pos := 0; pos < len(src); n++ {
		var size int
		if checked {
			size = int(codec.Batch(src[pos:]).BatchLength()) + codec.LogOverhead
		} else {
			if size = frameSize(src[pos:]); size < 0 {
				app.Abort()
				return Result{}, fail(k, n, pos, kafkaerr.CorruptMessage)
			}
			in := codec.Batch(src[pos : pos+size])
			if n == 0 && size < fuseMin {
				bulk = true
				copy(dst, src)
			}
			var crc uint32
			switch {
			case bulk:
				crc = codec.Checksum(in[codec.CRCStart:])
			case size < fuseMin:
				copy(dst[pos:pos+size], in)
				crc = codec.Checksum(in[codec.CRCStart:])
			default:
				at := pos + codec.CRCStart
				crc = fusedCopy(dst[pos:at], in[:codec.CRCStart], dst[at:pos+size], in[codec.CRCStart:])
			}
			if !intact(in, crc) {
				app.Abort()
				return Result{}, fail(k, n, pos, kafkaerr.CorruptMessage)
			}
			if refused != nil {
				pos += size
				continue
			}
		}
		b := codec.Batch(dst[pos : pos+size])
		if checked && p.rewrites {
			if _, err := p.mapper.RewriteBatch(b, p.source, p.cfg.CRCFix); err != nil {
				return Result{}, fail(k, n, pos, p.unmappable(app, err))
			}
		}
		// The header is read once: the offsets and the epoch stamped (or
		// kept) are the ones used below, not read back from the copy.
		_ = b[codec.HeaderSize-1] // size ≥ HeaderSize: framed
		delta := b.LastOffsetDelta()
		var base int64
		var epoch int32
		var err error
		if assign {
			base, epoch = next, p.leaderEpoch
			b.SetBaseOffset(base)
			b.SetPartitionLeaderEpoch(epoch)
		} else {
			base, epoch = b.BaseOffset(), b.PartitionLeaderEpoch()
			err = offsetsFrom(base, delta, next)
		}
		if err == nil {
			if b.IsControl() {
				if !p.skipsControl(b) {
					// A replicated marker states no transaction version.
					_, err = addBatch(app, b, &p.pb, psm.TVUnknown)
				}
			} else {
				err = addChunkData(app, b, &p.pb, base, delta)
			}
		}
		if err != nil {
			if checked {
				app.Abort()
				return Result{}, fail(k, n, pos, err)
			}
			refused, refusedAt, refusedPos = err, n, pos
			pos += size
			continue
		}
		lastEpoch = epoch
		maxEpoch = max(maxEpoch, lastEpoch)
		if res.FirstOffset < 0 {
			res.FirstOffset = base
		}
		res.LastOffset = base + int64(delta)
		next = res.LastOffset + 1
		if int64(pos) > due {
			idx = append(idx, storage.OffsetPosition{Offset: res.LastOffset, Position: int64(pos)})
			due = int64(pos) + storage.IndexIntervalBytes
		}
		pos += size
	}
	p.idx = idx
	if refused != nil {
		app.Abort()
		return Result{}, fail(k, refusedAt, refusedPos, refused)
	}
	res.Batches = n
	// Write, then commit producer state.
	if invariants.Enabled {
		checkStaged(dst, p.log.End(), next)
	}
	if err := p.log.CommitIndexed(dst, next, idx); err != nil {
		app.Abort()
		return Result{}, err
	}
	return p.published(app, k, res, next, maxEpoch, lastEpoch)
}
