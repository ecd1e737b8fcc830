package codec

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/pierrec/lz4/v4"
)

var allCodecs = []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd}

// TestCompressedRoundTrip builds a batch with every codec, decompresses it
// and checks the records against what went in and against the kmsg walk.
func TestCompressedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := randomRecords(rng, 300, 400) // > 32 KiB raw: several xerial chunks
	for _, c := range allCodecs {
		raw, err := AppendBatch(nil, BatchHeader{ProducerID: 7, BaseTimestamp: 1}, recs, c)
		if err != nil {
			t.Fatal(c, err)
		}
		b, err := ParseBatch(raw)
		if err != nil || b.VerifyCRC() != nil || b.Compression() != c {
			t.Fatalf("%v: %v %v", c, err, b.VerifyCRC())
		}
		if err := sameHeaderAsKmsg(b); err != nil {
			t.Fatal(c, err)
		}
		it, buf, err := b.OpenRecords(nil, 1<<20)
		if err != nil {
			t.Fatal(c, err)
		}
		got, err := walkAll(it)
		if err != nil || !reflect.DeepEqual(got, recs) {
			t.Fatalf("%v: records differ (%v)", c, err)
		}
		if c != CompressionNone {
			if err := compareWalks(buf, b.RecordsCount()); err != nil {
				t.Fatal(c, err)
			}
			if _, err := Decompress(buf, b, len(buf)-1); !errors.Is(err, ErrDecompressionLimit) {
				t.Fatalf("%v: limit one below the size: %v", c, err)
			}
			if out, err := Decompress(buf, b, len(buf)); err != nil || len(out) != len(buf) {
				t.Fatalf("%v: limit equal to the size: %v", c, err)
			}
			if out, err := Decompress(nil, b, math.MaxInt); err != nil || len(out) != len(buf) {
				t.Fatalf("%v: limit MaxInt: %v", c, err)
			}
			if _, err := Decompress(nil, b, -5); !errors.Is(err, ErrDecompressionLimit) {
				t.Fatalf("%v: negative limit: %v", c, err)
			}
			if it := b.Records(); !errors.Is(func() error { _, err := it.Next(); return err }(), ErrCompressed) {
				t.Fatalf("%v: Records on a compressed batch", c)
			}
		}
		if _, err := b.Check(nil, 1<<20); err != nil {
			t.Fatal(c, err)
		}
	}
}

// TestSnappyRawAndXerial decodes both snappy framings.
func TestSnappyRawAndXerial(t *testing.T) {
	recs := randomRecords(rand.New(rand.NewPCG(7, 8)), 20, 100)
	var plain []byte
	for _, r := range recs {
		plain = AppendRecord(plain, r)
	}
	rawBlock := snappy.Encode(nil, plain)
	mk := func(section []byte) Batch {
		h, _ := AppendBatch(nil, BatchHeader{}, nil, CompressionNone)
		h = append(h, section...)
		b := Batch(h)
		be.PutUint32(b[OffRecordsCount:], uint32(len(recs)))
		be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
		b.SetAttributes(Attributes(CompressionSnappy))
		b.UpdateCRC()
		return b
	}
	xerial := append(append([]byte{}, xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
	half := len(plain) / 2
	for _, part := range [][]byte{plain[:half], plain[half:]} {
		blk := snappy.Encode(nil, part)
		xerial = be.AppendUint32(xerial, uint32(len(blk)))
		xerial = append(xerial, blk...)
	}
	for name, section := range map[string][]byte{"raw": rawBlock, "xerial": xerial} {
		out, err := Decompress(nil, mk(section), 1<<20)
		if err != nil || !bytes.Equal(out, plain) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, section := range map[string][]byte{
		"xerial header cut":    xerial[:12],
		"xerial chunk overrun": append(bytes.Clone(xerial[:16]), 0, 0, 1, 0, 1, 2),
		"xerial version 0":     append(bytes.Clone(xerial[:8]), 0, 0, 0, 0, 0, 0, 0, 1),
		"raw garbage":          {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := Decompress(nil, mk(section), 1<<20); !errors.Is(err, ErrBadCompression) || !errors.Is(err, ErrCorruption) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// bomb returns n zero bytes compressed with c, raw (no batch).
func bomb(t *testing.T, c Compression, n int) []byte {
	zeros := make([]byte, n)
	var buf bytes.Buffer
	switch c {
	case CompressionGzip:
		w := gzip.NewWriter(&buf)
		w.Write(zeros)
		w.Close()
	case CompressionLZ4:
		w := lz4.NewWriter(&buf)
		w.Write(zeros)
		w.Close()
	case CompressionZstd:
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(zeros, nil)
	case CompressionSnappy:
		return snappy.Encode(nil, zeros)
	}
	return buf.Bytes()
}

// TestDecompressionBomb: 32 MiB of zeros under a 512 KiB cap fails with
// ErrDecompressionLimit, and the bytes allocated stay near the cap (plus the
// decompressors' constant-size state).
// A zstd frame of 40 bytes that declares a 6 MiB window (no content size,
// window descriptor 0x64) and decodes to 106 bytes: a decoder made anew, as
// after a collection empties the pool, allocates its window ring for it,
// MaxZstdWindow at most, whatever the output. Pooled, the next frame costs
// nothing. (FuzzValidateClient found the frame; its allocation bound counts
// the ring since.)
func TestZstdWindowStateBounded(t *testing.T) {
	frame := []byte("(\xb5/\xfd\x04d\x1d\x01\x00\xc2A\x06\r\xd0\x05\x00\xc0i\xc8\x1a \x80\xfe\xa0\xff\x1e\xf2~P\xa8y\xe7{A\xa0F]\x02\x14\x02\"P8\x02YJ\x9c\xc8")
	dst := make([]byte, 0, 1<<10)
	measure := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := unzstd(dst, frame, 64<<10)
		runtime.ReadMemStats(&after)
		if err != nil || len(out) != 106 {
			t.Fatalf("decoded %d bytes, %v", len(out), err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	// No collection but these two: one in between would empty the pool
	// and make the pooled decodes below allocate again.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	runtime.GC() // the pool's victim cache too: the next decoder is new
	fresh := measure()
	if fresh < 6<<20 || fresh > MaxZstdWindow+1<<20 {
		t.Fatalf("a new decoder allocated %d bytes for a 6 MiB window (bound %d)", fresh, MaxZstdWindow+1<<20)
	}
	// Under the race detector sync.Pool drops what it is given at random,
	// so a decode may meet a new decoder: the fresh bound holds each time.
	var warm uint64
	for range 3 {
		warm = measure()
	}
	if warm != 0 && !invariants.RaceEnabled {
		t.Fatalf("a pooled decoder allocated %d bytes for the same frame", warm)
	}
	if warm > MaxZstdWindow+1<<20 {
		t.Fatalf("a decode allocated %d bytes for a 6 MiB window (bound %d)", warm, MaxZstdWindow+1<<20)
	}
}

func TestDecompressionBomb(t *testing.T) {
	const n, limit = 32 << 20, 512 << 10
	for _, c := range allCodecs[1:] {
		section := bomb(t, c, n)
		h, _ := AppendBatch(nil, BatchHeader{}, nil, CompressionNone)
		b := Batch(append(h, section...))
		be.PutUint32(b[OffRecordsCount:], 1)
		be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
		b.SetAttributes(Attributes(c))
		Decompress(nil, b, limit) // warm the pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decompress(nil, b, limit)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrDecompressionLimit) {
			t.Fatalf("%v: %v", c, err)
		}
		// The decompressors' pooled state (lz4 block buffers up to 2 × 4 MiB,
		// the zstd window) is re-allocated when a GC emptied the pool: a
		// constant, far below the 32 MiB the stream would expand to.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*limit+12<<20 {
			t.Errorf("%v: %d bytes allocated for a %d-byte cap (input %d bytes)", c, alloc, limit, len(section))
		}
	}
	// A raw snappy block announcing 2^31 bytes is refused before any output.
	huge := []byte{0x80, 0x80, 0x80, 0x80, 0x08, 0x00}
	h, _ := AppendBatch(nil, BatchHeader{}, nil, CompressionNone)
	b := Batch(append(h, huge...))
	be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
	b.SetAttributes(Attributes(CompressionSnappy))
	if n := testing.AllocsPerRun(10, func() {
		if _, err := Decompress(nil, b, limit); !errors.Is(err, ErrDecompressionLimit) {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("snappy length bomb allocated %v times", n)
	}
}

func TestDecompressErrors(t *testing.T) {
	raw, _ := AppendBatch(nil, BatchHeader{}, randomRecords(rand.New(rand.NewPCG(1, 1)), 5, 50), CompressionNone)
	for _, c := range allCodecs[1:] {
		b := Batch(bytes.Clone(raw))
		b.SetAttributes(Attributes(c)) // plain records read as a compressed stream
		if _, err := Decompress(nil, b, 1<<20); !errors.Is(err, ErrCorruption) {
			t.Errorf("%v over plain bytes: %v", c, err)
		}
	}
	b := Batch(bytes.Clone(raw))
	b.SetAttributes(5)
	if _, err := Decompress(nil, b, 1<<20); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("codec 5: %v", err)
	}
	if _, err := b.Check(nil, 1<<20); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("Check codec 5: %v", err)
	}
}

func TestCheckAllocs(t *testing.T) {
	raw, _ := AppendBatch(nil, BatchHeader{}, randomRecords(rand.New(rand.NewPCG(1, 1)), 129, 100), CompressionNone)
	b := Batch(raw)
	marker := Batch(AppendEndTxnMarker(nil, 1, 1, 1, false, 1))
	barrier := Batch(AppendBarrier(nil, 1, "x", 1))
	if n := testing.AllocsPerRun(50, func() {
		for _, bb := range []Batch{b, marker, barrier} {
			if _, err := bb.Check(nil, 1<<20); err != nil {
				t.Fatal(err)
			}
		}
	}); n != 0 {
		t.Fatalf("Check: %v allocs", n)
	}
}

// TestDecompressAllocs: with a caller buffer of sufficient capacity and warm
// pools, decompressing a batch allocates nothing, for every codec.
func TestDecompressAllocs(t *testing.T) {
	if invariants.RaceEnabled {
		t.Skip("sync.Pool drops items under -race; the allocation gate runs without it")
	}
	recs := randomRecords(rand.New(rand.NewPCG(5, 6)), 100, 100)
	for _, c := range allCodecs[1:] {
		raw, err := AppendBatch(nil, BatchHeader{}, recs, c)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, 1<<20)
		if n := testing.AllocsPerRun(50, func() {
			it, _, err := Batch(raw).OpenRecords(buf, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			var r Record
			k := 0
			for it.Read(&r) == nil {
				k++
			}
			if k != len(recs) {
				t.Fatalf("%d records", k)
			}
		}); n != 0 {
			t.Errorf("%v: %v allocs per decompress+walk", c, n)
		}
	}
}
