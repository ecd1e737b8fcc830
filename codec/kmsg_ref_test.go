package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file holds the independent reference the record decoder is compared
// with: franz-go's kmsg for field values, plus the checks Kafka makes and kmsg
// does not (kmsg ignores a negative header count or key length and never
// compares the bytes consumed with the record length), written a second time
// with encoding/binary so that no code is shared with record.go.

// refVarint reads a Kafka varint with encoding/binary: at most max bytes, the
// last byte's spare high bits dropped (ByteUtils.readVarint). wide reports a
// last byte that kmsg would reject (kbin accepts 5th bytes ≤ 0x0f, 10th ≤ 0x01).
func refVarint(b []byte, max int) (v int64, n int, wide bool, ok bool) {
	u, n := binary.Uvarint(b)
	if n == 0 {
		return 0, 0, false, false
	}
	if n < 0 || n > max {
		// binary.Uvarint overflows past 10 bytes; Kafka fails past max.
		if n < 0 && -n <= max {
			// the max-th byte overflowed uint64 but ended the varint: only
			// possible for max == 10 with a 10th byte > 1.
			return refVarint10(b)
		}
		return 0, 0, false, false
	}
	if max == 5 {
		wide = n == 5 && b[4] > 0x0f
		u32 := uint32(u)
		return int64(int32(u32>>1) ^ -int32(u32&1)), n, wide, true
	}
	wide = n == 10 && b[9] > 0x01
	return int64(u>>1) ^ -int64(u&1), n, wide, true
}

func refVarint10(b []byte) (int64, int, bool, bool) {
	var u uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, 0, false, false
		}
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i + 1, true, true
		}
	}
	return 0, 0, false, false
}

// refRecord is one record as the reference reads it.
type refRecord struct {
	kmsg.Record
	size int  // bytes taken, length prefix included
	wide bool // contains a varint kmsg rejects and Kafka accepts
}

// refReadRecord applies Kafka's structural checks with encoding/binary, then
// decodes the field values with kmsg.Record.ReadFrom.
func refReadRecord(src []byte) (refRecord, error) {
	length, n, wide, ok := refVarint(src, 5)
	if !ok || length < 0 || int64(len(src)-n) < length {
		return refRecord{}, fmt.Errorf("record length")
	}
	size := n + int(length)
	body := src[n:size]
	p := 0
	field := func(max int) (int64, bool) {
		v, k, w, ok := refVarint(body[p:], max)
		if !ok {
			return 0, false
		}
		wide = wide || w
		p += k
		return v, true
	}
	skip := func(l int64) bool {
		if l < 0 {
			return true
		}
		if l > int64(len(body)-p) {
			return false
		}
		p += int(l)
		return true
	}
	if len(body) < 1 {
		return refRecord{}, fmt.Errorf("empty body")
	}
	p = 1
	if _, ok := field(10); !ok {
		return refRecord{}, fmt.Errorf("timestampDelta")
	}
	if _, ok := field(5); !ok {
		return refRecord{}, fmt.Errorf("offsetDelta")
	}
	for _, name := range []string{"key", "value"} {
		l, ok := field(5)
		if !ok || !skip(l) {
			return refRecord{}, fmt.Errorf("%s", name)
		}
	}
	hc, ok := field(5)
	if !ok || hc < 0 || hc > int64(len(body)-p) {
		return refRecord{}, fmt.Errorf("header count")
	}
	for range hc {
		kl, ok := field(5)
		if !ok || kl < 0 || !skip(kl) {
			return refRecord{}, fmt.Errorf("header key")
		}
		vl, ok := field(5)
		if !ok || !skip(vl) {
			return refRecord{}, fmt.Errorf("header value")
		}
	}
	if p != len(body) {
		return refRecord{}, fmt.Errorf("consumed %d of %d", p, len(body))
	}
	r := refRecord{size: size, wide: wide}
	if wide {
		return r, nil // kmsg cannot read it; the caller skips the comparison
	}
	if err := r.Record.ReadFrom(src[:size]); err != nil {
		return refRecord{}, fmt.Errorf("kmsg: %w", err)
	}
	return r, nil
}

// refWalk reads count records from records the reference way: Kafka's
// DefaultRecordBatch iteration rules around refReadRecord.
func refWalk(records []byte, count int32) ([]refRecord, error) {
	if count < 0 {
		return nil, fmt.Errorf("negative count")
	}
	var out []refRecord
	for i := int32(0); i < count; i++ {
		if len(records) == 0 {
			return out, fmt.Errorf("premature EOF at record %d", i)
		}
		r, err := refReadRecord(records)
		if err != nil {
			return out, fmt.Errorf("record %d: %w", i, err)
		}
		records = records[r.size:]
		if i == count-1 && len(records) != 0 {
			return out, fmt.Errorf("leftover %d bytes", len(records))
		}
		out = append(out, r)
	}
	return out, nil
}

// sameRecord compares one of our records with the reference's.
func sameRecord(got Record, want refRecord) error {
	w := &want.Record
	if got.Attributes != w.Attributes || got.TimestampDelta != w.TimestampDelta64 || got.OffsetDelta != w.OffsetDelta {
		return fmt.Errorf("attrs/deltas %d %d %d, kmsg %d %d %d", got.Attributes, got.TimestampDelta, got.OffsetDelta,
			w.Attributes, w.TimestampDelta64, w.OffsetDelta)
	}
	if !sameBytes(got.Key, w.Key) || !sameBytes(got.Value, w.Value) {
		return fmt.Errorf("key/value %q %q, kmsg %q %q", got.Key, got.Value, w.Key, w.Value)
	}
	if got.Headers.Len() != len(w.Headers) {
		return fmt.Errorf("%d headers, kmsg %d", got.Headers.Len(), len(w.Headers))
	}
	i := 0
	for h := range got.Headers.All() {
		if string(h.Key) != w.Headers[i].Key || !sameBytes(h.Value, w.Headers[i].Value) {
			return fmt.Errorf("header %d %q=%q, kmsg %q=%q", i, h.Key, h.Value, w.Headers[i].Key, w.Headers[i].Value)
		}
		i++
	}
	return nil
}

// sameBytes is bytes.Equal that also tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// walkAll runs our iterator to the end.
func walkAll(it RecordIter) ([]Record, error) {
	var out []Record
	for {
		r, err := it.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
}

// compareWalks runs both walks and reports any disagreement.
func compareWalks(records []byte, count int32) error {
	ours, oerr := walkAll(NewRecordIter(records, count))
	ref, rerr := refWalk(records, count)
	if (oerr == nil) != (rerr == nil) {
		return fmt.Errorf("accept/reject differ: ours %v, reference %v", oerr, rerr)
	}
	if oerr != nil {
		if len(ours) != len(ref) {
			return fmt.Errorf("failed after %d records, reference after %d (%v / %v)", len(ours), len(ref), oerr, rerr)
		}
	}
	for i := range ours {
		if ref[i].wide {
			continue
		}
		if err := sameRecord(ours[i], ref[i]); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
	}
	return nil
}

// sameHeaderAsKmsg compares our header getters with kmsg.RecordBatch.
func sameHeaderAsKmsg(b Batch) error {
	var k kmsg.RecordBatch
	if err := k.ReadFrom(b); err != nil {
		return fmt.Errorf("kmsg: %w", err)
	}
	type pair struct {
		name      string
		got, want int64
	}
	for _, p := range []pair{
		{"baseOffset", b.BaseOffset(), k.FirstOffset},
		{"batchLength", int64(b.BatchLength()), int64(k.Length)},
		{"partitionLeaderEpoch", int64(b.PartitionLeaderEpoch()), int64(k.PartitionLeaderEpoch)},
		{"magic", int64(b.Magic()), int64(k.Magic)},
		{"crc", int64(b.CRC()), int64(uint32(k.CRC))},
		{"attributes", int64(b.Attributes()), int64(k.Attributes)},
		{"lastOffsetDelta", int64(b.LastOffsetDelta()), int64(k.LastOffsetDelta)},
		{"baseTimestamp", b.BaseTimestamp(), k.FirstTimestamp},
		{"maxTimestamp", b.MaxTimestamp(), k.MaxTimestamp},
		{"producerId", b.ProducerID(), k.ProducerID},
		{"producerEpoch", int64(b.ProducerEpoch()), int64(k.ProducerEpoch)},
		{"baseSequence", int64(b.BaseSequence()), int64(k.FirstSequence)},
		{"recordsCount", int64(b.RecordsCount()), int64(k.NumRecords)},
	} {
		if p.got != p.want {
			return fmt.Errorf("%s: ours %d, kmsg %d", p.name, p.got, p.want)
		}
	}
	if !bytes.Equal(b[HeaderSize:], k.Records) {
		return fmt.Errorf("records section differs")
	}
	return nil
}
