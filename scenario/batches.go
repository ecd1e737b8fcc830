package scenario

import (
	"strconv"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Record headers that carry the truth through byte-level mirroring.
const (
	headerProducer = "mp.producer" // name of the client instance that sent the batch
	headerTxn      = "mp.txn"      // its transaction serial (absent outside transactions)
)

// dataBatch describes one client batch.
type dataBatch struct {
	pid       int64
	epoch     int16
	seq       int32
	records   int
	bytes     int
	txn       bool
	producer  string
	txnSerial int
	ts        int64
}

// build returns the batch bytes, built with codec.AppendBatch.
func (d dataBatch) build() ([]byte, error) {
	hs := []codec.Header{{Key: []byte(headerProducer), Value: []byte(d.producer)}}
	if d.txn {
		hs = append(hs, codec.Header{Key: []byte(headerTxn), Value: []byte(strconv.Itoa(d.txnSerial))})
	}
	headers := codec.MakeHeaders(hs...)
	recs := make([]codec.Record, d.records)
	value := make([]byte, d.bytes)
	for i := range recs {
		recs[i] = codec.Record{OffsetDelta: int32(i), Key: []byte(strconv.Itoa(i)), Value: value, Headers: headers}
	}
	var attrs codec.Attributes
	if d.txn {
		attrs |= codec.AttrTransactional
	}
	h := codec.BatchHeader{
		PartitionLeaderEpoch: codec.NoPartitionLeaderEpoch,
		Attributes:           attrs,
		BaseTimestamp:        d.ts,
		ProducerID:           d.pid,
		ProducerEpoch:        d.epoch,
		BaseSequence:         d.seq,
	}
	return codec.AppendBatch(nil, h, recs, codec.CompressionNone)
}

// truth is what the oracle reads back from one batch of a log.
type truth struct {
	producer  string // "" for control batches and foreign batches
	txnSerial int
	control   codec.ControlType // for control batches
	ts        int64             // marker timestamp
}

// readTruth decodes the headers of the first record of a data batch, or the
// control type of a control batch.
func readTruth(b codec.Batch) truth {
	if b.IsControl() {
		cr, err := b.ControlRecord()
		if err != nil {
			return truth{control: codec.ControlUnknown}
		}
		return truth{control: cr.Type, ts: cr.Timestamp}
	}
	t := truth{control: codec.ControlUnknown}
	it := b.Records()
	r, err := it.Next()
	if err != nil {
		return t
	}
	for h := range r.Headers.All() {
		switch string(h.Key) {
		case headerProducer:
			t.producer = string(h.Value)
		case headerTxn:
			t.txnSerial, _ = strconv.Atoi(string(h.Value))
		}
	}
	return t
}

// eachBatch calls fn for every whole batch in buf, stopping at the first
// framing error.
func eachBatch(buf []byte, fn func(b codec.Batch)) {
	for len(buf) > 0 {
		b, rest, err := codec.Next(buf)
		if err != nil {
			return
		}
		fn(b)
		buf = rest
	}
}
