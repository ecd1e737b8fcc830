package corpus

// Record batch v2 header offsets (DefaultRecordBatch; docs/format.md), shared by the
// generator and the corpus tests. Kept here, not taken from mirrorpath's codec
// package, whose decoders the corpus exists to test.
const (
	OffBaseOffset      = 0
	OffBatchLength     = 8
	OffLeaderEpoch     = 12
	OffMagic           = 16
	OffCRC             = 17
	OffAttributes      = 21
	OffLastOffsetDelta = 23
	OffBaseTimestamp   = 27
	OffMaxTimestamp    = 35
	OffProducerID      = 43
	OffProducerEpoch   = 51
	OffBaseSequence    = 53
	OffRecordsCount    = 57
	HeaderSize         = 61
	LogOverhead        = 12
)
