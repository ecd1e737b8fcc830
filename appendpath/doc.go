// Package appendpath is the per-batch append path of one partition replica:
// the pipeline from the caller's bytes to the log (UnifiedLog#append,
// LogValidator), its producer state (package psm) and its mirror state
// (docs/strategies.md). The log itself is package storage.
//
// # The path, in Kafka's order
//
//	AppendClient / AppendCoordinator / AppendMirrored / AppendReplica
//	→ appendLocked, whose blocks are numbered as these steps:
//	  1. frame every batch of the caller's bytes (codec.Next); per origin:
//	     CLIENT      one batch, baseOffset 0, size, CRC, LogValidator batch
//	                 rules (LogValidator#validateBatch), then its record walk (below)
//	     COORDINATOR one batch, size, CRC, LogValidator's record walk
//	     mirrored    CRC (no size limit, no LogValidator: REPLICATION)
//	     replica     CRC
//	  2. roll the active segment if the append does not fit
//	  3. copy the bytes into the log's staging area (the free tail of the
//	     active memory segment, or a reused buffer for a file segment);
//	     from here on only the copy is changed, never the caller's bytes.
//	     A mirrored or replica append of 1 KiB or more takes the staging
//	     area before step 1 (the start of the next segment's buffer when
//	     a roll is due, storage.Log.StageRolled, the roll of step 2 then
//	     following the checks) and copies each batch of 1 KiB or more in
//	     its CRC's pass (fusedCopy, codec.ChecksumCopyCold): one pass over
//	     the bytes instead of two. Staged bytes are not the log's until
//	     step 5, so a rejection in step 1 leaves nothing behind.
//	  4. per batch, in the copy: map the producer ID (mirrored, rewriting
//	     strategies; CRC fixed by `full` recompute or O(1) `patch`), assign
//	     baseOffset and partitionLeaderEpoch where the origin calls for it
//	     (both outside the CRC), read the producer-state fields (the first
//	     control record for markers and MIRROR_PID_RESET barriers) and
//	     validate them with psm's Appender, which works on a copy of state
//	  5. write (commit the staged bytes), then commit producer state, write
//	     .txnindex entries for aborted transactions, move the high watermark,
//	     fsync per policy.
//
// A mirrored or replica chunk of several batches that fits the active
// segment (chunk.go) takes steps 1, 3 and 4 in one pass over its batches
// where the strategy maps no PID (a mapping strategy runs step 1 over the
// whole chunk first, stageChecked: the mapper records what it maps): each
// batch is framed, checked, staged, stamped and validated by producer
// state, and its offset-index entry collected for the log's commit
// (storage.Log.CommitIndexed). A batch that fails step 1 still decides the
// answer over any earlier refusal of producer state, so a chunk is refused,
// or written, as its batches would be one call each
// (TestChunkMatchesOneBatchCalls).
//
// # Leader validation (LogValidator)
//
// A CLIENT or COORDINATOR batch's records are walked once (validate.go): uncompressed in
// place, compressed after decompression into the partition's reused scratch
// buffer, bounded by Config.MaxDecompressedBytes (64 MiB). Rejected, with a
// *RecordError naming the first record indexes at fault: a record that does
// not decode or a recordsCount that does not match the records, a stream that
// does not decompress or exceeds the bound (INVALID_RECORD); a null key on a
// Config.Compacted topic (INVALID_RECORD); on a CreateTime topic a timestamp
// ≠ -1 outside [now−TimestampBeforeMaxMs, now+TimestampAfterMaxMs] by the
// partition's clock, and a producer-set LogAppendTime batch on a
// LogAppendTime topic or with maxTimestamp -1 (INVALID_TIMESTAMP, which wins
// over INVALID_RECORD when both occur; an unknown codec is
// UNKNOWN_SERVER_ERROR). Accepted batches get, in the staged copy only,
// Kafka's setMaxTimestamp: maxTimestamp = now and the LogAppendTime bit on a
// LogAppendTime topic, the records' largest timestamp on a CreateTime topic
// when the header says otherwise (O(1) CRC patch, nothing when already
// right). A compressed batch whose inner offset deltas are not 0..n-1 is
// rebuilt as Kafka does (same codec, offsets 0..n-1, fresh CRC, size checked
// again) and the rebuilt batch is written instead. The batch-level rules
// (baseOffset 0, recordsCount, no control batch, a PID needs a sequence) are
// CLIENT-only; the record rules and the stamp apply to COORDINATOR batches
// too (markers on a LogAppendTime topic are stamped), as in Kafka, where
// LogValidator runs for every leader append. Mirrored and replica
// appends (REPLICATION) skip all of this. Cost: O(records) varint parsing plus the
// decompression; no allocation except for a rejection (the RecordError) or a
// rebuild (the compressor).
//
// A rejected batch anywhere in a chunk aborts the whole append: the staged
// bytes are never committed, the log bytes already there are untouched, and
// producer state is unchanged. A CLIENT exact duplicate (same producer,
// epoch and sequence range as one of its last five batches) is answered with
// the original offsets and writes nothing. Errors are kafkaerr values
// named as Kafka names them (INVALID_RECORD, CORRUPT_MESSAGE,
// OUT_OF_ORDER_SEQUENCE_NUMBER, …); multi-batch appends wrap them in a
// *BatchError saying which batch.
//
// Cost: one CRC-32C pass and one copy per batch, plus O(1) header work and
// one producer-state update; a rewriting strategy adds an O(1) CRC patch or a
// second CRC pass. Nothing is allocated per batch once the log's segments
// and the producer tables have grown (TestAppendAllocs).
//
// # The log
//
// The on-disk log is package storage: segments named as Kafka names them,
// with their .index, .timeindex and .txnindex files and the producer
// snapshots beside them, so `mirrorpath dump` and Kafka's tools read them; a
// memory log (Config.Dir == "") keeps segments in byte slices that retention
// recycles. The partition rolls before an append that would take the active
// segment past Config.SegmentBytes and then takes a producer snapshot at the
// new base (synced, so every snapshot lies at or below the durable prefix,
// Kafka's recovery point); SyncedOffset reports that prefix.
//
// # Recovery
//
// Open lets storage cut a torn or corrupt tail and check the indexes
// (storage.Recovery), then rebuilds producer state
// (UnifiedLog#rebuildProducerState): the newest snapshot at or below the log
// end that decodes (corrupt ones are deleted and the next older tried), then
// a replay of each later batch with REPLICATION rules, one batch per
// producer-state append (as LogSegment#recover does), barriers in exact
// order, regenerating the .txnindex entries of the replayed range. Recovery
// reports both. storage/vfs.MemFS can simulate a power cut that loses or
// garbles unsynced bytes (TestCrashRecoveryProperty).
//
// # Mirror states
//
// Stopped (writable) ─StartMirroring→ Mirroring (CLIENT and COORDINATOR
// appends refused with READ_ONLY_TOPIC; only mirrored batches) ─Stop→
// Stopping → Stopped. Stop runs STOPPING (docs/strategies.md): close open transactions
// (variant abort: bump the leader epoch past every epoch in the log and
// append an ABORT marker per open transaction with that producer's PID,
// epoch and coordinator epoch, COORDINATOR origin; variant truncate:
// truncate to the LSO), persist the mirror checkpoint, append the barrier
// under strategy barrier. A failing step (Hazards.Fault or StopHazards.Fault)
// leaves the partition Stopping and read-only; Stop again retries. An
// unmappable PID (bitfield, policy reject) moves a mirror to Failed. Failback
// truncates to the divergence point and mirrors the other side again.
//
// # Concurrency
//
// Every Partition method takes the partition's lock; partitions append in
// parallel, also when they share one *psm.Store (Config.PSM) under
// different PartitionIDs.
package appendpath
