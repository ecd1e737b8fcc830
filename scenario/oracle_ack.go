// M4: every acknowledgement is of a batch written where the ack says (I1);
// DUP: no resend is written twice.

package scenario

import (
	"fmt"
)

// checkAck is I1: an ack below the log end offset seen before the send must
// be a genuine retry: the batch there is one the same client instance sent,
// with the same base sequence and epoch (else M4). The instance, not the
// true producer: one transactional.id is one true producer for conflation,
// but its new instance never sent the old instance's batch, so a batch of
// its that lands on the old one's is acknowledged and never written.
func (o *oracle) checkAck(pr *client, p *partition, d dataBatch, res appendResult, leo int64) {
	if res.FirstOffset >= leo {
		return
	}
	b, ok := batchAt(p.lead(), res.FirstOffset)
	if ok {
		t := readTruth(b)
		if o.retryOf(pr, d, o.identify(b)) {
			return
		}
		o.report(CodeM4, p, fmt.Sprintf("%s PID %d epoch %d seq %d acked at offsets %d..%d, below LEO %d, which hold %q's batch (PID %d epoch %d seq %d): nothing appended",
			pr.name, d.pid, d.epoch, d.seq, res.FirstOffset, res.LastOffset, leo, t.producer, b.ProducerID(),
			b.ProducerEpoch(), b.BaseSequence()))
		return
	}
	if id, ok := o.writtenOf(p)[res.FirstOffset]; ok && res.FirstOffset < p.lead().LogStartOffset() {
		// Retention deleted the batch: what was written there decides.
		if o.retryOf(pr, d, id) {
			return
		}
		o.report(CodeM4, p, fmt.Sprintf("%s PID %d epoch %d seq %d acked at offsets %d..%d, below the log start, where retention deleted %q's batch (epoch %d seq %d): nothing appended",
			pr.name, d.pid, d.epoch, d.seq, res.FirstOffset, res.LastOffset, id.producer, id.send.epoch, id.send.seq))
		return
	}
	o.report(CodeM4, p, fmt.Sprintf("%s acked at offset %d below LEO %d with no batch there", pr.name, res.FirstOffset, leo))
}

// retryOf reports whether d, sent by pr, is a genuine retry of the write id:
// the same client instance's batch with the same PID, base sequence and
// epoch (as the client sent them: a mirror may have rewritten the PID).
func (o *oracle) retryOf(pr *client, d dataBatch, id writeID) bool {
	return id.send.instance == pr.name && id.send.pid == d.pid && id.send.seq == d.seq && id.send.epoch == d.epoch
}

// checkWrittenOnce is DUP: a batch that pr's send wrote (not a duplicate
// answer) must not be a retry of a batch of pr's that p already holds, or
// held until retention deleted it: the same client instance's, with the
// same PID, base sequence, epoch and record count, at other offsets. Kafka's
// duplicate check is producer state's, which a failover does not carry
// across clusters under a rewritten PID or a cleared entry: the client's
// resend after a lost ack is then written a second time.
func (o *oracle) checkWrittenOnce(pr *client, p *partition, d dataBatch, res appendResult, leo int64) {
	if res.FirstOffset < leo || d.seq < 0 {
		return
	}
	want := sendTruth{instance: pr.name, pid: d.pid, seq: d.seq, epoch: d.epoch, records: int32(d.records)}
	m := o.writtenOf(p)
	first := int64(-1)
	for off, id := range m {
		if off != res.FirstOffset && id.send == want && (first < 0 || off < first) {
			first = off
		}
	}
	if first >= 0 {
		o.report(CodeDUP, p, fmt.Sprintf("%s's resend of seq %d..%d (epoch %d) written at offset %d: the log already holds it at offset %d",
			pr.name, d.seq, d.seq+int32(d.records)-1, d.epoch, res.FirstOffset, first))
	}
}
