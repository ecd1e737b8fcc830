// Package scenario runs scenario files (docs/scenarios.md): small scripts that
// build clusters, producers and mirrors, drive them through failovers, and ask
// an oracle whether any producer was silently conflated.
//
// # Design
//
// A file is parsed once ([Parse]) into a [Script]: one command per line,
// with every syntax and reference error reported as `file:line: message`
// before anything runs. The same Script then runs once per strategy of
// docs/strategies.md on a fresh world.
//
// The world is clusters of partitions, each partition a set of replicas. A
// replica is one appendpath.Partition: the real log, producer-state manager
// (psm) and PID strategy and mapper (pid) of the project, reached through the
// narrow replica interface of replica.go and bound in wire.go, so that the
// simulator has no second model of the broker. Batches are built and read
// with codec. Each replica keeps its log in files of its own in-memory file
// system: a restart, or a leadership change, reopens it and it recovers
// producer state from its snapshot and log, with an empty origins table, in
// the mirror state the controller holds for the partition.
//
// What is not the broker lives here: the PID allocator of each cluster
// (blocks of 1000 from pid-start), the transaction coordinator
// (transactional.id → PID and epoch; InitProducerId bumps the epoch, aborts
// an open transaction with markers and rotates an exhausted epoch to a new
// PID; KIP-890 verification), the group coordinator (KIP-447
// TxnOffsetCommit checks), clients and zombies, mirror fetchers (whole
// batches below the source's high watermark, at most fetch-bytes per chunk,
// offset-preserving, failback, re-parenting and fan-in), replica fetchers and leader elections (followers
// truncate to their divergence point), and the oracle (oracle.go).
//
// # Knowing the true producer
//
// Every data record carries the header mp.producer = the name of the client
// instance that sent it (a zombie has its own name), and every transaction
// marker the coordinator writes carries a unique timestamp registered with
// the oracle. Byte-level mirroring moves both unchanged, so on any cluster
// the oracle can tell which true producer a batch belongs to, whatever PID
// the header says.
//
// # Determinism
//
// Nothing depends on wall-clock time, map order or randomness (the broker
// clock is fixed, salts come from a seeded source): a file and its options
// give the same output on every run.
package scenario
