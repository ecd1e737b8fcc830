package psm

import (
	"maps"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// Every benchmark runs the Store (impl=store) beside the reference Model
// (impl=model) in the same process, so benchstat -col /impl prints the ratio.

var benchImpls = []string{"store", "model"}

func newImpl(impl string, opts Options) manager {
	switch impl {
	case "store":
		return NewStore(opts)
	case "nop":
		return nopManager{}
	}
	return NewModel(opts)
}

// populate gives partition p n producers, PIDs 0..n-1, each with one batch
// (seq 0, timestamp 1000) at offsets 0..n-1.
func populate(m manager, p PartitionID, n int) {
	const chunk = 10000
	for lo := 0; lo < n; lo += chunk {
		a := m.Begin(p, Replication)
		for pid := lo; pid < min(n, lo+chunk); pid++ {
			b := data(int64(pid), 0, 0, 1)
			b.BaseOffset = int64(pid)
			a.Add(&b)
		}
		a.Commit()
	}
}

var benchSizes = []int{1000, 100000, 1000000}

// visitOrder is a scattered order of n producers: a random permutation
// (fixed seed), computed before the clock starts. A fixed stride through
// the PIDs becomes a fixed stride through
// the slots under a multiplicative hash, which the hardware prefetchers and
// the cache sets react to; updates in production come in no such order.
func visitOrder(n int) []int32 {
	order := make([]int32, n)
	for i, v := range rand.New(rand.NewPCG(uint64(n), 1)).Perm(n) {
		order[i] = int32(v)
	}
	return order
}

// BenchmarkUpdate: one CLIENT append of one batch (Begin, Add, Commit) to a
// partition holding producers entries, each op a different producer: what
// the append path pays, which validates before its log write and commits
// after it. impl=nop is the floor of the API's calls (nopManager), at one
// size.
func BenchmarkUpdate(b *testing.B) { benchUpdate(b, false) }

// BenchmarkUpdateOne: the same update through Manager.Update, one call (what
// recovery pays per batch, and any caller whose log already holds the batch).
func BenchmarkUpdateOne(b *testing.B) { benchUpdate(b, true) }

// BenchmarkUpdateDedup: BenchmarkUpdate on the Store with duplicate
// detection by sequences only (dedup=seq) and with each cached batch's CRC
// kept and checked (dedup=crc, Options.DedupCRC).
func BenchmarkUpdateDedup(b *testing.B) {
	for _, d := range []string{"seq", "crc"} {
		b.Run("dedup="+d, func(b *testing.B) { benchUpdateWith(b, false, Options{DedupCRC: d == "crc"}, []string{"store"}) })
	}
}

func benchUpdate(b *testing.B, one bool) {
	benchUpdateWith(b, one, Options{}, append(benchImpls, "nop"))
}

func benchUpdateWith(b *testing.B, one bool, opts Options, impls []string) {
	for _, impl := range impls {
		for _, n := range benchSizes {
			if impl == "nop" && n != benchSizes[0] {
				continue
			}
			b.Run("impl="+impl+"/producers="+strconv.Itoa(n), func(b *testing.B) {
				m := newImpl(impl, opts)
				if impl != "nop" {
					populate(m, 0, n)
				}
				loop := newUpdateLoop(n)
				// The loop is one goroutine, and runs on one P: with a
				// second, idle P the collector runs idle-priority mark
				// workers on it, whose CPU time depends on whether the
				// machine leaves that P a core. The Store allocates
				// nothing; its loop is the same either way.
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				if impl != "nop" {
					warmUpdates(b, m, loop, n, one)
				}
				// populate's and the warm-up's garbage, and a collection
				// they started that may still be marking, belong to the
				// setup: collected here, before either clock starts (b.Loop
				// resets the timer at its first call).
				runtime.GC()
				b.ReportAllocs()
				start, startGC, startWall := cputime.Process(), gcCPU(), time.Now()
				for b.Loop() {
					benchUpdateOp(b, m, loop.next(), one)
				}
				reportMutatorCPU(b, start, startGC, time.Since(startWall))
			})
		}
	}
}

// warmUpdatesMax is the largest partition warmUpdates brings to its steady
// state before the clock.
const warmUpdatesMax = 100000

// warmUpdates runs the update loop over n producers until each holds
// NumBatchesToRetain batches (populate gives each one), so that every timed
// update is the steady-state one: the Model's entry copies and trims a full
// batch list, where over the first laps it grows one (an update's cost and
// bytes allocated rise lap by lap, and a sample's mix of laps would set its
// figure). Above warmUpdatesMax producers the warm-up would cost seconds per
// sample, and `mirrorpath run` makes at most one lap there (a fixed count of
// updates, docs/measuring.md): every timed update is then a producer's first
// after populate, as steady in its way.
func warmUpdates(b testing.TB, m manager, loop *updateLoop, n int, one bool) {
	if n > warmUpdatesMax {
		return
	}
	for range (NumBatchesToRetain - 1) * n {
		benchUpdateOp(b, m, loop.next(), one)
	}
}

// benchUpdateOp is one producer-state update of bt: Manager.Update when one, else
// Begin, Add, Commit.
func benchUpdateOp(b testing.TB, m manager, bt *Batch, one bool) {
	if one {
		if _, _, err := m.Update(0, Client, bt); err != nil {
			b.Fatal(err)
		}
		return
	}
	a := m.Begin(0, Client)
	if _, err := a.Add(bt); err != nil {
		b.Fatal(err)
	}
	a.Commit()
}

// gcCPU is the runtime's estimate of the time the collector has spent so far
// (runtime/metrics /cpu/classes/gc/total: assists, workers, pauses). The
// runtime updates it at the end of each collection, and measures it in wall
// time: a worker descheduled by the operating system keeps counting.
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * 1e9)
}

// reportMutatorCPU reports the process CPU time of the timed loop without
// the collector's as cpu-ns/op, and the collector's as gc-cpu-ns/op. A
// collection marks the whole live heap: at 100,000 producers and more the
// Model's heap is tens to hundreds of MB, and a sample of 100 ms holds 0, 1
// or a few collections depending on where the allocation crossed the
// trigger, so the collector's share would move a sample's figure by tens of
// per cent for no reason of the code's (docs/measuring.md, "Producer-state
// updates"). What the updates themselves do, allocation included, is the
// mutator's time, the figure the store/model ratio divides; the collector's
// is beside it. The runtime's estimate of the collector's time is wall time
// (gcCPU), so it is scaled by the sample's process CPU time over its wall
// time: a process that the machine's load deschedules is not billed for
// time it did not run. The Store allocates nothing and its two figures are
// its process CPU time and 0.
func reportMutatorCPU(b *testing.B, start, startGC, wall time.Duration) {
	used, gc := cputime.Process()-start, gcCPU()-startGC
	if b.N == 0 || used < 20*time.Millisecond || wall <= 0 {
		return
	}
	if used < wall {
		gc = time.Duration(float64(gc) * float64(used) / float64(wall))
	}
	gc = min(max(gc, 0), used)
	b.ReportMetric(float64((used-gc).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(gc.Nanoseconds())/float64(b.N), "gc-cpu-ns/op")
}

// updateLoop is the state of an update loop over n populated producers:
// each producer's next sequence, the next offset, the order in which the
// loop visits them (visitOrder), and one reused Batch, as an
// allocation-free caller keeps (Appender.Add), of which next writes only
// the per-op fields.
type updateLoop struct {
	seq   []int32
	off   int64
	order []int32
	k     int
	bt    *Batch
}

func newUpdateLoop(n int) *updateLoop {
	l := &updateLoop{seq: make([]int32, n), off: int64(n), order: visitOrder(n), bt: new(Batch)}
	for i := range l.seq {
		l.seq[i] = 1
	}
	*l.bt = data(0, 0, 0, 1)
	l.bt.CRC, l.bt.HasCRC = 0x5eed, true
	return l
}

// next is the batch of the loop's next update: the next producer in the
// visiting order, at its next sequence and the next offset.
func (l *updateLoop) next() *Batch {
	pid := l.order[l.k]
	if l.k++; l.k == len(l.order) {
		l.k = 0
	}
	l.bt.ProducerID, l.bt.BaseSequence, l.bt.BaseOffset = int64(pid), l.seq[pid], l.off
	l.seq[pid]++
	l.off++
	return l.bt
}

// BenchmarkAppendProtocol: the producer-state protocol of appendpath's
// append on the concrete *Store, as appendpath calls it, against the
// one-call Store.Update of the same batch, same partition sizes and visiting
// order as BenchmarkUpdate. protocol=held is appendpath's: the partition's
// Appender (Store.Appender) kept, then Begin, Add and, after the log write,
// Commit. protocol=lookup is the same with BeginAppend per append (the
// partition looked up each time). protocol=update is Store.Update.
// benchstat -col /protocol gives the price of validating before the write
// and committing after it.
func BenchmarkAppendProtocol(b *testing.B) {
	for _, proto := range []string{"held", "lookup", "update"} {
		for _, n := range benchSizes {
			b.Run("protocol="+proto+"/producers="+strconv.Itoa(n), func(b *testing.B) {
				s := NewStore(Options{})
				populate(s, 0, n)
				loop := newUpdateLoop(n)
				app := s.Appender(0)
				held, lookup := proto == "held", proto == "lookup"
				b.ReportAllocs()
				start := cputime.Process()
				for b.Loop() {
					bt := loop.next()
					if held {
						app.Begin(Client)
						if _, err := app.Add(bt); err != nil {
							b.Fatal(err)
						}
						app.Commit()
					} else if lookup {
						a := s.BeginAppend(0, Client)
						if _, err := a.Add(bt); err != nil {
							b.Fatal(err)
						}
						a.Commit()
					} else if _, _, err := s.Update(0, Client, bt); err != nil {
						b.Fatal(err)
					}
				}
				cputime.Report(b, start)
			})
		}
	}
}

// BenchmarkAppendChunk: producer state's part of a mirror fetch of 64 data
// batches, one REPLICATION append (Begin, an Add per batch, Commit) to a
// partition of 1000 producers, batch j from the (j mod producers)-th of
// them (in visitOrder's scattered order); cpu-ns/batch is the per-batch
// figure. begin=chunk begins the append with BeginChunk, as appendpath
// begins a fetch's chunk; begin=plain with Begin.
func BenchmarkAppendChunk(b *testing.B) {
	const n, batches = 1000, 64
	for _, begin := range []string{"plain", "chunk"} {
		for _, producers := range []int{1, 4, 64} {
			b.Run("begin="+begin+"/batches=64/producers="+strconv.Itoa(producers), func(b *testing.B) {
				s := NewStore(Options{})
				populate(s, 0, n)
				pids := visitOrder(n)[:producers]
				chunk := make([]Batch, batches)
				for j := range chunk {
					chunk[j] = data(int64(pids[j%producers]), 0, int32(1+j/producers), 1)
				}
				app := s.Appender(0)
				off := int64(n)
				b.ReportAllocs()
				start := cputime.Process()
				for b.Loop() {
					if begin == "chunk" {
						app.BeginChunk(Replication)
					} else {
						app.Begin(Replication)
					}
					for j := range chunk {
						bt := &chunk[j]
						bt.BaseOffset = off
						off++
						if _, err := app.Add(bt); err != nil {
							b.Fatal(err)
						}
					}
					app.Commit()
				}
				if used := cputime.Process() - start; b.N > 0 {
					b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/batches, "cpu-ns/batch")
				}
				cputime.Report(b, start)
			})
		}
	}
}

// nopManager answers Begin with an Appender that does nothing, and Update
// with nothing done: BenchmarkUpdate and BenchmarkUpdateOne
// with impl=nop measures what the calls themselves cost (the loop, the
// interface dispatch, the Batch pointer passed and the Outcome and Committed
// pointers returned), the floor under any Manager behind this API. Its other methods
// are the nil embedded interface's and panic.
type nopManager struct{ manager }

type nopAppender struct{}

func (nopManager) Begin(PartitionID, Origin) Appender { return nopAppender{} }
func (nopManager) Update(PartitionID, Origin, *Batch) (*Outcome, *Committed, error) {
	return &nopOutcome, &nopCommitted, nil
}
func (nopAppender) SetGuard(Guard)                     {}
func (nopAppender) Add(*Batch) (*Outcome, error)       { return &nopOutcome, nil }
func (nopAppender) Pending(int64) (ProducerInfo, bool) { return ProducerInfo{}, false }
func (nopAppender) Commit() *Committed                 { return &nopCommitted }

var (
	nopOutcome   Outcome
	nopCommitted Committed
)

func (nopAppender) Abort() {}

// BenchmarkUpdateParallel: the same update from GOMAXPROCS goroutines, each
// on its own partition of 1000 producers (one Store shared; one Model per
// goroutine, since the Model is not safe for concurrent use).
func BenchmarkUpdateParallel(b *testing.B) {
	const n = 1000
	for _, impl := range benchImpls {
		b.Run("impl="+impl+"/producers="+strconv.Itoa(n), func(b *testing.B) {
			// One partition per goroutine, populated before the clock starts.
			procs := runtime.GOMAXPROCS(0)
			shared := NewStore(Options{})
			ms := make([]manager, procs)
			for i := range ms {
				ms[i] = shared
				if impl == "model" {
					ms[i] = NewModel(Options{})
				}
				populate(ms[i], PartitionID(i), n)
			}
			var next atomic.Int32
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1) - 1)
				m, p := ms[i], PartitionID(i)
				loop := newUpdateLoop(n)
				for pb.Next() {
					a := m.Begin(p, Client)
					if _, err := a.Add(loop.next()); err != nil {
						b.Error(err)
						return
					}
					a.Commit()
				}
			})
		})
	}
}

// undoReset is a test-only O(1) inverse of Store.Reset on a partition nobody
// wrote to since: it brings the previous generation's entries back.
func (s *Store) undoReset(p PartitionID, count int) {
	sp := s.part(p)
	sp.gen--
	sp.count = count
}

// BenchmarkReset: the barrier on a partition of n producers. The Store's op
// is Reset plus undoReset (both O(1)), so every Reset meets n live entries;
// the Model's entries are put back with the timer stopped.
func BenchmarkReset(b *testing.B) {
	for _, impl := range benchImpls {
		for _, n := range []int{1000, 1000000} {
			b.Run("impl="+impl+"/producers="+strconv.Itoa(n), func(b *testing.B) {
				m := newImpl(impl, Options{})
				populate(m, 0, n)
				b.ReportAllocs()
				if s, ok := m.(*Store); ok {
					start := cputime.Process()
					for b.Loop() {
						s.Reset(0)
						s.undoReset(0, n)
					}
					cputime.Report(b, start)
					if s.ProducerCount(0) != n {
						b.Fatal("undo lost producers")
					}
					return
				}
				md := m.(*Model)
				saved := maps.Clone(md.part(0).producers)
				var cpu time.Duration
				for b.Loop() {
					start := cputime.Process()
					md.Reset(0)
					cpu += cputime.Process() - start
					b.StopTimer()
					maps.Copy(md.part(0).producers, saved)
					b.StartTimer()
				}
				if cpu >= 20*time.Millisecond {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// BenchmarkExpire: the expiration scan over n producers of which none has
// expired (the periodic check's usual case), ProducerStateManagerBench's
// partition sizes.
//
// oldtxns=200: 200 of the producers hold a transaction open since a
// timestamp older than the expiration (they cannot expire): the Store's
// timestamp bounds leave such entries out, so the check stays O(shards).
func BenchmarkExpire(b *testing.B) {
	for _, impl := range benchImpls {
		for _, n := range []int{10000, 100000} {
			for _, forced := range []bool{false, true} {
				name := "impl=" + impl + "/producers=" + strconv.Itoa(n) + "/expired=none"
				if forced {
					name += "/oldtxns=200"
				}
				b.Run(name, func(b *testing.B) {
					m := newImpl(impl, Options{})
					populate(m, 0, n)
					if forced {
						holdOldTxns(m, 0, 200)
					}
					b.ReportAllocs()
					start := cputime.Process()
					for b.Loop() {
						if m.ExpireProducers(0, 2000) != 0 {
							b.Fatal("expired")
						}
					}
					cputime.Report(b, start)
				})
			}
		}
	}
}

// holdOldTxns opens a transaction for PIDs 0..k-1 (populated at seq 0)
// whose timestamp is older than the default expiration at 2000.
func holdOldTxns(m manager, p PartitionID, k int) {
	a := m.Begin(p, Replication)
	for pid := range int64(k) {
		b := txnData(pid, 0, 1, 1)
		b.BaseOffset = 1<<40 + pid
		b.MaxTimestamp = 2000 - DefaultExpirationMs - 1
		a.Add(&b)
	}
	a.Commit()
}

// BenchmarkSnapshotWrite and BenchmarkSnapshotRead: Kafka's snapshot file of
// n producers, encoded to a reused buffer and loaded back.
func BenchmarkSnapshotWrite(b *testing.B) {
	for _, impl := range benchImpls {
		n := 100000
		b.Run("impl="+impl+"/producers="+strconv.Itoa(n), func(b *testing.B) {
			m := newImpl(impl, Options{})
			populate(m, 0, n)
			buf := m.AppendSnapshot(nil, 0)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				buf = m.AppendSnapshot(buf[:0], 0)
			}
			cputime.Report(b, start)
		})
	}
}

func BenchmarkSnapshotRead(b *testing.B) {
	for _, impl := range benchImpls {
		n := 100000
		b.Run("impl="+impl+"/producers="+strconv.Itoa(n), func(b *testing.B) {
			m := newImpl(impl, Options{})
			populate(m, 0, n)
			snap := m.AppendSnapshot(nil, 0)
			b.SetBytes(int64(len(snap)))
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				if err := m.LoadSnapshot(0, snap, 0); err != nil {
					b.Fatal(err)
				}
			}
			cputime.Report(b, start)
		})
	}
}
