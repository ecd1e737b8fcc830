package appendpath

import (
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
	"github.com/mirrorpath/mirrorpath/pid"
)

// The append paths allocate nothing per batch once the log's recycled
// segments and the producer tables have grown (rolls included: the runs
// below cross several segment boundaries).
func TestAppendAllocs(t *testing.T) {
	for _, st := range benchStrategies {
		for _, fix := range []pid.CRCFix{pid.Full, pid.Patch} {
			if !st.s.Rewrites() && fix == pid.Patch {
				continue
			}
			t.Run("mirrored/"+st.name+"/"+fix.String(), func(t *testing.T) {
				in := benchBatch(t, 10, 88)
				ring := newPIDRing(in, 100)
				p := benchPartition(t, st.s, fix, len(in))
				warm(t, p, in, &ring)
				i := 0
				allocs := testing.AllocsPerRun(5000, func() {
					ring.set(in, i%100)
					i++
					if _, err := p.AppendMirrored(in, srcA); err != nil {
						t.Fatal(err)
					}
				})
				if allocs != 0 {
					t.Fatalf("%v allocs per append", allocs)
				}
				if p.log.Start() == 0 {
					t.Fatal("the runs did not roll the log")
				}
			})
		}
	}
	// A chunk of many batches (a mirror fetch), of one producer's batches
	// and of many producers', as-is and mapped.
	for _, c := range []struct {
		sh           benchShape
		n, producers int
	}{{benchShapes[0], 64, 4}, {benchShapes[0], 64, 64}, {benchShapes[1], 16, 16}} {
		for _, st := range fetchStrategies {
			t.Run("chunk/"+st.name+"/"+c.sh.name+"x"+strconv.Itoa(c.n)+"/producers="+strconv.Itoa(c.producers), func(t *testing.T) {
				fetch := fetchOf(t, c.sh, c.n, c.producers)
				p := benchPartition(t, st.s, st.fix, len(fetch))
				appendOne := func() {
					if _, err := p.AppendMirrored(fetch, srcA); err != nil {
						t.Fatal(err)
					}
				}
				for range 4 * benchSegmentBytes(len(fetch)) / int64(len(fetch)) {
					appendOne()
				}
				if allocs := testing.AllocsPerRun(1000, appendOne); allocs != 0 {
					t.Fatalf("%v allocs per chunk", allocs)
				}
				if p.log.Start() == 0 {
					t.Fatal("the runs did not roll the log")
				}
			})
		}
	}
	t.Run("client", func(t *testing.T) {
		in := benchBatch(t, 10, 88)
		p := mustOpen(t, Config{SegmentBytes: 64 << 10, RetainSegments: 1, SkipRollSnapshots: true})
		appendOne := clientAppender(t, p, in, 10)
		for range 1000 {
			appendOne()
		}
		if allocs := testing.AllocsPerRun(2000, appendOne); allocs != 0 {
			t.Fatalf("%v allocs per append", allocs)
		}
		// A duplicate answer allocates nothing either.
		if allocs := testing.AllocsPerRun(100, func() {
			if r, err := p.AppendClient(in); err != nil || !r.Duplicate {
				t.Fatal(r, err)
			}
		}); allocs != 0 {
			t.Fatalf("%v allocs per duplicate", allocs)
		}
	})
	// LogValidator's record walk: compressed batches decompress into the
	// partition's reused scratch buffer; a LogAppendTime stamp or a
	// maxTimestamp fix patches the staged copy; the clock is read once.
	for _, c := range []struct {
		name  string
		cfg   Config
		codec codec.Compression
		maxTS int64 // header maxTimestamp the producer sends; 0: the records' max
	}{
		{"client/codec=gzip", Config{}, codec.CompressionGzip, 0},
		{"client/codec=snappy", Config{}, codec.CompressionSnappy, 0},
		{"client/codec=lz4", Config{}, codec.CompressionLZ4, 0},
		{"client/codec=zstd", Config{}, codec.CompressionZstd, 0},
		{"client/timestamp=LogAppendTime/codec=zstd", Config{TimestampType: LogAppendTime}, codec.CompressionZstd, 0},
		{"client/timestamp=window/compacted", Config{TimestampBeforeMaxMs: 1 << 40, TimestampAfterMaxMs: 3600000,
			Compacted: true}, codec.CompressionNone, 0},
		{"client/timestamp=fixed-max", Config{}, codec.CompressionNone, vBase + 1e6},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.codec != codec.CompressionNone && invariants.RaceEnabled {
				t.Skip("-race: sync.Pool drops a share of Puts, and codec pools its decompressors")
			}
			h := vHeader(0)
			h.MaxTimestamp = c.maxTS
			in := vBatch(t, h, vRecs(10), c.codec)
			cfg := c.cfg
			cfg.SegmentBytes, cfg.RetainSegments, cfg.SkipRollSnapshots = 64<<10, 1, true
			p := mustOpen(t, cfg)
			appendOne := clientAppender(t, p, in, 10)
			for range 1000 {
				appendOne()
			}
			if allocs := testing.AllocsPerRun(2000, appendOne); allocs != 0 {
				t.Fatalf("%v allocs per append", allocs)
			}
			s := codec.Batch(readAll(t, p)[0])
			wantTS := int64(vBase + 9)
			if c.cfg.TimestampType == LogAppendTime {
				wantTS = testNow().UnixMilli()
			}
			if s.MaxTimestamp() != wantTS || s.Attributes().LogAppendTime() != (c.cfg.TimestampType == LogAppendTime) {
				t.Fatalf("stored header %+v: the stamp or fix was not applied", s.Header())
			}
		})
	}
	t.Run("replica", func(t *testing.T) {
		in := benchBatch(t, 10, 88)
		p := mustOpen(t, Config{SegmentBytes: 64 << 10, RetainSegments: 1, SkipRollSnapshots: true})
		next := int64(0)
		appendOne := func() {
			codec.Batch(in).SetBaseOffset(next)
			next += 10
			if _, err := p.AppendReplica(in); err != nil {
				t.Fatal(err)
			}
		}
		for range 1000 {
			appendOne()
		}
		if allocs := testing.AllocsPerRun(2000, appendOne); allocs != 0 {
			t.Fatalf("%v allocs per append", allocs)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		in := benchBatch(t, 10, 88)
		p := mustOpen(t, Config{})
		codec.Batch(in).SetBaseSequence(5) // out of order for a known producer
		good := benchBatch(t, 10, 88)
		if _, err := p.AppendClient(good); err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(1000, func() {
			if _, err := p.AppendClient(in); err == nil {
				t.Fatal("accepted")
			}
		}); allocs != 0 {
			t.Fatalf("%v allocs per rejection", allocs)
		}
	})
}

// clientAppender returns a function that appends in (a batch of records
// records from one producer) to p as CLIENT, moving its base sequence on
// each time (an O(1) CRC patch of the input) so that no append is a
// duplicate.
func clientAppender(t testing.TB, p *Partition, in []byte, records int32) func() {
	seq := int32(0)
	return func() {
		codec.Batch(in).SetBaseSequence(seq)
		seq += records
		if _, err := p.AppendClient(in); err != nil {
			t.Fatal(err)
		}
	}
}
