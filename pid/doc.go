// Package pid implements the producer-ID strategies of cluster mirroring
// (docs/strategies.md): how the producer ID of a mirrored record batch is
// treated on its way into a destination partition, so that producers of
// different source clusters that share a PID do not meet in one
// producer-state entry.
//
// # Strategies
//
//	verbatim     p                      stored as-is (the unprotected baseline)
//	negate       -(p+2), every p        an involution: -1 ↔ -1, 5 ↔ -7, 0 ↔ -2
//	negate-skip  -(p+2) for p >= 0      idempotent; negatives pass through
//	bitfield     1|region|low31(p)      idempotent; negatives pass through
//	barrier      p                      plus a MIRROR_PID_RESET batch on STOPPING
//
// Arithmetic is two's-complement int64 with wrap-around: MapNegate(MaxInt64)
// is MaxInt64 and MapNegate(MinInt64) is MaxInt64-1. No strategy turns a PID
// other than -1 into -1.
//
// # Bit-field layout
//
//	bit 63      bits 62..31                 bits 30..0
//	  1   |  region (32 bits)          |  source PID, low 31 bits
//
// region = uint32(msb XOR lsb) of the big-endian halves of the source cluster
// UUID (FoldXOR; FoldMix is a mixing fold kept for comparison). Cluster IDs
// are read from RFC 4122 text or Kafka's 22-character base64
// (ParseClusterID). A PID >= 2^31 does not fit: policy Reject refuses it
// (ErrUnmappable, the partition moves to FAILED), policy Alias keeps its low
// 31 bits to demonstrate the conflation. Unbitfield inverts the layout.
//
// # Collisions and salts
//
// Two clusters whose regions are equal map the same PID to the same value. A
// Mapper, one per destination partition, keeps the origins table mapped PID
// → (source cluster, source PID). A mapping whose slot holds another origin,
// or whose value would be -1, is a collision: the Mapper draws random 32-bit
// salts from an injectable source until region XOR salt is a region no origin
// of the partition uses, records the salt in a Registry, and every later
// mapping of the same (cluster, PID) reuses it.
//
// The Registry appends each salt to a mirror-state log, one v2 batch per
// record (key codec.MirrorPidCollisionKey, type 3; value
// codec.MirrorPidCollisionValue, version 0), so the log is an ordinary
// segment; Load replays it after a restart or leader change. The origins
// table is not persisted: a new leader knows the salts but not the earlier
// mappings, and a collision with a mapping made before the change goes
// undetected. That is the design's property, kept so that the harness can
// show it.
//
// # Cost
//
// The pure mapping functions (MapNegate, MapNegateSkip, MapBitfield,
// Strategy.Map) are a few instructions. Mapper.Map under bitfield adds, for an
// unsalted cluster, one atomic pointer load (the partition's salt snapshot)
// and one probe of the pointer-free open-addressing origins table; a salted
// cluster adds a probe of the immutable salt snapshot. Neither locks nor
// allocates. Measured figures are in results/pid.md. Rewrite writes the new PID into the batch and fixes
// the CRC by recomputing it (Full, O(size)) or patching it (Patch, O(1) in
// size, codec.PatchCRC).
//
// # Concurrency
//
// The mapping functions are pure. A Mapper belongs to one partition's append
// path and is not safe for concurrent use. A Registry is safe for concurrent
// use: writers serialize on a mutex and publish per-partition snapshots that
// Mappers read lock-free.
package pid
