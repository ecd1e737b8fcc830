package psm

import (
	"errors"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// BatchOf reads what producer state needs from one v2 batch: the header and,
// for a control batch with records, its first record (type, timestamp and,
// for COMMIT and ABORT, the coordinator epoch). O(first record), no
// allocation; b must hold at least a whole header (codec.ParseBatch).
//
// Errors: kafkaerr.InvalidRecord when the first control record is malformed (bad
// key, marker value shorter than 6 bytes or with a negative version:
// InvalidRecordException in Kafka) or the control batch is compressed (Kafka
// never writes one and the barrier check must not decompress). A control
// batch with no records is not an error: ControlType is then ControlUnknown
// and Add treats the batch as a no-op.
func BatchOf(b codec.Batch) (Batch, error) {
	out := Batch{
		ProducerID:      b.ProducerID(),
		ProducerEpoch:   b.ProducerEpoch(),
		BaseSequence:    b.BaseSequence(),
		LastOffsetDelta: b.LastOffsetDelta(),
		BaseOffset:      b.BaseOffset(),
		MaxTimestamp:    b.MaxTimestamp(),
		RecordsCount:    b.RecordsCount(),
		Transactional:   b.IsTransactional(),
		Control:         b.IsControl(),
		ControlType:     codec.ControlUnknown,
		CRC:             b.CRC(),
		HasCRC:          !b.Attributes().LogAppendTime(),
	}
	if !out.Control || out.RecordsCount <= 0 {
		return out, nil
	}
	c, err := b.ControlRecord()
	if err != nil {
		if errors.Is(err, codec.ErrNoRecords) {
			return out, nil
		}
		return out, kafkaerr.InvalidRecord
	}
	out.ControlType, out.ControlTimestamp = c.Type, c.Timestamp
	if c.Type == codec.ControlCommit || c.Type == codec.ControlAbort {
		m, err := codec.ParseEndTxnMarker(c.Value)
		if err != nil {
			return out, kafkaerr.InvalidRecord
		}
		out.CoordinatorEpoch = m.CoordinatorEpoch
	}
	return out, nil
}
