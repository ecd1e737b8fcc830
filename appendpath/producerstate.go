package appendpath

import (
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
)

// skipsControl reports whether producer state must not see control batch b:
// a barrier on a Hazards.BarrierUnaware partition, or in Open's replay under
// Hazards.RecoveryIgnoresBarrier.
func (p *Partition) skipsControl(b codec.Batch) bool {
	if !p.cfg.Hazards.BarrierUnaware && !(p.recovering && p.cfg.Hazards.RecoveryIgnoresBarrier) {
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

// addChunkData is addData for a batch of a chunk (applyChunk): its
// baseOffset and lastOffsetDelta as the caller read or stamped them, and
// psm's AddChunk, which skips Add's one-batch test. FuzzAddData holds *pb
// equal to BatchOf, as for addData. b must hold a whole header.
func addChunkData(app *psm.StoreAppender, b codec.Batch, pb *psm.Batch, base int64, delta int32) error {
	_ = b[codec.HeaderSize-1]
	pb.ProducerID, pb.ProducerEpoch, pb.BaseSequence = b.ProducerID(), b.ProducerEpoch(), b.BaseSequence()
	pb.LastOffsetDelta, pb.BaseOffset, pb.MaxTimestamp = delta, base, b.MaxTimestamp()
	pb.RecordsCount, pb.Transactional, pb.Control = b.RecordsCount(), b.IsTransactional(), false
	pb.ControlType, pb.CoordinatorEpoch, pb.ControlTimestamp = codec.ControlUnknown, 0, 0
	pb.CRC, pb.HasCRC = b.CRC(), !b.Attributes().LogAppendTime()
	pb.TxnVersion = psm.TV0
	_, err := app.AddChunk(pb)
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
