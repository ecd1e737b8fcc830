package appendpath

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// fuzzLimit is MaxDecompressedBytes of the fuzz partitions: small, so that
// the allocation bound below is tight.
const fuzzLimit = 64 << 10

// fuzzConfig is the partition config of a fuzz mode: bit 0 LogAppendTime
// topic, bit 1 compacted, bit 2 a ±5 s timestamp window.
func fuzzConfig(mode uint8) Config {
	cfg := Config{MaxDecompressedBytes: fuzzLimit, SegmentBytes: 1 << 20, RetainSegments: 1, SkipRollSnapshots: true}
	if mode&1 != 0 {
		cfg.TimestampType = LogAppendTime
	}
	cfg.Compacted = mode&2 != 0
	if mode&4 != 0 {
		cfg.TimestampBeforeMaxMs, cfg.TimestampAfterMaxMs = 5000, 5000
	}
	return cfg
}

// repairClient makes data a CLIENT batch that passes checkLeader's batch rules
// where it can, so that mutations reach the record walk: whole length,
// magic 2, baseOffset 0, no producer ID (producer state then accepts any
// batch), not control, lastOffsetDelta = recordsCount-1, a valid CRC.
// Shorter inputs are padded to a header.
func repairClient(data []byte) []byte {
	b := make([]byte, max(len(data), codec.HeaderSize))
	copy(b, data)
	bb := codec.Batch(b)
	bb.SetBaseOffset(0)
	binaryPut32(b[codec.OffBatchLength:], uint32(len(b)-codec.LogOverhead))
	b[codec.OffMagic] = codec.MagicV2
	for i := range 8 {
		b[codec.OffProducerID+i] = 0xff
	}
	b[codec.OffAttributes+1] &^= byte(codec.AttrControl)
	binaryPut32(b[codec.OffLastOffsetDelta:], uint32(bb.RecordsCount()-1))
	bb.UpdateCRC()
	return b
}

// refOutcome is what the reference validator says of a batch.
type refOutcome struct {
	code    *kafkaerr.Error // nil: accepted
	reason  error
	indexes []int32
	count   int
	rebuilt bool
	// Accepted in place: the stored bytes from the CRC start on.
	inPlace []byte
	// Rebuilt: the header fields and records the rebuilt batch must hold.
	attrs   codec.Attributes
	baseTS  int64
	maxTS   int64
	records []codec.Record
}

// refValidate is LogValidator for one CLIENT batch as the Java reads, written
// for clarity: codec.ReadRecord in a counted loop instead of RecordIter,
// every record collected first, the rules of validateRecord in order, then
// processRecordErrors, then setMaxTimestamp or buildRecordsAndAssignOffsets.
// It covers the batches repairClient makes (batch rules already hold).
func refValidate(b codec.Batch, cfg Config, nowMs int64) refOutcome {
	if b.RecordsCount() <= 0 {
		// validateBatch: count ≤ 0 is INVALID_RECORD whatever lastOffsetDelta
		// (count−1, which wraps to MaxInt32 for a count of MinInt32) says.
		return refOutcome{code: kafkaerr.InvalidRecord}
	}
	if len(b) > 1048588 {
		return refOutcome{code: kafkaerr.MessageTooLarge}
	}
	c := b.Compression()
	if !c.Valid() {
		return refOutcome{code: kafkaerr.UnknownServerError, reason: ErrUnsupportedCompression}
	}
	data := []byte(b[codec.HeaderSize:])
	if c != codec.CompressionNone {
		out, err := codec.Decompress(nil, b, fuzzLimit)
		if errors.Is(err, codec.ErrDecompressionLimit) {
			return refOutcome{code: kafkaerr.InvalidRecord, reason: ErrDecompressedTooLarge}
		}
		if err != nil {
			return refOutcome{code: kafkaerr.InvalidRecord, reason: ErrBadCompression}
		}
		data = out
	}
	// A compressed batch is read with Kafka's partial read (skipKeyValueIterator).
	read := codec.ReadRecord
	if c != codec.CompressionNone {
		read = codec.ReadPartialRecord
	}
	records := data
	var recs []codec.Record
	for i := range int(b.RecordsCount()) {
		r, n, err := read(data)
		if err == nil && i == int(b.RecordsCount())-1 && n != len(data) {
			err = codec.ErrRecordsLeftover
		}
		if err != nil {
			return refOutcome{code: kafkaerr.InvalidRecord, reason: ErrRecordStructure, indexes: []int32{int32(i)}, count: 1}
		}
		recs = append(recs, r)
		data = data[n:]
	}
	timestampOf := func(r codec.Record) int64 {
		if b.Attributes().LogAppendTime() {
			return b.MaxTimestamp()
		}
		return b.BaseTimestamp() + r.TimestampDelta
	}
	before, after := cfg.TimestampBeforeMaxMs, cfg.TimestampAfterMaxMs
	if before == 0 {
		before = 1<<63 - 1
	}
	if after == 0 {
		after = 1<<63 - 1
	}
	var o refOutcome
	var tsFault bool
	var tsReason error
	for i, r := range recs {
		var e error
		ts := timestampOf(r)
		switch {
		case cfg.Compacted && r.Key == nil:
			e = ErrNullKey
		case cfg.TimestampType == CreateTime && ts != -1:
			if nowMs-ts > before || ts-nowMs > after {
				e = ErrTimestampOutOfRange
			}
		case b.Attributes().LogAppendTime():
			e = ErrProducerLogAppendTime
		}
		if e == nil {
			continue
		}
		if o.count == 0 {
			o.reason = e
		}
		if e != ErrNullKey && !tsFault {
			tsFault, tsReason = true, e
		}
		if len(o.indexes) < MaxRecordErrorIndexes {
			o.indexes = append(o.indexes, int32(i))
		}
		o.count++
	}
	if o.count > 0 {
		o.code = kafkaerr.InvalidRecord
		if tsFault {
			o.code, o.reason = kafkaerr.InvalidTimestamp, tsReason
		}
		return o
	}
	maxTS := int64(-1)
	inOrder := true
	for i, r := range recs {
		maxTS = max(maxTS, timestampOf(r))
		inOrder = inOrder && r.OffsetDelta == int32(i)
	}
	if c != codec.CompressionNone && !inOrder {
		o.rebuilt = true
		o.attrs = b.Attributes()&codec.AttrTransactional | codec.Attributes(c)
		o.maxTS = maxTS
		if cfg.TimestampType == LogAppendTime {
			o.attrs |= codec.AttrLogAppendTime
			o.maxTS = nowMs
		}
		o.baseTS = timestampOf(recs[0])
		// The rebuild reads the records again with the full read, which may
		// refuse what the partial read accepted.
		for i := range recs {
			r, n, err := codec.ReadRecord(records)
			if err == nil && i == len(recs)-1 && n != len(records) {
				err = codec.ErrRecordsLeftover
			}
			if err != nil {
				return refOutcome{code: kafkaerr.InvalidRecord, reason: ErrRecordStructure, indexes: []int32{int32(i)}, count: 1}
			}
			records = records[n:]
			ts := timestampOf(r)
			if ts < -1 {
				return refOutcome{code: kafkaerr.UnknownServerError, reason: ErrRebuildNegativeTimestamp,
					indexes: []int32{int32(i)}, count: 1}
			}
			r.Attributes, r.OffsetDelta, r.TimestampDelta = 0, int32(i), ts-o.baseTS
			o.records = append(o.records, r)
		}
		return o
	}
	o.inPlace = bytes.Clone(b[codec.CRCStart:])
	typ := b.Attributes().LogAppendTime()
	wantTS, wantLAT := maxTS, cfg.TimestampType == LogAppendTime
	if wantLAT {
		wantTS = nowMs
	}
	if typ != wantLAT || b.MaxTimestamp() != wantTS {
		attrs := byte(b.Attributes()) & 0x77
		if wantLAT {
			attrs |= 0x08
		}
		o.inPlace[codec.OffAttributes-codec.CRCStart] = 0
		o.inPlace[codec.OffAttributes-codec.CRCStart+1] = attrs
		for i := range 8 {
			o.inPlace[codec.OffMaxTimestamp-codec.CRCStart+i] = byte(uint64(wantTS) >> (56 - 8*i))
		}
	}
	return o
}

// validateSeeds are valid, rebuildable and rejectable batches of every codec.
func validateSeeds(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range allCodecs {
		h := vHeader(0)
		h.ProducerID = -1
		seeds = append(seeds, vBatch(tb, h, vRecs(5), c), vBatch(tb, h, offsetsOff(4), c))
		h.Attributes = codec.AttrLogAppendTime
		h.MaxTimestamp = vBase + 900
		seeds = append(seeds, vBatch(tb, h, vRecs(2), c))
	}
	return seeds
}

// FuzzValidateClient holds a CLIENT append of any bytes (repaired by repairClient to pass
// the batch rules) to: no panic; the same outcome as refValidate (error code,
// reason and record indexes; or the exact stored bytes in place; or the
// rebuilt header and records); the caller's bytes unchanged; the scratch
// buffer never past MaxDecompressedBytes+1; and allocation bounded by the
// input and the limit, never by a length field.
func FuzzValidateClient(f *testing.F) {
	for _, s := range validateSeeds(f) {
		for mode := range uint8(8) {
			f.Add(s, mode)
		}
	}
	parts := map[uint8]*Partition{}
	nowMs := testNow().UnixMilli()
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		mode &= 7
		if len(data) > 1<<20 {
			return
		}
		p := parts[mode]
		if p == nil {
			cfg := fuzzConfig(mode)
			cfg.Now = func() time.Time { return time.UnixMilli(nowMs) }
			var err error
			if p, err = Open(cfg); err != nil {
				t.Fatal(err)
			}
			parts[mode] = p
		}
		in := repairClient(data)
		orig := bytes.Clone(in)
		want := refValidate(codec.Batch(in), p.cfg, nowMs)

		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		leo := p.LogEndOffset()
		res, err := p.AppendClient(in)
		runtime.ReadMemStats(&ms1)
		// The bound: the input and the limit, plus the state of a
		// decompressor made anew after a collection emptied its pool, whose
		// zstd window ring the frame's declared window sizes, up to
		// codec.MaxZstdWindow (codec's package doc), and 4 MiB of slack
		// for the rest (lz4 block buffers, the fuzz engine's own).
		if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > uint64(16*len(in)+8*fuzzLimit+codec.MaxZstdWindow+(4<<20)) {
			t.Fatalf("%d bytes allocated for a %d-byte batch", grew, len(in))
		}
		if cap(p.val.buf) > fuzzLimit+1 {
			t.Fatalf("scratch buffer %d bytes, limit %d", cap(p.val.buf), fuzzLimit)
		}
		if !bytes.Equal(in, orig) {
			t.Fatal("caller's batch was modified")
		}
		if want.code != nil {
			if !errors.Is(err, want.code) || (want.reason != nil && !errors.Is(err, want.reason)) {
				t.Fatalf("got %v, want %v / %v", err, want.code, want.reason)
			}
			var re *RecordError
			if errors.As(err, &re) && (re.Count != want.count || !slices.Equal(re.Indexes, want.indexes)) {
				t.Fatalf("indexes %v count %d, want %v count %d", re.Indexes, re.Count, want.indexes, want.count)
			}
			if p.LogEndOffset() != leo {
				t.Fatal("rejected batch written")
			}
			return
		}
		if err != nil {
			t.Fatalf("rejected: %v (reference accepts)", err)
		}
		out, err := p.Read(res.FirstOffset, 1)
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := codec.Next(out)
		if err != nil || s.VerifyCRC() != nil {
			t.Fatalf("stored batch: %v / %v", err, s.VerifyCRC())
		}
		if !want.rebuilt {
			if !bytes.Equal(s[codec.CRCStart:], want.inPlace) {
				t.Fatalf("stored %x\nwant   %x", s[codec.CRCStart:], want.inPlace)
			}
			return
		}
		if s.Attributes() != want.attrs || s.BaseTimestamp() != want.baseTS || s.MaxTimestamp() != want.maxTS ||
			s.ProducerID() != -1 || s.BaseSequence() != codec.Batch(in).BaseSequence() ||
			s.ProducerEpoch() != codec.Batch(in).ProducerEpoch() || int(s.RecordsCount()) != len(want.records) {
			t.Fatalf("rebuilt header %+v, want attrs %#x base %d max %d", s.Header(), want.attrs, want.baseTS, want.maxTS)
		}
		got := recordsOf(t, s)
		for i, r := range got {
			w := want.records[i]
			if r.OffsetDelta != w.OffsetDelta || r.TimestampDelta != w.TimestampDelta || r.Attributes != 0 ||
				!bytes.Equal(r.Key, w.Key) || (r.Key == nil) != (w.Key == nil) ||
				!bytes.Equal(r.Value, w.Value) || (r.Value == nil) != (w.Value == nil) ||
				!bytes.Equal(r.Headers.Raw(), w.Headers.Raw()) || r.Headers.Len() != w.Headers.Len() {
				t.Fatalf("rebuilt record %d: %+v, want %+v", i, r, w)
			}
		}
	})
}
