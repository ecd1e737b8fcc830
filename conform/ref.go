package conform

import (
	"errors"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/psm"
)

// ref is what a Kafka broker holds for one single-partition topic, as the
// reference model computes it: psm.Model for the producer state
// (ProducerStateManager, ProducerAppendInfo), the log end offset, and the
// data written, to say what each isolation level reads. With acks=all the
// high watermark is the log end offset when the produce is acknowledged.
type ref struct {
	m   *psm.Model
	leo int64
	log []refBatch
	// added holds the producer IDs whose transaction includes the partition
	// (AddPartitionsToTxn succeeded): their transactional batches pass the
	// verification of KIP-890 (transaction.partition.verification.enable,
	// on by default), the others fail it.
	added map[int64]bool
	// coordinated holds the producer IDs the coordinator has under their
	// transactional ID (an AddPartitionsToTxn succeeded once).
	coordinated map[int64]bool
	// txnIDs names the transactional ID of each transactional producer.
	txnIDs map[int64]string
}

type refBatch struct {
	pid         int64
	first, last int64
	txn         bool
	aborted     bool
	open        bool
	values      []string
}

const refPartition psm.PartitionID = 0

func newRef() *ref {
	return &ref{m: psm.NewModel(psm.Options{VerifyTransactions: true}), added: map[int64]bool{}, coordinated: map[int64]bool{}}
}

// produceWant is what Kafka answers to one produced batch.
type produceWant struct {
	code int16
	base int64 // -1 on error
}

// produce applies a CLIENT batch whose header is h (offsets relative), sent
// in a produce request naming txnID, and returns Kafka's answer. A
// transactional batch without transactional ID is left to the partition's
// rules (no coordinator is asked; the batch carries no guard).
func (r *ref) produce(h codec.BatchHeader, txnID *string, values []string, nowMs int64) produceWant {
	b := psm.Batch{
		ProducerID:      h.ProducerID,
		ProducerEpoch:   h.ProducerEpoch,
		BaseSequence:    h.BaseSequence,
		LastOffsetDelta: int32(len(values) - 1),
		BaseOffset:      r.leo,
		MaxTimestamp:    h.BaseTimestamp,
		RecordsCount:    int32(len(values)),
		Transactional:   h.Attributes.Transactional(),
	}
	var guard psm.Guard
	if b.Transactional && txnID != nil {
		// ReplicaManager#appendRecords: a transactional batch that does not
		// continue the producer's ongoing transaction on the partition is
		// verified with the coordinator before the log sees it. A partition
		// not in the transaction fails there, before the duplicate check;
		// one in it gets the guard of maybeStartTransactionVerification.
		in, ok := r.m.Producer(refPartition, b.ProducerID)
		if !ok || in.TxnFirstOffset < 0 || in.Epoch != b.ProducerEpoch {
			if r.coordinated[b.ProducerID] && ok && b.ProducerEpoch < in.Epoch {
				// The coordinator's epoch is at least the partition's: it
				// fences the verification at a lower epoch
				// (TransactionCoordinator#handleVerifyPartitionsInTransaction,
				// PRODUCER_FENCED, which AddPartitionsToTxnManager answers
				// as INVALID_PRODUCER_EPOCH). From Kafka 4.2 the partition
				// refuses it first as well
				// (UnifiedLog#analyzeAndValidateProducerState, KAFKA-19690).
				return produceWant{code: kafkaerr.InvalidProducerEpoch.Code, base: -1}
			}
			if !r.added[b.ProducerID] {
				return produceWant{code: kafkaerr.InvalidTxnState.Code, base: -1}
			}
			// Dial caps Produce at Kafka 3.6's version, below 12, so no
			// request is TV2 (supportsEpochBump).
			var err error
			guard, err = r.m.StartVerification(refPartition, b.ProducerID, b.BaseSequence, b.ProducerEpoch, psm.TV0, nowMs)
			var ke *kafkaerr.Error
			if errors.As(err, &ke) {
				return produceWant{code: ke.Code, base: -1}
			}
		}
	}
	a := r.m.Begin(refPartition, psm.Client)
	a.SetGuard(guard)
	out, err := a.Add(&b)
	if err != nil {
		a.Abort()
		var ke *kafkaerr.Error
		if errors.As(err, &ke) {
			return produceWant{code: ke.Code, base: -1}
		}
		return produceWant{code: kafkaerr.UnknownServerError.Code, base: -1}
	}
	if out.Duplicate.Found {
		a.Abort()
		return produceWant{base: out.Duplicate.FirstOffset}
	}
	a.Commit()
	base := r.leo
	r.log = append(r.log, refBatch{pid: b.ProducerID, first: base, last: b.LastOffset(), txn: b.Transactional,
		open: b.Transactional, values: values})
	r.leo = b.LastOffset() + 1
	r.m.OnHighWatermark(refPartition, r.leo)
	return produceWant{base: base}
}

// marker writes the COMMIT or ABORT marker the coordinator sends at EndTxn
// (coordinator epoch 0: the one transaction-log partition never moves).
func (r *ref) marker(pid int64, epoch int16, abort bool, nowMs int64) error {
	ct := codec.ControlCommit
	if abort {
		ct = codec.ControlAbort
	}
	b := psm.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: codec.NoSequence, BaseOffset: r.leo,
		MaxTimestamp: nowMs, RecordsCount: 1, Transactional: true, Control: true, ControlType: ct,
		ControlTimestamp: nowMs}
	if _, _, err := r.m.Update(refPartition, psm.Coordinator, &b); err != nil {
		return err
	}
	for i := range r.log {
		if e := &r.log[i]; e.pid == pid && e.open {
			e.open, e.aborted = false, abort
		}
	}
	delete(r.added, pid)
	r.leo++
	r.m.OnHighWatermark(refPartition, r.leo)
	return nil
}

func (r *ref) hw() int64  { return r.leo }
func (r *ref) lso() int64 { return r.m.LastStableOffset(refPartition, r.leo) }

// readUncommitted is every record value below the high watermark.
func (r *ref) readUncommitted() []string {
	var out []string
	for _, b := range r.log {
		out = append(out, b.values...)
	}
	return out
}

// readCommitted is what a read_committed consumer returns: records below the
// LSO, without those of aborted transactions.
func (r *ref) readCommitted() []string {
	lso := r.lso()
	var out []string
	for _, b := range r.log {
		if b.first >= lso || b.aborted {
			continue
		}
		out = append(out, b.values...)
	}
	return out
}
