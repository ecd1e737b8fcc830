package codec

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime/metrics"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
)

// Fuzz targets for every decoder. Seeds: the corpus segments (real kgo and
// sarama batches, every codec, and the malformed cases) and builder output.
// Crashers found go under testdata/fuzz/FuzzX/ with descriptive names.

// seedBatches returns single batches from the corpus and the builder.
func seedBatches(t testing.TB) [][]byte {
	var out [][]byte
	for _, seg := range corpusSeeds(t) {
		for rest := seg; len(rest) > 0; {
			b, r, err := Next(rest)
			if err != nil {
				out = append(out, rest) // a defective tail is a seed too
				break
			}
			out = append(out, b)
			rest = r
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for _, c := range allCodecs {
		raw, _ := AppendBatch(nil, BatchHeader{ProducerID: 3}, randomRecords(rng, 6, 40), c)
		out = append(out, raw)
	}
	out = append(out, AppendEndTxnMarker(nil, 5, 1, 2, true, 3), AppendBarrier(nil, 4, "src", 5))
	return out
}

// repairedFuzzMax bounds a FuzzParseRepaired input. The decompression cap
// scales with the input (64 bytes out per byte in), and so does the cost of
// the walks and the re-encoding behind it: at 4 KiB an input decodes at most
// 260 KiB, room for two LZ4 blocks and several snappy chunks.
const repairedFuzzMax = 4 << 10

// smallSeedBatches returns FuzzParseRepaired's seeds, one thing each: from
// every corpus segment its first batch of each kind (codec, control,
// transactional) and every defective tail, within max bytes; the builder's
// batches; and per codec a compressible batch whose records span more than
// one LZ4 block and snappy chunk in a few hundred bytes.
func smallSeedBatches(t testing.TB, max int) [][]byte {
	type kind struct {
		c        Compression
		ctl, txn bool
	}
	var out [][]byte
	for _, seg := range corpusSeeds(t) {
		seen := map[kind]bool{}
		for rest := seg; len(rest) > 0; {
			b, r, err := Next(rest)
			if err != nil {
				if len(rest) <= max {
					out = append(out, rest)
				}
				break
			}
			rest = r
			k := kind{b.Compression(), b.IsControl(), b.Attributes().Transactional()}
			if !seen[k] && len(b) <= max {
				seen[k] = true
				out = append(out, b)
			}
		}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	// 4 KiB values, 128 random bytes then a run: compressible enough to fit
	// max, not so much that the input's decompression cap (64 bytes per
	// byte) refuses them. 17 of them pass an LZ4 block, 9 a snappy chunk.
	recs := make([]Record, 17)
	for i := range recs {
		v := bytes.Repeat([]byte{'a' + byte(i%26)}, 4<<10)
		fill(rng, v[:128])
		recs[i] = Record{OffsetDelta: int32(i), Key: []byte("k"), Value: v}
	}
	for _, c := range allCodecs {
		raw, _ := AppendBatch(nil, BatchHeader{ProducerID: 3}, randomRecords(rng, 6, 40), c)
		out = append(out, raw)
		n := len(recs)
		if c == CompressionSnappy {
			n = 9
		}
		if c != CompressionNone {
			big, err := AppendBatch(nil, BatchHeader{ProducerID: 3}, recs[:n], c)
			if err != nil || len(big) > max || 64*len(big)+4096 < n*(4<<10) {
				t.Fatalf("%v: a multi-block seed of %d bytes does not fit: %v", c, len(big), err)
			}
			out = append(out, big)
		}
	}
	return append(out, AppendEndTxnMarker(nil, 5, 1, 2, true, 3), AppendBarrier(nil, 4, "src", 5))
}

// repair makes data a well-framed batch with a valid CRC: batchLength set
// from the length, magic 2, CRC recomputed. Inputs shorter than a header are
// padded.
func repair(data []byte) Batch {
	b := make([]byte, max(len(data), HeaderSize))
	copy(b, data)
	be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
	b[OffMagic] = MagicV2
	bb := Batch(b)
	bb.UpdateCRC()
	return bb
}

// fuzzSlack is the decompressors' own state a call may allocate when a pool
// is empty (zstd window and lz4 block buffers), on top of the output.
const fuzzSlack = 24 << 20

// FuzzParseRepaired repairs length and CRC so that mutations reach the record
// decoder and the decompressors. Properties: no panic; allocation bounded by
// the decompression cap (which scales with the input); when the records read,
// re-encoding and decoding them again gives the same records, and the kmsg
// reference agrees.
func FuzzParseRepaired(f *testing.F) {
	for _, s := range smallSeedBatches(f, repairedFuzzMax) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > repairedFuzzMax {
			data = data[:repairedFuzzMax]
		}
		b := repair(data)
		if _, err := ParseBatch(b); err != nil {
			t.Fatalf("repaired batch does not parse: %v", err)
		}
		if err := b.VerifyCRC(); err != nil {
			t.Fatal("repaired CRC does not verify")
		}
		limit := 64*len(b) + 4096
		before := allocatedBytes()
		_, err := b.Check(nil, limit)
		if alloc := allocatedBytes() - before; alloc > uint64(3*limit+fuzzSlack) {
			t.Fatalf("%d bytes allocated for %d input bytes (cap %d)", alloc, len(b), limit)
		}
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("error %v does not match ErrCorruption", err)
			}
			return
		}
		it, section, err := b.OpenRecords(nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		if b.Compression() == CompressionNone {
			section = b[HeaderSize:]
		}
		recs, err := walkAll(it)
		if err != nil {
			t.Fatalf("Check accepted, walk failed: %v", err)
		}
		if err := compareWalks(section, b.RecordsCount()); err != nil {
			t.Fatal(err)
		}
		again, err := AppendBatch(nil, b.Header(), recs, CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		recs2, err := walkAll(Batch(again).Records())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			recs = nil
		}
		if !reflect.DeepEqual(normalize(recs), normalize(recs2)) {
			t.Fatal("decode(encode(decode(x))) != decode(x)")
		}
	})
}

// normalize drops the one thing re-encoding may change: nothing today, but
// a record count of 0 decodes to nil either way.
func normalize(r []Record) []Record {
	if len(r) == 0 {
		return nil
	}
	return r
}

// FuzzParseRaw keeps the raw framing and CRC so that the rejection paths are
// exercised: no panic, every error classified, positions increasing.
func FuzzParseRaw(f *testing.F) {
	for _, s := range corpusSeeds(f) {
		f.Add(s)
	}
	for _, s := range seedBatches(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data, 100)
		last := int64(-1)
		var buf []byte
		for {
			b, pos, err := r.Next()
			if err == io.EOF {
				break
			}
			if pos <= last || pos < 100 {
				t.Fatalf("position %d after %d", pos, last)
			}
			last = pos
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Pos != pos || !(errors.Is(err, ErrCorruption) || errors.Is(err, ErrPartial)) {
					t.Fatalf("unclassified error %v", err)
				}
				if b == nil {
					continue
				}
			}
			if _, perr := ParseBatch(b); perr != nil {
				t.Fatalf("framed batch fails ParseBatch: %v", perr)
			}
			if buf, err = b.Check(buf, 1<<20); err != nil && !errors.Is(err, ErrCorruption) {
				t.Fatalf("Check: unclassified %v", err)
			}
			if b.IsControl() {
				if _, err := b.ControlRecord(); err != nil && !errors.Is(err, ErrCorruption) &&
					!errors.Is(err, ErrNoRecords) && !errors.Is(err, ErrCompressed) {
					t.Fatalf("ControlRecord: unclassified %v", err)
				}
			}
		}
		if _, err := ParseBatch(data); err == nil {
			if b, _, err := Next(data); err != nil || len(b) != len(data) {
				t.Fatalf("ParseBatch accepts what Next does not: %v", err)
			}
		}
	})
}

// FuzzControlValues feeds every control and mirror-state decoder. Accepted
// values must re-encode to something that decodes to the same value, and
// values built from the other arguments must round trip.
func FuzzControlValues(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1}, "abc", int64(1), int64(2), int16(0))
	f.Add(MirrorPidReset{SourceClusterID: "lkc-abc"}.AppendTo(nil), "", int64(-1), int64(0), int16(3))
	f.Add(MirrorPidReset{SourceAbsent: true}.AppendTo(nil), "", int64(0), int64(0), int16(2))
	f.Add(MirrorPidCollisionKey{Partition: 3, SourceClusterID: "x", OriginalPID: 9}.AppendTo(nil), "é", int64(0), int64(0), int16(0))
	f.Add(MirrorPidCollisionValue{Salt: 5, CollidingClusterID: "yy", TimestampMs: 7}.AppendTo(nil), "z", int64(5), int64(7), int16(1))
	f.Add(EndTxnMarker{CoordinatorEpoch: 5}.AppendTo(nil), "q", int64(0), int64(0), int16(-1))
	f.Add([]byte{0, 0, 4, 'a', 'b', 'c', 2, 1, 2, 0xaa, 0xbb, 5, 0}, "", int64(0), int64(0), int16(0))
	f.Fuzz(func(t *testing.T, data []byte, s string, n1, n2 int64, v int16) {
		mustCtl := func(err error) {
			if err != nil && !errors.Is(err, ErrBadControl) {
				t.Fatalf("error %v is not ErrBadControl", err)
			}
		}
		if ver, typ, err := ParseControlKey(data); err == nil {
			if ver < 0 || ControlType(be.Uint16(data[2:])) != typ {
				t.Fatal("key fields")
			}
		} else {
			mustCtl(err)
		}
		if m, err := ParseEndTxnMarker(data); err == nil {
			if got, err := ParseEndTxnMarker(m.AppendTo(nil)); err != nil || got != m {
				t.Fatalf("marker round trip %+v %+v %v", m, got, err)
			}
		} else {
			mustCtl(err)
		}
		if m, err := ParseMirrorPidReset(data); err == nil {
			if got, err := ParseMirrorPidReset(m.AppendTo(nil)); err != nil || got != m {
				t.Fatalf("barrier round trip %+v %+v %v", m, got, err)
			}
		} else {
			mustCtl(err)
		}
		if k, err := ParseMirrorPidCollisionKey(data); err == nil {
			if !bytes.Equal(k.AppendTo(nil), data) {
				t.Fatal("collision key does not re-encode to its bytes")
			}
		} else {
			mustCtl(err)
		}
		if val, err := ParseMirrorPidCollisionValue(data); err == nil {
			if got, err := ParseMirrorPidCollisionValue(val.AppendTo(nil)); err != nil || got != val {
				t.Fatalf("collision value round trip %+v %+v %v", val, got, err)
			}
		} else {
			mustCtl(err)
		}
		// Built values round trip.
		if v >= 0 {
			m := MirrorPidReset{Version: v, SourceClusterID: s}
			if got, err := ParseMirrorPidReset(m.AppendTo(nil)); err != nil || got != m {
				t.Fatalf("built barrier %+v -> %+v %v", m, got, err)
			}
			m = MirrorPidReset{Version: v, SourceAbsent: true}
			if got, err := ParseMirrorPidReset(m.AppendTo(nil)); err != nil || got != m {
				t.Fatalf("built barrier %+v -> %+v %v", m, got, err)
			}
			e := EndTxnMarker{Version: v, CoordinatorEpoch: int32(n1)}
			if got, err := ParseEndTxnMarker(e.AppendTo(nil)); err != nil || got != e {
				t.Fatalf("built marker %+v -> %+v %v", e, got, err)
			}
		}
		if len(s) <= 32767 {
			k := MirrorPidCollisionKey{Partition: int32(n2), SourceClusterID: s, OriginalPID: n1}
			copy(k.TopicID[:], data)
			if got, err := ParseMirrorPidCollisionKey(k.AppendTo(nil)); err != nil || got != k {
				t.Fatalf("built key %+v -> %+v %v", k, got, err)
			}
		}
		cv := MirrorPidCollisionValue{Salt: n1, CollidingClusterID: s, TimestampMs: n2}
		if got, err := ParseMirrorPidCollisionValue(cv.AppendTo(nil)); err != nil || got != cv {
			t.Fatalf("built value %+v -> %+v %v", cv, got, err)
		}
		// The barrier batch carries the value the same way.
		bb := Batch(AppendBarrier(nil, int32(n2), s, n1))
		c, err := bb.ControlRecord()
		if err != nil || c.Type != ControlMirrorPidReset || bb.VerifyCRC() != nil {
			t.Fatalf("barrier batch: %+v %v", c, err)
		}
		if m, err := ParseMirrorPidReset(c.Value); err != nil || m.SourceClusterID != s {
			t.Fatalf("barrier batch value: %+v %v", m, err)
		}
		// And the form without SourceClusterId.
		nb := Batch(AppendBarrierNoSource(nil, int32(n2), n1))
		c, err = nb.ControlRecord()
		if err != nil || c.Type != ControlMirrorPidReset || nb.VerifyCRC() != nil || nb.PartitionLeaderEpoch() != int32(n2) {
			t.Fatalf("barrier batch without source: %+v %v", c, err)
		}
		if m, err := ParseMirrorPidReset(c.Value); err != nil || m != (MirrorPidReset{SourceAbsent: true}) {
			t.Fatalf("barrier batch value without source: %+v %v", m, err)
		}
	})
}

// FuzzRecordsVsKmsg compares our iterator with the reference walk (Kafka's
// checks written with encoding/binary, values from kmsg.Record.ReadFrom) on
// accept/reject, on where iteration stops and on every record's contents.
func FuzzRecordsVsKmsg(f *testing.F) {
	for _, s := range seedBatches(f) {
		if b, err := ParseBatch(s); err == nil && b.Compression() == CompressionNone {
			f.Add([]byte(b[HeaderSize:]), b.RecordsCount())
		}
	}
	for _, tc := range recordErrCases {
		f.Add(testhex.Unhex(f, tc.hex), tc.count)
	}
	f.Fuzz(func(t *testing.T, records []byte, count int32) {
		if err := compareWalks(records, count); err != nil {
			t.Fatal(err)
		}
	})
}

// allocatedBytes is the process's cumulative heap allocation; unlike
// runtime.ReadMemStats it does not stop the world.
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// FuzzDecompress compares the bounded decompressors with references: a
// literal simulation of Java's GZIPInputStream buffer over the standard
// library's inflater for gzip (an independent implementation), separate
// readers of Kafka's rules for snappy xerial framing and the LZ4 frame, and
// the library's plain reader for zstd. Whatever the reference produces within limit we
// must produce byte for byte; beyond limit we must fail with
// ErrDecompressionLimit; where it fails, we must fail.
func FuzzDecompress(f *testing.F) {
	for _, s := range seedBatches(f) {
		if b, err := ParseBatch(s); err == nil && b.Compression() != CompressionNone {
			f.Add([]byte(b[HeaderSize:]), uint8(b.Compression()), uint32(1<<20))
			f.Add([]byte(b[HeaderSize:]), uint8(b.Compression()), uint32(100))
		}
	}
	f.Fuzz(func(t *testing.T, section []byte, codec uint8, limit32 uint32) {
		c := Compression(codec % 5)
		if c == CompressionNone {
			return
		}
		limit := int(limit32 % (4 << 20))
		h, _ := AppendBatch(nil, BatchHeader{}, nil, CompressionNone)
		b := Batch(append(h, section...))
		be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
		b.SetAttributes(Attributes(c))
		got, err := Decompress(nil, b, limit)
		want, rerr := refDecompress(c, section, limit)
		switch {
		case rerr == nil && len(want) <= limit:
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%v: reference gives %d bytes, ours %d bytes, %v", c, len(want), len(got), err)
			}
		case rerr == nil:
			// Past the limit. A stream that decodes whole must be refused for
			// the limit; one that breaks later may be refused for either
			// reason, depending on how far each decoder reads ahead.
			const fullCap = 8 << 20
			full, ferr := refDecompress(c, section, fullCap)
			whole := ferr == nil && len(full) <= fullCap
			switch {
			case err == nil:
				t.Fatalf("%v: reference exceeds limit %d, ours accepts %d bytes", c, limit, len(got))
			case whole && !errors.Is(err, ErrDecompressionLimit):
				t.Fatalf("%v: valid stream of %d bytes over limit %d, ours: %v", c, len(full), limit, err)
			case !errors.Is(err, ErrDecompressionLimit) && !errors.Is(err, ErrCorruption):
				t.Fatalf("%v: unclassified %v", c, err)
			}
		default:
			if err == nil {
				t.Fatalf("%v: reference fails (%v), ours gives %d bytes", c, rerr, len(got))
			}
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("%v: unclassified %v", c, err)
			}
		}
	})
}
