package appendpath

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/cputime"
	"github.com/mirrorpath/mirrorpath/internal/hostspeed"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

// benchShape is a test batch of records records of value bytes each.
type benchShape struct {
	name    string
	records int
	value   int
}

// Batch shapes (docs/measuring.md): one small record, 1 KiB, 16 KiB (the
// producer's batch.size), 1 MiB (max.message.bytes). Sizes are approximate
// and odd, as real batches are.
var benchShapes = []benchShape{
	{"100B", 1, 20},
	{"1KiB", 10, 88},
	{"16KiB", 129, 113},
	{"1MiB", 1000, 1034},
}

// benchStrategies: asis is the byte-preserving path of verbatim and barrier.
var benchStrategies = []struct {
	name string
	s    pid.Strategy
}{
	{"asis", pid.Verbatim},
	{"negate", pid.Negate},
	{"negate-skip", pid.NegateSkip},
	{"bitfield", pid.Bitfield},
	{"barrier", pid.Barrier},
}

func benchBatch(tb testing.TB, records, value int) []byte {
	return mkBatch(tb, bspec{PID: 0, Seq: 0, Records: records, Value: value})
}

// pidRing holds, per producer, the producerId and the CRC the batch has with
// it, so that a benchmark can switch the producer of its input batch with two
// stores instead of a CRC pass.
type pidRing struct {
	pids []int64
	crcs []uint32
}

func newPIDRing(b codec.Batch, n int) pidRing {
	r := pidRing{pids: make([]int64, n), crcs: make([]uint32, n)}
	c := codec.Batch(append([]byte(nil), b...))
	for i := range n {
		c.SetProducerID(int64(1000 + i)) // O(1) CRC patch
		r.pids[i], r.crcs[i] = c.ProducerID(), c.CRC()
	}
	return r
}

// set gives b the i-th producer (producerId and matching CRC).
func (r *pidRing) set(b []byte, i int) {
	binary.BigEndian.PutUint64(b[codec.OffProducerID:], uint64(r.pids[i]))
	binary.BigEndian.PutUint32(b[codec.OffCRC:], r.crcs[i])
}

// benchPartition is an in-memory mirror whose log recycles its segments, so
// the benchmark measures the path and not the garbage collector.
func benchPartition(tb testing.TB, s pid.Strategy, fix pid.CRCFix, batchSize int) *Partition {
	return mustOpen(tb, Config{
		State: Mirroring, Strategy: s, CRCFix: fix, MirrorOffsets: AssignOffsets,
		SegmentBytes: benchSegmentBytes(batchSize), RetainSegments: 1, SkipRollSnapshots: true,
		PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne},
	})
}

func benchSegmentBytes(batchSize int) int64 { return int64(max(256<<10, 4*batchSize)) }

// warm appends until every segment buffer the recycled log will use has been
// allocated and touched (RetainSegments+2 rolls), and every producer is known.
func warm(tb testing.TB, p *Partition, in []byte, ring *pidRing) {
	n := len(ring.pids)
	rounds := max(n, int(4*benchSegmentBytes(len(in))/int64(len(in))))
	for i := range rounds {
		ring.set(in, i%n)
		if _, err := p.AppendMirrored(in, srcA); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkAppend measures AppendMirrored of one batch per call: CRC check,
// strategy (PID rewrite with the CRC fix), offset assignment, producer state
// (REPLICATION rules), copy into the log. The strategies of one batch shape
// and producer count run back to back, so that their ratios come from the
// same minute of a shared machine; cpu-ns/op (process CPU time) is reported
// beside the wall time, which includes time spent descheduled.
func BenchmarkAppend(b *testing.B) {
	for _, sh := range benchShapes {
		for _, producers := range []int{1, 1000, 1000000} {
			if producers == 1000000 && sh.records > 10 {
				continue // a million producers cannot each see a batch of this size in a short run
			}
			for _, st := range benchStrategies {
				fixes := []string{"full", "patch"}
				if !st.s.Rewrites() {
					fixes = []string{"none"}
				}
				for _, fixName := range fixes {
					fix := pid.Full
					if fixName == "patch" {
						fix = pid.Patch
					}
					name := "strategy=" + st.name + "/crc=" + fixName + "/batch=" + sh.name + "/producers=" + strconv.Itoa(producers)
					b.Run(name, func(b *testing.B) {
						in := benchBatch(b, sh.records, sh.value)
						ring := newPIDRing(in, producers)
						p := benchPartition(b, st.s, fix, len(in))
						warm(b, p, in, &ring)
						b.SetBytes(int64(len(in)))
						b.ReportAllocs()
						i := 0
						cpu := cputime.Process()
						for b.Loop() {
							if producers > 1 {
								ring.set(in, i)
								if i++; i == producers {
									i = 0
								}
							}
							if _, err := p.AppendMirrored(in, srcA); err != nil {
								b.Fatal(err)
							}
						}
						cputime.Report(b, cpu)
					})
				}
			}
		}
	}
}

// BenchmarkLimit is the physical limit of the as-is path (docs/measuring.md):
// one CRC-32C pass over batch[21:] plus one copy of the batch, measured in
// the same process as BenchmarkAppend.
func BenchmarkLimit(b *testing.B) { benchLimit(b, limitTwoPass) }

// BenchmarkLimitFused is BenchmarkLimit done in one pass: the CRC-32C of
// batch[21:] computed while the batch is copied (codec.ChecksumCopy, what the
// append path does for replicated batches of fuseMin bytes or more). Below
// BenchmarkLimit from 1 KiB up; the difference to BenchmarkAppend is what
// the path adds to its own copy.
func BenchmarkLimitFused(b *testing.B) { benchLimit(b, limitFused) }

// BenchmarkLimitLocked is BenchmarkLimit inside an uncontended sync.Mutex, as
// every Partition method runs inside the partition's: the floor of an append
// of one batch per call that is safe for concurrent use, before any framing,
// producer state or log bookkeeping. Its difference to BenchmarkLimit is what
// the lock's two locked instructions cost beside the work (results/
// appendpath.md, "The floor of a 100-byte append").
func BenchmarkLimitLocked(b *testing.B) { benchLimit(b, limitLocked) }

// limitMode is the work of one iteration of a limit benchmark, into a hot
// buffer (benchLimit) or the ring (benchRing).
type limitMode int

const (
	limitTwoPass limitMode = iota // CRC pass, then the copy
	limitFused                    // CRC and copy in one pass
	limitLocked                   // limitTwoPass under a mutex (hot buffer)
	limitCopy                     // the copy alone (ring)
)

// benchLimit is the limit's loop into one hot buffer. The mode is a branch
// that goes the same way every time.
func benchLimit(b *testing.B, mode limitMode) {
	for _, sh := range benchShapes {
		b.Run("batch="+sh.name, func(b *testing.B) {
			in, dst := hostspeed.LimitBuffers(benchBatch(b, sh.records, sh.value))
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			runtime.GC() // the setup's garbage is not the loop's
			var mu sync.Mutex
			var sink uint32
			cpu := cputime.Process()
			for b.Loop() {
				switch mode {
				case limitFused:
					copy(dst[:codec.CRCStart], in)
					sink += codec.ChecksumCopy(dst[codec.CRCStart:], in[codec.CRCStart:])
				case limitLocked:
					mu.Lock()
					sink += codec.Checksum(in[codec.CRCStart:])
					copy(dst, in)
					mu.Unlock()
				default:
					sink += codec.Checksum(in[codec.CRCStart:])
					copy(dst, in)
				}
			}
			cputime.Report(b, cpu)
			if sink == 1 {
				b.Log(sink)
			}
		})
	}
}

// BenchmarkLimitRing is BenchmarkLimit with the copy going where the
// append path's copy goes: successive places of a ring as large as the
// memory log's recycled segment buffers (RetainSegments+2 segments of
// benchSegmentBytes), not one hot buffer. The difference to BenchmarkLimit is
// what a destination that is not in cache costs (read-for-ownership of every
// line, and the source pushed out of L1); the difference to BenchmarkAppend
// is the path's own overhead.
func BenchmarkLimitRing(b *testing.B) { benchRing(b, limitTwoPass) }

// BenchmarkLimitRingFused is BenchmarkLimitRing in one pass: the CRC
// computed while the batch is copied into the ring (codec.ChecksumCopyCold,
// which asks for the ring's lines ahead of its stores), as the append path
// does from fuseMin bytes. Of the limits it is the one that does exactly the
// work the as-is append must do, no less.
func BenchmarkLimitRingFused(b *testing.B) { benchRing(b, limitFused) }

// BenchmarkCopyRing is the copy into the ring alone, no CRC: the floor of
// any append that stores the batch's bytes in the log's memory. Where it is
// above BenchmarkLimit, no such append can come within BenchmarkLimit's
// figure (docs/measuring.md, "The limits").
func BenchmarkCopyRing(b *testing.B) { benchRing(b, limitCopy) }

// benchRing is the loop of the ring benchmarks: each iteration writes the
// batch to the next place of the ring, as the log's appends do. The mode is
// a branch that goes the same way every time.
func benchRing(b *testing.B, mode limitMode) {
	if mode == limitLocked {
		b.Fatal("benchRing: the locked limit runs into a hot buffer only")
	}
	for _, sh := range benchShapes {
		b.Run("batch="+sh.name, func(b *testing.B) {
			in := benchBatch(b, sh.records, sh.value)
			ring := make([]byte, 3*benchSegmentBytes(len(in)))
			for i := range ring {
				ring[i] = 1 // touched, as the log's recycled buffers are
			}
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			var sink uint32
			pos := 0
			cpu := cputime.Process()
			for b.Loop() {
				dst := ring[pos : pos+len(in)]
				switch mode {
				case limitTwoPass:
					sink += codec.Checksum(in[codec.CRCStart:])
					copy(dst, in)
				case limitFused:
					copy(dst[:codec.CRCStart], in)
					sink += codec.ChecksumCopyCold(dst[codec.CRCStart:], in[codec.CRCStart:])
				default: // limitCopy
					copy(dst, in)
				}
				if pos += len(in); pos+len(in) > len(ring) {
					pos = 0
				}
			}
			cputime.Report(b, cpu)
			if sink == 1 {
				b.Log(sink)
			}
		})
	}
}

// BenchmarkAppendFetch measures what a mirror fetch looks like: one
// AppendMirrored call carrying batches=N batches of about 100 bytes (and 16
// of about 1 KiB), each from a different producer. The partition's fixed
// costs (lock, staging, Begin/Commit of producer state, high watermark) are
// paid once per call; cpu-ns/batch is the per-batch figure.
func BenchmarkAppendFetch(b *testing.B) {
	for _, c := range []struct {
		sh benchShape
		n  int
	}{{benchShapes[0], 1}, {benchShapes[0], 8}, {benchShapes[0], 64}, {benchShapes[1], 16}} {
		for _, st := range fetchStrategies {
			b.Run("strategy="+st.name+"/batch="+c.sh.name+"/batches="+strconv.Itoa(c.n), func(b *testing.B) {
				benchFetch(b, st.s, st.fix, c.sh, c.n, c.n)
			})
		}
	}
}

// BenchmarkAppendFetchProducers: BenchmarkAppendFetch's 64 batches of about
// 100 bytes, from 64 producers (one batch each) and from 4 (16 each, in
// turn, each producer's sequences following on): what producer state costs a
// chunk by how many producers share it.
func BenchmarkAppendFetchProducers(b *testing.B) {
	for _, producers := range []int{4, 64} {
		for _, st := range fetchStrategies {
			b.Run("strategy="+st.name+"/batch=100B/batches=64/producers="+strconv.Itoa(producers), func(b *testing.B) {
				benchFetch(b, st.s, st.fix, benchShapes[0], 64, producers)
			})
		}
	}
}

// fetchStrategies are the strategies of the fetch benchmarks: as-is, and
// bitfield with the O(1) CRC patch.
var fetchStrategies = []struct {
	name string
	s    pid.Strategy
	fix  pid.CRCFix
}{{"asis", pid.Verbatim, pid.Full}, {"bitfield", pid.Bitfield, pid.Patch}}

// fetchOf is a chunk of n batches of shape sh, batch j from producer
// 1000 + j mod producers, each producer's sequences following on.
func fetchOf(tb testing.TB, sh benchShape, n, producers int) []byte {
	one := benchBatch(tb, sh.records, sh.value)
	var fetch []byte
	for j := range n {
		c := codec.Batch(append([]byte(nil), one...))
		c.SetProducerID(int64(1000 + j%producers)) // O(1) CRC patch
		c.SetBaseSequence(int32(j / producers * sh.records))
		fetch = append(fetch, c...)
	}
	return fetch
}

// benchFetch appends a chunk of n batches of shape sh, batch j from
// producer 1000 + j mod producers, per AppendMirrored call.
func benchFetch(b *testing.B, s pid.Strategy, fix pid.CRCFix, sh benchShape, n, producers int) {
	fetch := fetchOf(b, sh, n, producers)
	p := benchPartition(b, s, fix, len(fetch))
	for range 4 * benchSegmentBytes(len(fetch)) / int64(len(fetch)) {
		if _, err := p.AppendMirrored(fetch, srcA); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(fetch)))
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		if _, err := p.AppendMirrored(fetch, srcA); err != nil {
			b.Fatal(err)
		}
	}
	if used := cputime.Process() - cpu; b.N > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/batch")
	}
	cputime.Report(b, cpu) // per call, for the report's CPU view
}

// BenchmarkAppendClient measures the leader path of a producer batch: CLIENT
// checks, sequence validation, offset assignment, copy.
func BenchmarkAppendClient(b *testing.B) {
	for _, sh := range benchShapes[:3] {
		b.Run("batch="+sh.name, func(b *testing.B) { benchAppendClient(b, sh, psm.Options{}) })
	}
}

// BenchmarkAppendClientDedup: BenchmarkAppendClient's 1 KiB batch with
// duplicate detection by sequences only (dedup=seq, Kafka's) and with the
// cached batches' CRCs kept and checked (dedup=crc, psm.Options.DedupCRC).
func BenchmarkAppendClientDedup(b *testing.B) {
	sh := benchShapes[1]
	for _, d := range []string{"seq", "crc"} {
		b.Run("dedup="+d+"/batch="+sh.name, func(b *testing.B) {
			benchAppendClient(b, sh, psm.Options{DedupCRC: d == "crc"})
		})
	}
}

// benchAppendClient appends one producer's batches of shape sh through
// AppendClient, each at the next sequence (an O(1) CRC patch of the input),
// after four segments of warm-up so that the timed appends roll and retire
// segments as a long-running partition does.
func benchAppendClient(b *testing.B, sh benchShape, po psm.Options) {
	in := benchBatch(b, sh.records, sh.value)
	p := mustOpen(b, Config{SegmentBytes: benchSegmentBytes(len(in)), RetainSegments: 1, SkipRollSnapshots: true,
		PSMOptions: po})
	seq := int32(0)
	next := func() {
		codec.Batch(in).SetBaseSequence(seq)
		seq = codec.IncrementSequence(seq, int32(sh.records))
		if _, err := p.AppendClient(in); err != nil {
			b.Fatal(err)
		}
	}
	for range 4 * benchSegmentBytes(len(in)) / int64(len(in)) {
		next()
	}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	cpu := cputime.Process()
	for b.Loop() {
		next()
	}
	cputime.Report(b, cpu)
}

// BenchmarkAppendParallel: N goroutines, each appending as-is 16 KiB batches
// to its own partition. Throughput (MB/s) is the total over the partitions.
// The appends are handed out as b.RunParallel does, in small grains to
// whichever goroutine asks, so the figure is what the partitions append
// together while all run; a fixed b.N/N per goroutine would measure the
// slowest CPU instead (on this project's VM one of the two vCPUs runs ~25 %
// slower while both are busy).
func BenchmarkAppendParallel(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run("partitions="+strconv.Itoa(n), func(b *testing.B) {
			sh := benchShapes[2]
			ins := make([][]byte, n)
			parts := make([]*Partition, n)
			for i := range n {
				ins[i] = benchBatch(b, sh.records, sh.value)
				parts[i] = benchPartition(b, pid.Verbatim, pid.Full, len(ins[i]))
				ring := newPIDRing(ins[i], 1)
				warm(b, parts[i], ins[i], &ring)
			}
			b.SetBytes(int64(len(ins[0])))
			b.ReportAllocs()
			var next atomic.Int32
			b.SetParallelism(1) // GOMAXPROCS goroutines ...
			if n > runtime.GOMAXPROCS(0) {
				b.Skipf("%d partitions need GOMAXPROCS >= %d", n, n)
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				// ... of which the first n each take a partition; any others
				// (GOMAXPROCS > n) return at once and leave their share.
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				for pb.Next() {
					if _, err := parts[i].AppendMirrored(ins[i], srcA); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAppendPSM: the as-is 100 B mirrored append with its psm Store,
// every batch from one producer.
func BenchmarkAppendPSM(b *testing.B) {
	for _, name := range []string{"store"} {
		b.Run("psm="+name+"/batch=100B", func(b *testing.B) {
			in := benchBatch(b, 1, 20)
			cfg := Config{State: Mirroring, MirrorOffsets: AssignOffsets, SegmentBytes: benchSegmentBytes(len(in)),
				RetainSegments: 1, SkipRollSnapshots: true, PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne}}
			p := mustOpen(b, cfg)
			ring := newPIDRing(in, 1)
			warm(b, p, in, &ring)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			cpu := cputime.Process()
			for b.Loop() {
				if _, err := p.AppendMirrored(in, srcA); err != nil {
					b.Fatal(err)
				}
			}
			cputime.Report(b, cpu)
		})
	}
}
