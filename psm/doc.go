// Package psm is the producer-state manager: Kafka's ProducerStateManager,
// ProducerAppendInfo and ProducerStateEntry (docs/producer-state.md), plus the
// MIRROR_PID_RESET barrier of cluster mirroring (docs/strategies.md).
//
// # Which Kafka
//
// The rules are Apache Kafka 4.2's and later's. Where a rule changed
// between releases still in use, Options.Release picks the line: Kafka4
// (the default, 4.2 and later), Kafka41 (4.1), Kafka40 (4.0) or Kafka3
// (3.6 to 3.9). The rules that differ, each with the release that brought
// it: UnifiedLog#hasOngoingTransaction counts an open transaction only at
// the batch's epoch (KAFKA-14563, 4.0); a TV2 marker at the epoch of a
// verification entry created by a TV2 request keeps it
// (UnifiedLog#updateProducers, KAFKA-18654, 4.0); StartVerification
// refuses an epoch below the producer's
// (UnifiedLog#maybeStartTransactionVerification, KAFKA-18042, 4.1); a
// producer verified by a TV2 request with no cached batch starts at
// sequence 0 (ProducerAppendInfo#checkSequence, KAFKA-18202, 4.1); a
// transactional batch or marker below its producer's epoch is refused
// before any other check (UnifiedLog#analyzeAndValidateProducerState,
// KAFKA-19690, 4.2); a COMMIT or ABORT marker's epoch is checked by the
// transaction version its WriteTxnMarkers request states (Batch.TxnVersion,
// KAFKA-19446, 4.2). docs/producer-state.md ("Which Kafka") lists them with
// the Kafka commit each was read at.
//
// # Two implementations, one behaviour
//
// Model is the reference: Go maps and pointers, one function per Kafka
// method, the rules as read. Store is the fast path: pointer-free
// open-addressing tables, sharded, keyed by (partition, PID), with an O(1)
// barrier. Both implement Manager; FuzzStoreMatchesModel drives them with the
// same operation sequences and requires identical answers and state.
//
// # An append
//
//	a := m.Begin(p, psm.Client)   // the partition's reusable Appender
//	out, err := a.Add(&batch)     // validate batch by batch, on a copy
//	...write the log...
//	c := a.Commit()               // apply; c.Aborted holds the .txnindex entries
//
// Add validates each batch against the committed state plus the earlier
// batches of the same append, exactly as UnifiedLog.analyzeAndValidateProducerState
// with one ProducerAppendInfo per PID. A rejected batch returns a *kafkaerr.Error
// sentinel (kafkaerr.OutOfOrderSequenceNumber, kafkaerr.InvalidProducerEpoch, kafkaerr.InvalidTxnState,
// kafkaerr.TransactionCoordinatorFenced, …) and changes nothing. A CLIENT batch that
// exactly repeats one of its producer's last five committed batches is
// reported in Outcome.Duplicate and not applied. Commit runs the post-write
// steps in Kafka's order (ProducerStateManager#update, #completeTxn): entries, started transactions, then per
// completed transaction its LSO, its AbortedTxn entry (if aborted) and
// completeTxn.
//
// Update(p, origin, &batch) is an append of one batch in one call (Begin,
// Add, then Commit, or Abort on an error or a duplicate), for a caller whose
// log already holds the batch: appendpath's recovery rebuilds producer
// state from the log with it. It gives the same answers and state as the
// three calls; on the Store its fast case is one lookup and one write.
//
// Origins (ProducerAppendInfo#maybeValidateDataBatch): CLIENT checks epoch, sequence, coordinator epoch and looks
// for duplicates; COORDINATOR checks epochs only; REPLICATION (followers,
// mirror fetches, recovery) accepts epoch and coordinator-epoch regressions.
// Non-transactional data while a transaction is open is INVALID_TXN_STATE on
// every origin. Options.HasProducerID picks which PIDs are tracked at all:
// Stock (pid > -1, Kafka; a negative PID skips all tracking, failure mode M5)
// or NonNegativeOne (pid != -1).
//
// # The barrier
//
// A control batch of type MIRROR_PID_RESET (any origin, any PID) removes every
// producer and (under Exact) verification entry of the partition; open transactions stay,
// so the LSO stays pinned and Committed.KeptOpenTxns reports how many (M6).
// With BarrierApply Exact the order inside a multi-batch append is exact:
// batches before the barrier are dropped with the committed state, batches
// after it start from nothing, and all of it happens at Commit. BarrierApply
// Prototype is the KIP-1279 prototype's: the producer entries (only they)
// go as soon as Add meets the barrier, even if the append is then refused;
// the updates pending from earlier batches are applied at Commit,
// resurrecting pre-barrier entries.
// The Store's barrier is O(1): each slot key carries the partition generation
// it was written under; a barrier increments the generation and older slots
// read as free. Two barriers leave the same state as one.
//
// # Store layout and concurrency
//
// A partition owns numShards tables. A slot is one 64-byte cache line: the
// key (PID, generation) beside the entry's hot fields (epoch, coordinator
// epoch, last timestamp, open transaction, the last sequence of each cached
// batch), so an in-order CLIENT append validates against one line. The cold
// rest of the five-batch window (offsets, timestamps, offset deltas) sits in
// an array parallel to the slots; its address follows from the hash alone,
// so Add prefetches it beside the slot and the two cache misses overlap. The
// scans (expiration, snapshots, iteration) walk the slots in order. The hash
// of (partition, PID), one multiply (Fibonacci hashing), picks the shard from
// its top 4 bits and the first probe slot from the bits below them, the bits
// of a product that depend on every bit of the PID (sequential PIDs, what
// every cluster allocates, then almost never share a first slot). Shards
// rehash independently at load 3/4, dropping stale and expired slots, and an
// insert whose probe run is long and holds such slots purges its shard
// first, so a barrier leaves no long chains.
//
// An append whose first batch is a CLIENT or REPLICATION data batch outside
// a transaction from a known producer (the usual produce request) takes a
// fast path: it is checked straight against the committed slot and, when
// it stays the append's only batch, Commit writes it back by slot index,
// with no pending entry. A second batch hands it to the general path as the
// pending entry that path would have built. An append of several batches
// keeps one pending entry per producer (Kafka's ProducerAppendInfo, one per
// producer for the whole append in UnifiedLog#analyzeAndValidateProducerState):
// the entry is made from the committed one at the producer's first batch
// of the append, and Commit merges each entry once. A REPLICATION data batch
// (each batch of a mirror's or a follower's fetch, bar the markers) takes a
// short step of that path: no epoch fence, no sequence check, no duplicate,
// only the producer's open transaction to check, so a REPLICATION append
// reads the table once per producer. There a producer's first batch, a
// plain data batch of a known producer before any barrier, stays a single
// record that Commit writes straight into its slot, and becomes a pending
// entry only when a second batch of the producer comes, so a chunk of one
// batch per producer builds and merges no entry. StoreAppender.BeginChunk
// starts an append of a fetch's chunk there from its first batch, and
// StoreAppender.AddChunk adds a batch without Add's one-batch test. Update's
// fast case is the fast path's check, written straight into the slot.
//
// Each partition also owns its transaction lists and one reusable Appender,
// so appends to one partition take no lock; different partitions may be used
// in parallel, calls on the same partition must be serialized (Kafka holds
// the log lock). Begin, Add, Commit, Update and Reset do not allocate once tables and
// scratch have grown.
//
// # Snapshots
//
// AppendSnapshot and LoadSnapshot speak Kafka's ProducerSnapshot v1 file
// (snapshot.go draws it: version 1, CRC-32C over [6, EOF), 46-byte entries,
// sorted by PID here). A defect is an error matching ErrCorruptSnapshot and
// leaves the partition unchanged. The <20-digit offset>.snapshot files are
// package storage's (SnapshotDir, whose LoadNewest walks them from the
// newest and deletes the corrupt ones).
// Expired entries are dropped on load.
//
// # Deviations from Kafka, on purpose
//
//   - Verification entries are cleared at Commit, not during validation, so a
//     rejected append changes nothing (under BarrierApply Prototype, but for
//     the barrier's removal of the producers).
//   - A control batch of a type other than COMMIT, ABORT and MIRROR_PID_RESET
//     from a tracked PID is kafkaerr.UnknownServerError (Kafka throws
//     IllegalArgumentException, which reaches the wire as UNKNOWN_SERVER_ERROR).
//   - The verification guard (KIP-890) is off unless Options.VerifyTransactions.
//   - The LogValidator checks (record count, CLIENT control
//     batches, negative sequences) belong to the append path, not here.
package psm
