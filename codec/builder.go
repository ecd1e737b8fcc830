package codec

import "math"

// BatchHeader holds the header fields a caller chooses when building a
// batch. recordsCount, batchLength, magic and the CRC are always computed;
// the compression bits of Attributes are replaced by the codec argument.
type BatchHeader struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	// Attributes: timestamp type, transactional, control and delete-horizon
	// bits as given; bits 0-2 are set from the codec passed to AppendBatch.
	Attributes    Attributes
	BaseTimestamp int64
	// MaxTimestamp is written as given when it is not 0. When it is 0 and
	// there are records, it is computed as BaseTimestamp + the largest
	// TimestampDelta, as Kafka's builder does for CreateTime; with no records
	// it stays 0. (A batch whose real maxTimestamp is 0 while its records say
	// otherwise cannot be rebuilt byte for byte; Kafka never writes one.)
	MaxTimestamp  int64
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	// LastOffsetDelta is used only when recs is empty (a batch emptied by
	// compaction keeps its lastOffsetDelta); otherwise it is the OffsetDelta
	// of the last record.
	LastOffsetDelta int32
}

// Header returns the header fields of b as a BatchHeader, so that
// AppendBatch(nil, b.Header(), records of b, b.Compression()) rebuilds b.
func (b Batch) Header() BatchHeader {
	return BatchHeader{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		Attributes:           b.Attributes() &^ AttrCompressionMask,
		BaseTimestamp:        b.BaseTimestamp(),
		MaxTimestamp:         b.MaxTimestamp(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
		LastOffsetDelta:      b.LastOffsetDelta(),
	}
}

// AppendBatch appends one v2 batch holding recs, compressed with c, and
// returns the extended slice. Errors: ErrUnsupportedCodec for an unknown c,
// ErrBadLength when the batch would exceed the int32 length field; dst is
// returned unchanged on error. Uncompressed, it writes straight into dst
// (no allocation when dst has room); compressed, it encodes the records into
// a scratch buffer first. The result aliases dst's array.
func AppendBatch(dst []byte, h BatchHeader, recs []Record, c Compression) ([]byte, error) {
	if !c.Valid() {
		return dst, ErrUnsupportedCodec
	}
	if len(recs) > math.MaxInt32 {
		return dst, ErrBadLength
	}
	start := len(dst)
	lastDelta := h.LastOffsetDelta
	maxTS := h.MaxTimestamp
	if len(recs) > 0 {
		lastDelta = recs[len(recs)-1].OffsetDelta
		if maxTS == 0 {
			m := recs[0].TimestampDelta
			for i := range recs {
				m = max(m, recs[i].TimestampDelta)
			}
			maxTS = h.BaseTimestamp + m
		}
	}
	dst = be.AppendUint64(dst, uint64(h.BaseOffset))
	dst = be.AppendUint32(dst, 0) // batchLength, below
	dst = be.AppendUint32(dst, uint32(h.PartitionLeaderEpoch))
	dst = append(dst, MagicV2, 0, 0, 0, 0) // magic, crc
	dst = be.AppendUint16(dst, uint16(h.Attributes&^AttrCompressionMask|Attributes(c)))
	dst = be.AppendUint32(dst, uint32(lastDelta))
	dst = be.AppendUint64(dst, uint64(h.BaseTimestamp))
	dst = be.AppendUint64(dst, uint64(maxTS))
	dst = be.AppendUint64(dst, uint64(h.ProducerID))
	dst = be.AppendUint16(dst, uint16(h.ProducerEpoch))
	dst = be.AppendUint32(dst, uint32(h.BaseSequence))
	dst = be.AppendUint32(dst, uint32(len(recs)))
	if c == CompressionNone || len(recs) == 0 {
		for i := range recs {
			dst = AppendRecord(dst, recs[i])
		}
	} else {
		var raw []byte
		for i := range recs {
			raw = AppendRecord(raw, recs[i])
		}
		var err error
		if dst, err = Compress(dst, raw, c); err != nil {
			return dst[:start], err
		}
	}
	size := len(dst) - start
	if size-LogOverhead > math.MaxInt32 {
		return dst[:start], ErrBadLength
	}
	b := Batch(dst[start:])
	be.PutUint32(b[OffBatchLength:], uint32(size-LogOverhead))
	b.UpdateCRC()
	return dst, nil
}

// appendControlBatch appends a one-record control batch whose value is
// written by appendValue (valueLen bytes). No allocation beyond growing dst.
func appendControlBatch(dst []byte, attrs Attributes, ple int32, pid int64, epoch int16, ts int64,
	t ControlType, valueLen int, appendValue func([]byte) []byte) []byte {
	start := len(dst)
	body := 1 + 1 + 1 + 1 + ControlKeySize + sizeVarint32(int32(valueLen)) + valueLen + 1
	size := HeaderSize + sizeVarint32(int32(body)) + body
	dst = be.AppendUint64(dst, 0)
	dst = be.AppendUint32(dst, uint32(size-LogOverhead))
	dst = be.AppendUint32(dst, uint32(ple))
	dst = append(dst, MagicV2, 0, 0, 0, 0)
	dst = be.AppendUint16(dst, uint16(attrs))
	dst = be.AppendUint32(dst, 0) // lastOffsetDelta
	dst = be.AppendUint64(dst, uint64(ts))
	dst = be.AppendUint64(dst, uint64(ts))
	dst = be.AppendUint64(dst, uint64(pid))
	dst = be.AppendUint16(dst, uint16(epoch))
	dst = be.AppendUint32(dst, 0xffffffff) // baseSequence -1
	dst = be.AppendUint32(dst, 1)
	dst = appendVarint32(dst, int32(body))
	dst = append(dst, 0, 0, 0) // attributes, timestampDelta 0, offsetDelta 0
	dst = appendVarint32(dst, ControlKeySize)
	dst = AppendControlKey(dst, t)
	dst = appendVarint32(dst, int32(valueLen))
	dst = appendValue(dst)
	dst = append(dst, 0) // no headers
	Batch(dst[start:]).UpdateCRC()
	return dst
}

// AppendEndTxnMarker appends a COMMIT (abort false) or ABORT marker batch as
// Kafka's MemoryRecords.withEndTransactionMarker builds it: baseOffset 0,
// attributes 0x30 (transactional, control, CreateTime, no compression),
// partitionLeaderEpoch -1, baseSequence -1, baseTimestamp = maxTimestamp = ts,
// one record (timestampDelta 0) with a version 0 key and value and no
// headers. 78 bytes; no allocation beyond growing dst.
func AppendEndTxnMarker(dst []byte, pid int64, epoch int16, coordinatorEpoch int32, abort bool, ts int64) []byte {
	t := ControlCommit
	if abort {
		t = ControlAbort
	}
	m := EndTxnMarker{CoordinatorEpoch: coordinatorEpoch}
	return appendControlBatch(dst, AttrTransactional|AttrControl, NoPartitionLeaderEpoch, pid, epoch, ts,
		t, EndTxnMarkerSize, m.AppendTo)
}

// AppendBarrier appends the MIRROR_PID_RESET batch (docs/format.md):
// attributes 0x20 (control only), producerId -1, producerEpoch -1,
// baseSequence -1, partitionLeaderEpoch = leaderEpoch, baseTimestamp =
// maxTimestamp = ts, one record with key (0, 7) and a version 0
// MirrorPidReset value. The value is written in place; the method value
// passed down costs one small allocation only if the compiler cannot prove
// it does not escape.
func AppendBarrier(dst []byte, leaderEpoch int32, sourceClusterID string, ts int64) []byte {
	m := MirrorPidReset{SourceClusterID: sourceClusterID}
	return appendControlBatch(dst, AttrControl, leaderEpoch, NoProducerID, NoProducerEpoch, ts,
		ControlMirrorPidReset, m.size(), m.AppendTo)
}

// AppendBarrierNoSource is AppendBarrier in the form without
// SourceClusterId (MirrorPidReset.SourceAbsent): the value is Version 0 and
// an empty tagged-field section, 3 bytes. No allocation beyond growing dst.
func AppendBarrierNoSource(dst []byte, leaderEpoch int32, ts int64) []byte {
	m := MirrorPidReset{SourceAbsent: true}
	return appendControlBatch(dst, AttrControl, leaderEpoch, NoProducerID, NoProducerEpoch, ts,
		ControlMirrorPidReset, m.size(), m.AppendTo)
}
