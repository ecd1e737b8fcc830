package scenario

// The log cleaner of compacted topics (the clean command), after Kafka's
// LogCleaner: it runs on each replica's log as a whole and leaves what the
// cleaner keeps.

import (
	"errors"
	"fmt"
	"io"

	"github.com/mirrorpath/mirrorpath/codec"
)

// clean compacts every replica of p. The cleaner keeps, for every key, only
// its latest record outside aborted transactions (LogCleaner's offset map:
// records of an aborted transaction are not put in it, so they never shadow
// an earlier record); discards the records of aborted transactions (a
// transactional batch whose PID has a .txnindex entry covering its base
// offset; a non-transactional batch of the same PID is never aborted data);
// keeps every control batch: COMMIT and ABORT markers (their delete horizon
// never passes in a scenario, whose clock stands still) and MIRROR_PID_RESET,
// which the cleaner does not know and so retains, as Kafka's cleaner retains
// control records it does not know; removing it would let recovery rebuild
// the producers it cleared. A batch left without records is kept as an empty
// batch when it is the last data batch of a producer that the replica's
// producer state holds (lastOfProducer: BatchRetention RETAIN_EMPTY, the
// producer's sequence survives) and dropped otherwise. The
// replica then holds the cleaned log and producer state rebuilt from it, as
// a broker restarting after the cleaner ran. Superseded records are no RPO:
// that is what compaction is for.
func (w *world) clean(p *partition) error {
	for i, r := range p.reps {
		cleaned, err := cleanLog(r)
		if err != nil {
			return fmt.Errorf("clean %s %s replica %d: %w", p.c.name, p.key, i, err)
		}
		if err := r.Truncate(0); err != nil {
			return fmt.Errorf("clean %s %s replica %d: %w", p.c.name, p.key, i, err)
		}
		// With the default segment size the log is one segment and goes back
		// in one append. With segment-bytes set, each batch goes back alone,
		// so that the cleaned log rolls by the same rule as the original one
		// (one segment per batch at segment-bytes=1, Kafka's cleaner keeps
		// segment base offsets) and each roll writes its producer snapshot.
		chunks := [][]byte{cleaned}
		if p.c.segmentBytes > 0 {
			chunks = chunks[:0]
			eachBatch(cleaned, func(b codec.Batch) { chunks = append(chunks, b) })
		}
		for _, c := range chunks {
			if len(c) == 0 {
				continue
			}
			if _, err := r.AppendReplica(c); err != nil {
				return fmt.Errorf("clean %s %s replica %d: %w", p.c.name, p.key, i, err)
			}
		}
	}
	p.advanceHW()
	w.or.rescan(p)
	return nil
}

// cleanLog returns r's log as the cleaner leaves it (clean).
func cleanLog(r replica) ([]byte, error) {
	bs := tailOf(r, 0)
	aborted := r.AbortedTxns(0, r.LogEndOffset()+1)
	isAborted := func(b codec.Batch) bool {
		if b.IsControl() || !b.IsTransactional() {
			return false
		}
		for _, t := range aborted {
			if t.PID == b.ProducerID() && t.FirstOffset <= b.BaseOffset() && b.BaseOffset() <= t.LastOffset {
				return true
			}
		}
		return false
	}
	// lastRecordsOfActiveProducers: the last data offset of every producer
	// that producer state holds.
	lastOfActive := map[int64]int64{}
	for _, e := range r.Producers() {
		if n := len(e.BatchOffsets); n > 0 {
			lastOfActive[e.PID] = e.BatchOffsets[n-1]
		}
	}
	latest := map[string]int64{}
	for _, b := range bs {
		if b.IsControl() {
			continue
		}
		if isAborted(b) {
			continue
		}
		err := eachRecord(b, func(rec codec.Record) {
			latest[string(rec.Key)] = b.BaseOffset() + int64(rec.OffsetDelta)
		})
		if err != nil {
			return nil, err
		}
	}
	var out []byte
	for _, b := range bs {
		if b.IsControl() {
			out = append(out, b...)
			continue
		}
		var keep []codec.Record
		all := true
		if !isAborted(b) {
			err := eachRecord(b, func(rec codec.Record) {
				if latest[string(rec.Key)] == b.BaseOffset()+int64(rec.OffsetDelta) {
					keep = append(keep, rec)
				} else {
					all = false
				}
			})
			if err != nil {
				return nil, err
			}
		} else {
			all = false
		}
		switch {
		case all:
			out = append(out, b...)
			continue
		case len(keep) == 0 && !lastOfProducer(b, lastOfActive):
			continue // nothing left and no producer sequence to keep
		}
		h := codec.BatchHeader{BaseOffset: b.BaseOffset(), PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
			Attributes: b.Attributes() &^ codec.Attributes(0x07), BaseTimestamp: b.BaseTimestamp(),
			MaxTimestamp: b.MaxTimestamp(), ProducerID: b.ProducerID(), ProducerEpoch: b.ProducerEpoch(),
			BaseSequence: b.BaseSequence(), LastOffsetDelta: b.LastOffsetDelta()}
		var err error
		if out, err = codec.AppendBatch(out, h, keep, codec.CompressionNone); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lastOfProducer is Cleaner#isBatchLastRecordOfProducer: b has a producer
// and is the last data batch of a producer that producer state holds
// (lastOfActive: PID → last data offset). An emptied batch is kept only
// then (BatchRetention RETAIN_EMPTY, so that the producer's sequence
// survives) and deleted otherwise: a producer that state no longer holds
// (cleared by a barrier, or expired) must not come back from it on a
// rebuild.
func lastOfProducer(b codec.Batch, lastOfActive map[int64]int64) bool {
	last, ok := lastOfActive[b.ProducerID()]
	return ok && b.ProducerID() != codec.NoProducerID && last == b.LastOffset()
}

// eachRecord calls fn with every record of data batch b; the records alias b.
func eachRecord(b codec.Batch, fn func(codec.Record)) error {
	it := b.Records()
	for {
		rec, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(rec)
	}
}
