package pid

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

const benchPIDs = 1000 // distinct source PIDs cycled through, all warm in the origins table

// mapFixture is a warm Mapper and the (cluster, PIDs) a benchmark cycles
// through.
type mapFixture struct {
	m    *Mapper
	cl   [16]byte
	pids []int64
}

// newMapFixture builds a partition under strategy s that has mapped
// benchPIDs PIDs of cluster A. salted "other": cluster B, which shares A's
// region, has also mapped PIDs, one in ten colliding with A's and salted; the
// fixture still maps A's PIDs. salted "true": the fixture maps B's PIDs, so
// every call probes the salt snapshot and one in ten finds a salt.
func newMapFixture(tb testing.TB, s Strategy, salted string) mapFixture {
	m := NewMapper(Config{Strategy: s, Registry: NewRegistry(nil, nil), Rand: rand.NewPCG(1, 2)})
	f := mapFixture{m: m, cl: clA, pids: make([]int64, benchPIDs)}
	for i := range f.pids {
		f.pids[i] = int64(i)
		if _, err := m.Map(clA, f.pids[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if salted == "false" {
		return f
	}
	bpids := make([]int64, benchPIDs)
	for i := range bpids {
		bpids[i] = int64(i)
		if i%10 != 0 {
			bpids[i] += benchPIDs
		}
		if _, err := m.Map(clB, bpids[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if m.Stats().Salted != benchPIDs/10 {
		tb.Fatalf("salted %d", m.Stats().Salted)
	}
	if salted == "true" {
		f.cl, f.pids = clB, bpids
	}
	return f
}

// newWorkingSetFixture maps n distinct PIDs of cluster A under bitfield and
// shuffles them, so that the cycle walks the origins table at random.
func newWorkingSetFixture(tb testing.TB, n int) mapFixture {
	f := mapFixture{m: NewMapper(Config{Strategy: Bitfield}), cl: clA, pids: make([]int64, n)}
	for i := range f.pids {
		f.pids[i] = int64(i)
		if _, err := f.m.Map(clA, f.pids[i]); err != nil {
			tb.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(n, func(i, j int) { f.pids[i], f.pids[j] = f.pids[j], f.pids[i] })
	return f
}

// run maps n PIDs of the cycle, starting at *pos.
func (f mapFixture) run(n int, pos *int) int64 {
	i, m, cl, pids := *pos, f.m, f.cl, f.pids
	var sink int64
	for range n {
		v, _ := m.Map(cl, pids[i])
		sink += v
		if i++; i == len(pids) {
			i = 0
		}
	}
	*pos = i
	return sink
}

// bench is run's loop under b.Loop, written out so that the per-op cost is
// Map and the cycle, not a call to run.
func (f mapFixture) bench(b *testing.B) {
	b.ReportAllocs()
	m, cl, pids := f.m, f.cl, f.pids
	i := 0
	var sink int64
	for b.Loop() {
		v, _ := m.Map(cl, pids[i])
		sink += v
		if i++; i == len(pids) {
			i = 0
		}
	}
	benchSink = sink
}

var benchSink int64

// BenchmarkMap measures Mapper.Map per strategy on a warm partition, cycling
// through benchPIDs source PIDs of one cluster (see newMapFixture for
// salted=other and salted=true).
func BenchmarkMap(b *testing.B) {
	for _, s := range Strategies() {
		b.Run("strategy="+s.String(), func(b *testing.B) {
			if s != Bitfield {
				newMapFixture(b, s, "false").bench(b)
				return
			}
			for _, salted := range []string{"false", "other", "true"} {
				b.Run("salted="+salted, func(b *testing.B) { newMapFixture(b, s, salted).bench(b) })
			}
		})
	}
}

// BenchmarkMapPIDs measures bitfield Mapper.Map against the working set: the
// number of distinct warm PIDs cycled through in random order, so the origins
// table goes from one hot slot to well beyond the L1 and L2 caches (24 bytes
// per slot, at most half full).
func BenchmarkMapPIDs(b *testing.B) {
	for _, n := range []int{1, 1000, 100_000} {
		b.Run("strategy=bitfield/pids="+strconv.Itoa(n), func(b *testing.B) {
			newWorkingSetFixture(b, n).bench(b)
		})
	}
}

// mapFunc runs strategy s's pure function over n PIDs.
func mapFunc(s Strategy, region uint32, n int) int64 {
	var sink int64
	for p := range int64(n) {
		v, _ := s.Map(region, p&1023, Reject)
		sink += v
	}
	return sink
}

// BenchmarkMapFunc measures the pure per-strategy functions (no origins
// table): the arithmetic floor under Mapper.Map.
func BenchmarkMapFunc(b *testing.B) {
	region := Region(clA)
	for _, s := range Strategies() {
		b.Run("strategy="+s.String(), func(b *testing.B) {
			b.ReportAllocs()
			var p, sink int64
			for b.Loop() {
				v, _ := s.Map(region, p&1023, Reject)
				sink += v
				p++
			}
			benchSink = sink
		})
	}
}

var rewriteSizes = []struct {
	name string
	n    int
}{{"100B", 100}, {"1KiB", 1 << 10}, {"16KiB", 16 << 10}, {"1MiB", 1 << 20}}

// rewriteN rewrites b's PID n times, alternating 5 and -7 so every call
// writes.
func rewriteN(b codec.Batch, fix CRCFix, n int) {
	pid := b.ProducerID()
	for range n {
		pid = MapNegate(pid)
		Rewrite(b, pid, fix)
	}
}

// BenchmarkRewrite measures writing a new PID into a batch with each CRC fix.
// Bytes are the batch size, so MB/s shows what the fix costs per byte.
func BenchmarkRewrite(b *testing.B) {
	for _, fix := range CRCFixes() {
		for _, sz := range rewriteSizes {
			b.Run("crc="+fix.String()+"/batch="+sz.name, func(b *testing.B) {
				bt := makeBatch(b, sz.n, 5)
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				pid := bt.ProducerID()
				for b.Loop() {
					pid = MapNegate(pid) // alternate 5 and -7 so every call writes
					Rewrite(bt, pid, fix)
				}
				if bt.VerifyCRC() != nil {
					b.Fatal("CRC wrong after the loop")
				}
			})
		}
	}
}

// BenchmarkParseClusterID measures both spellings (not on a hot path: once
// per source cluster).
func BenchmarkParseClusterID(b *testing.B) {
	for _, s := range []string{"MkU3OEVBNTcwNTJENDM2Qg", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"} {
		b.Run("len="+strconv.Itoa(len(s)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseClusterID(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
