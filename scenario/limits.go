package scenario

import "github.com/mirrorpath/mirrorpath/codec"

// The byte caps of a scenario file. The simulator builds every batch a send
// line asks for and holds it in each replica it reaches, so the bytes the
// file asks for bound what a run holds; ParseReader refuses, at its line,
// the send that passes a cap (ErrLimit).
const (
	// MaxBatchBytes bounds one send's batch: Kafka's message.max.bytes
	// default (1 MiB + 12 bytes of log overhead), the largest batch a stock
	// broker accepts.
	MaxBatchBytes = 1048588
	// MaxRunBytes bounds the bytes a run may hold: the batches of all the
	// send lines of a file times the replicas of all its clusters, each of
	// which may hold each batch once.
	MaxRunBytes = 32 << 20
)

// recordOverhead bounds the bytes of one simulated record besides its
// value and the producer's name (batches.go, dataBatch.build): length (5),
// attributes (1), timestampDelta (1), offsetDelta (3) and key (1+4) for
// fewer than 10000 records, value length (3), header count (1), the
// producer header without its value (1+11+2) and the transaction header
// (1+6+1+19).
const recordOverhead = 60

// sendBytes is an upper bound of the size of the batch of a send line of
// records records of valueBytes each, from a producer whose name (the
// value of its header) is at most name bytes. O(1).
func sendBytes(records, valueBytes, name int64) int64 {
	return codec.HeaderSize + records*(recordOverhead+valueBytes+name)
}

// defaultSendBytes is the value bytes of a record of a send line without
// bytes=.
const defaultSendBytes = 16
