// Package storage is Kafka's on-disk log of one partition (Kafka's storage
// module: UnifiedLog's segments, LogSegment, OffsetIndex, TimeIndex,
// TransactionIndex, the producer snapshot files): segments of back-to-back
// record batches with roll, staging, fsync, truncation and retention; the
// sparse .index and .timeindex files; the .txnindex (AbortedTxn) codec; the
// directory of producer snapshot files; the recovery scan that cuts a torn
// tail on open. The formats are drawn in docs/format.md.
//
// storage knows batches only by their framing (codec.Next, the CRC): which
// batches may be appended, their offsets and producer state are the
// caller's (appendpath's pipeline, psm's rules). It imports codec, kafkaerr
// and vfs, never psm or appendpath; psm uses its AbortedTxn.
//
// # The log
//
// Segments hold back-to-back batches exactly as Kafka stores them, named
// <20-digit base offset>.log (FileName), with <base>.index and
// <base>.timeindex (the sparse offset and time indexes, index.go) and
// <base>.txnindex (34-byte AbortedTxn entries) beside them, so `mirrorpath
// dump` and Kafka's tools read them. A memory log (Config.Dir == "") keeps
// segments in byte slices that retention recycles. An append goes to one
// segment: the caller asks NeedsRoll and rolls first when the active one
// would pass Config.SegmentBytes, builds the append in Stage's bytes (the
// free tail of the active memory segment, or a reused buffer for a file
// segment) and makes it part of the log with Commit (or CommitIndexed, with
// the offset-index entries the caller collected while framing the append,
// IndexDue). The sparse indexes
// (one entry per IndexIntervalBytes of batches) are kept in memory and, for
// a file log, written to .index/.timeindex whenever the log syncs.
//
// Durability: the fsync policy is SyncNever (the OS flushes), SyncAlways
// (MaybeSync syncs every append) or SyncInterval. A rolled segment is always
// synced. Sync also syncs the directory when segments were created or
// deleted since its last sync (LocalLog#flush): a synced segment whose
// directory entry is not may vanish in a crash. Truncate syncs before it
// returns. Synced reports the durable prefix (Kafka's recovery point).
//
// # Recovery
//
// Open reads every segment, and at the first batch that is cut short, fails
// its CRC or whose offsets go backwards it truncates the segment and deletes
// every later one (LogSegment#recover, Recovery says where and why). The
// index files are compared with what the segment's batches give and
// rewritten when they disagree; the .txnindex entries past the cut are
// dropped. A garbled baseOffset or partitionLeaderEpoch lies outside the CRC
// and cannot be detected, in Kafka either. The file layer is vfs.FS;
// vfs.MemFS simulates a power cut as POSIX allows one (its package doc says
// what survives), and the crash tests recover every image it gives.
//
// # Snapshots
//
// SnapshotDir keeps the <offset>.snapshot files of producer state (their
// encoding is psm's): written whole (vfs.WriteAtomic) on roll and close, deleted with
// their segments and past a truncation, the stray ones (at no segment base,
// RemoveStray) dropped when a log is loaded, and LoadNewest walks them from
// the newest, deleting the corrupt ones, as ProducerStateManager does.
package storage
