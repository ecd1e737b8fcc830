package conform

import (
	"math"

	"github.com/mirrorpath/mirrorpath/psm"
)

// Producer IDs no InitProducerId handed out, one per case (a broker may keep
// producer state across partitions).
const (
	forgedPID       int64 = 0x3a5a_0000_0000_1234
	forgedTxnPID    int64 = 0x3a5a_0000_0000_5678
	forgedReusedPID int64 = 0x3a5a_0000_0000_9abc
)

// What the cases send. Each also reads ListOffsets and Fetch (check).
var (
	// idempotentNeeds: InitProducerId, then produces.
	idempotentNeeds = []Need{needInitPID, needProduce, needListOffset, needFetch}
	// txnNeeds: a transaction added to the partition and ended.
	txnNeeds = []Need{needInitPID, needAddPart, needEndTxn, needProduce, needListOffset, needFetch}
	// txnBumpNeeds: a transaction, and an epoch bump naming the producer.
	txnBumpNeeds = []Need{needInitPIDBump, needAddPart, needEndTxn, needProduce, needListOffset, needFetch}
	// forgedNeeds: produces from a producer ID nobody allocated.
	forgedNeeds = []Need{needProduce, needListOffset, needFetch}
)

// Cases returns the suite, in order: every producer-state rule of
// docs/producer-state.md that a client can reach over the produce path.
func Cases() []Case {
	return []Case{
		{"first-batch", "a new producer's first batch (sequence 0) is appended at the log end",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0", p, false, 3)
				c.check("after first batch")
			}},
		{"first-batch-nonzero-new-log", "a producer with no state may start at any sequence, even on a partition that never held a record",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				p.seq = 7
				c.data("produce seq 7", p, false, 2)
				c.check("after first batch")
			}},
		{"first-batch-nonzero", "a producer with no state may start at any sequence",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				q := c.initProducer("InitProducerId other", "")
				c.data("other producer seq 0", q, false, 1)
				p := c.initProducer("InitProducerId", "")
				p.seq = 7
				c.data("produce seq 7", p, false, 2)
				c.check("after first batch")
			}},
		{"sequence-gap", "a sequence that does not follow the last one is OUT_OF_ORDER_SEQUENCE_NUMBER",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0", p, false, 3)
				p.seq += 2
				c.data("produce seq 5 (gap)", p, false, 1)
				p.seq -= 2
				c.data("produce seq 3", p, false, 1)
				c.check("after gap")
			}},
		{"sequence-wrap", "the sequence after 2147483647 is 0",
			"ProducerAppendInfo#inSequence", idempotentNeeds, func(c *caseRun) {
				q := c.initProducer("InitProducerId other", "")
				c.data("other producer seq 0", q, false, 1)
				p := c.initProducer("InitProducerId", "")
				p.seq = math.MaxInt32 - 1
				c.data("produce seq 2147483646..2147483647", p, false, 2)
				c.data("produce seq 0 (wrapped)", p, false, 2)
				c.send("retry seq 2147483646..2147483647", batch{pid: p.pid, epoch: p.epoch, seq: math.MaxInt32 - 1,
					values: c.values("retry-wrap", 2)})
				c.check("after wrap")
			}},
		{"sequence-below-wrap", "a batch ending at 2147483646 is followed by sequence 2147483647, not by 0",
			"DefaultRecordBatch#incrementSequence", idempotentNeeds, func(c *caseRun) {
				q := c.initProducer("InitProducerId other", "")
				c.data("other producer seq 0", q, false, 1)
				p := c.initProducer("InitProducerId", "")
				p.seq = math.MaxInt32 - 2
				c.data("produce seq 2147483645..2147483646", p, false, 2)
				c.data("produce seq 2147483647", p, false, 1)
				c.data("produce seq 0 (wrapped)", p, false, 1)
				c.check("after wrap")
			}},
		{"duplicate-window", "a retry of any of the last five batches is acknowledged with its cached offsets and not written",
			"ProducerStateEntry#findDuplicateBatch", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				seqs := make([]int32, psm.NumBatchesToRetain)
				for i := range seqs {
					seqs[i] = p.seq
					c.data("produce batch", p, false, 2)
				}
				for i := len(seqs) - 1; i >= 0; i-- {
					c.send("retry cached batch", batch{pid: p.pid, epoch: p.epoch, seq: seqs[i], values: c.values("retry", 2)})
				}
				c.check("after retries")
			}},
		{"duplicate-out-of-window", "a retry of the sixth-newest batch is out of the window: OUT_OF_ORDER_SEQUENCE_NUMBER",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				for range psm.NumBatchesToRetain + 1 {
					c.data("produce batch", p, false, 1)
				}
				c.send("retry the sixth-newest batch", batch{pid: p.pid, epoch: p.epoch, seq: 0, values: c.values("retry", 1)})
				c.check("after retry")
			}},
		{"duplicate-partial", "a batch overlapping a cached one without matching its range is OUT_OF_ORDER_SEQUENCE_NUMBER",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0..3", p, false, 4)
				c.send("produce seq 1..2", batch{pid: p.pid, epoch: p.epoch, seq: 1, values: c.values("partial", 2)})
				c.check("after partial retry")
			}},
		{"same-range-other-content", "a batch with a cached batch's epoch and sequence range but other records is acknowledged as that duplicate and not written (the M4 shape)",
			"ProducerStateEntry#findDuplicateBatch", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0..1", p, false, 2)
				c.data("produce seq 2..3", p, false, 2)
				c.send("produce seq 0..1 with other records", batch{pid: p.pid, epoch: p.epoch, seq: 0,
					values: []string{"other-content-a", "other-content-b"}})
				c.check("after same-range batch")
			}},
		{"epoch-bump", "a higher epoch starts again at sequence 0 and clears the cached batches",
			"ProducerStateEntry#maybeUpdateProducerEpoch", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0..2", p, false, 3)
				p.epoch++
				p.seq = 0
				c.data("produce epoch+1 seq 0", p, false, 1)
				c.send("retry epoch seq 0..2 at the new epoch", batch{pid: p.pid, epoch: p.epoch, seq: 0, values: c.values("stale", 3)})
				c.check("after bump")
			}},
		{"epoch-bump-nonzero", "a higher epoch with a sequence other than 0 is OUT_OF_ORDER_SEQUENCE_NUMBER",
			"ProducerAppendInfo#checkSequence", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0..2", p, false, 3)
				c.send("produce epoch+1 seq 3", batch{pid: p.pid, epoch: p.epoch + 1, seq: 3, values: c.values("bump", 1)})
				c.check("after bump")
			}},
		{"epoch-bump-refused", "a refused batch changes no producer state: a higher epoch with a bad sequence leaves the producer at its epoch",
			"UnifiedLog#analyzeAndValidateProducerState (validation on a copy of the entry)", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0", p, false, 1)
				c.send("produce epoch+1 seq 3", batch{pid: p.pid, epoch: p.epoch + 1, seq: 3, values: c.values("bump", 1)})
				c.data("produce seq 1 at the old epoch", p, false, 1)
				c.check("after refused bump")
			}},
		{"epoch-fenced", "a batch with an epoch below the producer's is INVALID_PRODUCER_EPOCH",
			"ProducerAppendInfo#checkProducerEpoch", idempotentNeeds, func(c *caseRun) {
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0", p, false, 1)
				p.epoch++
				p.seq = 0
				c.data("produce epoch+1 seq 0", p, false, 1)
				c.send("produce old epoch seq 1", batch{pid: p.pid, epoch: p.epoch - 1, seq: 1, values: c.values("fenced", 1)})
				c.check("after fenced batch")
			}},
		{"txn-commit", "a committed transaction with other data in between: the LSO holds at its first offset until the COMMIT marker, then read_committed returns it",
			"ProducerStateManager#lastStableOffset", txnNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				o := c.initProducer("InitProducerId idempotent", "")
				c.data("idempotent before", o, false, 1)
				c.begin("AddPartitionsToTxn", t)
				c.data("transactional batch 1", t, true, 2)
				c.data("idempotent in between", o, false, 1)
				c.data("transactional batch 2", t, true, 1)
				c.check("transaction open")
				c.end("EndTxn commit", t, true)
				c.check("after commit")
			}},
		{"txn-abort", "an aborted transaction with other data in between: read_committed skips its records using the aborted-transaction list",
			"ProducerStateManager#lastStableOffset", txnNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				o := c.initProducer("InitProducerId idempotent", "")
				c.begin("AddPartitionsToTxn", t)
				c.data("transactional batch", t, true, 2)
				c.data("idempotent in between", o, false, 2)
				c.check("transaction open")
				c.end("EndTxn abort", t, false)
				c.check("after abort")
				c.begin("AddPartitionsToTxn again", t)
				c.data("transactional batch after abort", t, true, 1)
				c.end("EndTxn commit", t, true)
				c.check("after second transaction")
			}},
		{"txn-empty-then-sequence-gap", "an end marker alone creates the producer's entry at its epoch: the next batch must follow sequence -1, i.e. start at 0",
			"ProducerAppendInfo#appendEndTxnMarker", txnNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				c.begin("AddPartitionsToTxn", t)
				c.end("EndTxn commit with no data", t, true)
				c.check("after empty transaction")
				c.begin("AddPartitionsToTxn again", t)
				t.seq = 1
				c.data("transactional batch at seq 1", t, true, 2)
				t.seq = 0
				c.data("transactional batch at seq 0", t, true, 2)
				c.end("EndTxn commit", t, true)
				c.check("after commit")
			}},
		{"txn-non-transactional-write", "a non-transactional batch from a producer with an open transaction is INVALID_TXN_STATE",
			"ProducerAppendInfo#appendDataBatch", txnNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				c.begin("AddPartitionsToTxn", t)
				c.data("transactional batch", t, true, 1)
				c.data("non-transactional batch, same producer", t, false, 1)
				c.end("EndTxn commit", t, true)
				c.check("after commit")
			}},
		{"txn-stale-epoch", "a transactional batch at an epoch below the producer's is INVALID_PRODUCER_EPOCH, with the producer's transaction open on the partition or not",
			"UnifiedLog#analyzeAndValidateProducerState (KAFKA-19690: first, from Kafka 4.2)", txnBumpNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				c.begin("AddPartitionsToTxn", t)
				c.data("transactional batch", t, true, 1)
				c.end("EndTxn commit", t, true)
				old := *t
				n := c.bumpProducer("InitProducerId naming the producer (epoch bump)", t)
				c.begin("AddPartitionsToTxn at the new epoch", n)
				c.data("transactional batch at the new epoch", n, true, 1)
				c.send("transactional batch at the old epoch, transaction open", batch{pid: old.pid, epoch: old.epoch, seq: old.seq,
					txn: true, values: c.values("stale-open", 1)})
				c.end("EndTxn commit at the new epoch", n, true)
				c.send("transactional batch at the old epoch, no transaction open", batch{pid: old.pid, epoch: old.epoch, seq: old.seq,
					txn: true, values: c.values("stale-closed", 1)})
				c.check("after stale batches")
			}},
		{"txn-unverified", "a transactional batch for a partition not added to the transaction fails verification: INVALID_TXN_STATE",
			"ReplicaManager#appendRecords (transaction verification)", idempotentNeeds, func(c *caseRun) {
				t := c.initProducer("InitProducerId transactional", "t")
				c.txnIDs()[t.pid] = *t.txnID
				c.data("transactional batch without AddPartitionsToTxn", t, true, 1)
				c.check("after unverified batch")
			}},
		{"leader-restart-retry", "after the leader restarts, a retry of a cached batch is still a duplicate and the sequence continues",
			"ProducerStateManager#loadProducerEntry (snapshot and log recovery)", idempotentNeeds, func(c *caseRun) {
				if c.t.Restart == nil {
					c.unsupported("the broker cannot be restarted from here")
				}
				p := c.initProducer("InitProducerId", "")
				c.data("produce seq 0..1", p, false, 2)
				c.data("produce seq 2", p, false, 1)
				if err := c.t.Restart(c.topic, 0); err != nil {
					c.unsupported("restart: " + err.Error())
				}
				c.send("retry seq 2 after restart", batch{pid: p.pid, epoch: p.epoch, seq: 2, values: c.values("retry", 1)})
				c.data("produce seq 3 after restart", p, false, 1)
				c.check("after restart")
			}},
		{"forged-pid", "an idempotent batch from a producer ID nobody allocated is appended: the partition does not verify producer IDs",
			"UnifiedLog#analyzeAndValidateProducerState", forgedNeeds, func(c *caseRun) {
				p := &producer{pid: forgedPID, epoch: 0}
				c.data("produce forged PID seq 0", p, false, 2)
				c.data("produce forged PID seq 2", p, false, 1)
				c.check("after forged batches")
			}},
		{"forged-pid-transactional", "a transactional batch from a producer ID nobody allocated fails verification: INVALID_TXN_STATE",
			"ReplicaManager#appendRecords (transaction verification)", forgedNeeds, func(c *caseRun) {
				c.txnIDs()[forgedTxnPID] = c.topic + "-forged"
				p := &producer{pid: forgedTxnPID, epoch: 0}
				c.data("produce forged transactional batch", p, true, 1)
				c.check("after forged batch")
			}},
		{"forged-pid-then-transactional", "a forged producer ID that wrote idempotent batches still fails verification with a transactional batch: INVALID_TXN_STATE",
			"ReplicaManager#appendRecords (transaction verification)", forgedNeeds, func(c *caseRun) {
				p := &producer{pid: forgedReusedPID, epoch: 0}
				c.data("produce forged PID seq 0", p, false, 1)
				c.txnIDs()[forgedReusedPID] = c.topic + "-forged"
				c.data("produce forged PID transactional seq 1", p, true, 1)
				c.check("after forged batches")
			}},
	}
}
