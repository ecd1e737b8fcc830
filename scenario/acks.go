package scenario

// The acknowledgement model. A produce request of an idempotent or
// transactional producer runs with acks=all (ProducerConfig: enabling
// idempotence requires acks=all): the leader answers once the high
// watermark passes the batch (DelayedProduce), so a batch is an
// acknowledged write only from then on. A batch the partition loses before
// that was never acknowledged: the client's request fails with a retriable
// error and it sends the same batch again, to whichever replica leads then.
// A producer declared acks=1 is acknowledged at the leader's append. The
// coordinator's COMMIT and ABORT markers are written the same way
// (WriteTxnMarkers with acks=all): a marker lost before its partition
// replicated it is written again by the coordinator, which retries until
// the write is acknowledged. A partition that refuses the marker when it is
// sent again (a failback made it a mirror: READ_ONLY_TOPIC) does not end the
// write: the coordinator owes the marker and keeps sending it
// (TransactionMarkerRequestCompletionHandler#onComplete re-enqueues a
// partition that did not answer NONE, and cancels the markers only on
// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED, the same rule
// for a marker's first write: markerCancelled), and the
// transaction is not complete meanwhile
// (TransactionMarkerChannelManager#maybeWriteTxnCompletion runs only once
// every partition answered), so it holds the partition's LSO as a
// transaction its coordinator holds open (owedMarker).

import (
	"slices"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// pendingWrite is a write that waits for the high watermark: a produce
// request (pr set) or a coordinator's marker (marker).
type pendingWrite struct {
	pr     *client
	p      *partition
	d      dataBatch
	batch  []byte // the request's batch, sent again as it is
	res    appendResult
	leo    int64 // the leader's log end before the append
	ts     int64 // the timestamp of the batch at res.FirstOffset the answer is for
	marker bool
	// txn is the transaction a marker ends; owed is set while the marker
	// is lost and its partition refuses it again.
	txn       *txnState
	end       pendingEnd // the outcome the marker writes
	owed      bool
	cancelled bool // the coordinator stopped sending it (cancelMarkers)
}

// awaitAck answers a produce request: at once under acks=1, else when the
// high watermark passes the batch (settleWrites).
func (w *world) awaitAck(pw *pendingWrite) {
	pw.ts = pw.d.ts
	if b, ok := batchAt(pw.p.lead(), pw.res.FirstOffset); ok && pw.res.Duplicate {
		pw.ts = timestampOf(b) // the answer is for the batch already there
	}
	if pw.pr.acksOne {
		w.acknowledge(pw)
		return
	}
	w.pending = append(w.pending, pw)
}

// acknowledge delivers pw's answer: the client's ack (checked by the
// oracle), or the end of the coordinator's marker write.
func (w *world) acknowledge(pw *pendingWrite) {
	w.delivered[pw.ts] = true
	if !pw.marker {
		w.or.checkAck(pw.pr, pw.p, pw.d, pw.res, pw.leo)
	}
}

// ackDelivered reports whether losing b loses a write somebody was told
// about: a data batch whose producer was acknowledged, a marker its
// partition replicated.
func (w *world) ackDelivered(b codec.Batch) bool { return w.delivered[timestampOf(b)] }

// settleWrites runs after every command: each pending write whose batch the
// leader still holds is answered once the high watermark passes it; one
// whose batch is gone is sent again to the current leader, as the client
// (or the coordinator) retries; a refused retry is the client's error and
// ends the request, while a refused marker stays owed and is sent again
// after the next command. A failed cluster answers nothing.
func (w *world) settleWrites() error {
	keep := w.pending[:0]
	for _, pw := range w.pending {
		done, err := w.settle(pw)
		if err != nil {
			return err
		}
		if !done {
			keep = append(keep, pw)
		}
	}
	clear(w.pending[len(keep):])
	w.pending = keep
	return nil
}

// settle is settleWrites for one write; done when it needs no more.
func (w *world) settle(pw *pendingWrite) (bool, error) {
	p := pw.p
	if pw.cancelled {
		return true, nil
	}
	if p.c.failed {
		return false, nil
	}
	for range 2 { // the write as it is, then at most one retry per command
		lead := p.lead()
		if pw.res.FirstOffset < lead.LogStartOffset() || w.holds(lead, pw) {
			if lead.HighWatermark() > pw.res.LastOffset {
				w.acknowledge(pw)
				return true, nil
			}
			return false, nil
		}
		// Lost before its acknowledgement: sent again.
		leo := lead.LogEndOffset()
		var res appendResult
		var err error
		if pw.marker {
			res, err = lead.AppendCoordinator(pw.batch, txnVersion(w.opts))
		} else {
			res, err = lead.AppendClient(pw.batch)
		}
		if err != nil && pw.marker {
			if markerCancelled(errorName(err)) {
				w.cancelMarkers(pw.txn, pw.end, []*partition{p})
				return true, nil
			}
			pw.owed = true
			return false, nil
		}
		if err != nil {
			w.or.clientError(pw.pr.name, p.c, p, errorName(err))
			return true, nil
		}
		pw.owed = false
		p.advanceHW()
		if !pw.marker {
			w.or.checkWrittenOnce(pw.pr, p, pw.d, res, leo)
		}
		pw.res, pw.leo = res, leo
		if b, ok := batchAt(lead, res.FirstOffset); ok {
			pw.ts = timestampOf(b)
		}
	}
	return false, nil
}

// markerCancelled is TransactionMarkerRequestCompletionHandler#onComplete's
// rule for a partition's refusal of a WriteTxnMarkers entry, one rule for
// a marker's first write and for every time it is sent again:
// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED says the
// producer's or the coordinator's epoch has moved on, and the coordinator
// stops sending the transaction's markers
// (TransactionMarkerChannelManager#removeMarkersForTxn, cancelMarkers); any
// other refusal leaves the partition's marker owed, sent again.
func markerCancelled(code string) bool {
	switch code {
	case kafkaerr.InvalidProducerEpoch.Name, kafkaerr.TransactionCoordinatorFenced.Name:
		return true
	}
	return false
}

// cancelMarkers is the coordinator cancelling t's markers of outcome e
// (markerCancelled). TransactionMarkerRequestCompletionHandler#onComplete
// sets abortSending and TransactionMarkerChannelManager#removeMarkersForTxn
// drops the transaction's pending completion without writing it
// (maybeWriteTxnCompletion never runs for it): no marker of t is owed or
// sent again, and the transaction's metadata stays PrepareCommit or
// PrepareAbort, the outcome decided (t.pending, cancelled) on the
// partitions that lack its marker (parts), until the coordinator reloads
// the transaction (reloadCoordinator). Meanwhile InitProducerId gets
// CONCURRENT_TRANSACTIONS (initProducer), and EndTxn, AddPartitionsToTxn
// and TxnOffsetCommit answer as in PrepareCommit or PrepareAbort
// (decidedEnd). The simulator stops every marker of t still to be sent;
// Kafka stops those of the refused WriteTxnMarkers request, the partitions
// of one broker.
func (w *world) cancelMarkers(t *txnState, e pendingEnd, parts []*partition) {
	for _, pw := range w.pending {
		if pw.txn == t && pw.owed {
			pw.owed, pw.cancelled = false, true
			if !slices.Contains(parts, pw.p) {
				parts = append(parts, pw.p)
			}
		}
	}
	e.cancelled = true
	t.parts, t.pending, t.open = parts, &e, true
}

// reloadCoordinator is the coordinator of cl loading its transactions
// again at a new coordinator epoch, as a restart of the cluster makes it
// (TransactionCoordinator#onElection of the __transaction_state partition's
// new leader): the markers queued for the old epoch are dropped
// (TransactionMarkerChannelManager#removeMarkersForTxnTopicPartition), and
// every transaction in PrepareCommit or PrepareAbort sends its markers again
// (TransactionStateManager#loadTransactionsForTxnTopicPartition hands it to
// TransactionMarkerChannelManager#addTxnMarkersToSend), a cancelled one
// included: a refusal cancels it again. The simulator sends them to the
// partitions that lack the marker; Kafka sends them to every partition of
// the transaction, where a second marker of a transaction no longer open
// completes nothing (ProducerAppendInfo#appendEndTxnMarker).
func (w *world) reloadCoordinator(cl *cluster) {
	cl.txn.coordEpoch++
	for _, t := range cl.txn.order {
		if !w.endDecided(t) {
			continue
		}
		var e pendingEnd
		parts := t.parts
		if t.pending != nil {
			e = *t.pending
		} else {
			parts = nil
		}
		for _, pw := range w.pending {
			if pw.txn == t && pw.owed {
				if t.pending == nil {
					e = pw.end
				}
				pw.owed, pw.cancelled = false, true
				if !slices.Contains(parts, pw.p) {
					parts = append(parts, pw.p)
				}
			}
		}
		e.cancelled = false
		t.parts, t.pending, t.open = parts, &e, true
		w.sendMarkers(cl, t, e, false)
	}
}

// owedMarker reports whether a coordinator owes p an end marker that p lost
// before acknowledging it and refused when it was sent again: the
// transaction it ends is still open at that coordinator.
func (w *world) owedMarker(p *partition) bool {
	for _, pw := range w.pending {
		if pw.owed && pw.p == p {
			return true
		}
	}
	return false
}

// endDecided reports whether t's coordinator has decided the outcome of
// its last transaction and not yet written every marker of it
// (decidedEnd).
func (w *world) endDecided(t *txnState) bool {
	_, ok := w.decidedEnd(t)
	return ok
}

// decidedEnd is the outcome t's coordinator decided for its last
// transaction while it has not yet written every marker of it
// (TransactionMetadata in PrepareAbort, abort set, or PrepareCommit): a
// marker a partition refused (t.pending), one whose markers the
// coordinator cancelled (t.pending, cancelled: cancelMarkers), or one lost
// before its acknowledgement and refused since (owedMarker). ok is false
// when no marker of t is owed.
func (w *world) decidedEnd(t *txnState) (abort, ok bool) {
	if t.pending != nil {
		return t.pending.abort, true
	}
	for _, pw := range w.pending {
		if pw.owed && pw.txn == t {
			return w.markers[pw.ts].abort, true
		}
	}
	return false, false
}

// holds reports whether r holds pw's batch at the offset it was answered
// with.
func (w *world) holds(r replica, pw *pendingWrite) bool {
	b, ok := batchAt(r, pw.res.FirstOffset)
	return ok && b.BaseOffset() == pw.res.FirstOffset && timestampOf(b) == pw.ts
}

// timestampOf is what names a write: a data batch's base timestamp (every
// send has its own), a marker's timestamp.
func timestampOf(b codec.Batch) int64 {
	if b.IsControl() {
		return readTruth(b).ts
	}
	return b.BaseTimestamp()
}
