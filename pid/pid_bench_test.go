package pid

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

const benchPIDs = 1000 // distinct source PIDs cycled through, all warm in the origins table

// BenchmarkMap measures Mapper.Map per strategy on a warm partition, cycling
// through benchPIDs source PIDs of one cluster. salted=other: the partition
// holds salts, but of another cluster. salted=true: the mapped cluster has
// salts, so every call probes the salt snapshot; one in ten finds a salt.
func BenchmarkMap(b *testing.B) {
	for _, s := range Strategies() {
		b.Run("strategy="+s.String(), func(b *testing.B) {
			if s == Bitfield {
				b.Run("salted=false", func(b *testing.B) { benchMapper(b, s, "false") })
				b.Run("salted=other", func(b *testing.B) { benchMapper(b, s, "other") })
				b.Run("salted=true", func(b *testing.B) { benchMapper(b, s, "true") })
				return
			}
			benchMapper(b, s, "false")
		})
	}
}

func benchMapper(b *testing.B, s Strategy, salted string) {
	m := NewMapper(Config{Strategy: s, Registry: NewRegistry(nil, nil), Rand: rand.NewPCG(1, 2)})
	cl := clA
	pids := make([]int64, benchPIDs)
	for i := range pids {
		pids[i] = int64(i)
		if _, err := m.Map(clA, pids[i]); err != nil {
			b.Fatal(err)
		}
	}
	if salted != "false" {
		// B shares A's region: its PIDs 0, 10, 20, … collide with A's and get
		// salts; its other PIDs lie above A's and do not.
		cl = clB
		for i := range pids {
			if i%10 != 0 {
				pids[i] += benchPIDs
			}
			if _, err := m.Map(clB, pids[i]); err != nil {
				b.Fatal(err)
			}
		}
		if m.Stats().Salted != benchPIDs/10 {
			b.Fatalf("salted %d", m.Stats().Salted)
		}
		if salted == "other" {
			cl = clA
			for i := range pids {
				pids[i] = int64(i)
			}
		}
	}
	b.ReportAllocs()
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

// BenchmarkRewrite measures writing a new PID into a batch with each CRC fix.
// Bytes are the batch size, so MB/s shows what the fix costs per byte.
func BenchmarkRewrite(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{{"100B", 100}, {"1KiB", 1 << 10}, {"16KiB", 16 << 10}, {"1MiB", 1 << 20}}
	for _, fix := range CRCFixes() {
		for _, sz := range sizes {
			b.Run("crc="+fix.String()+"/batch="+sz.name, func(b *testing.B) {
				bt := makeBatch(b, sz.n, 5)
				b.SetBytes(int64(sz.n))
				b.ReportAllocs()
				pid := int64(5)
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

// BenchmarkMapPIDs measures bitfield Mapper.Map against the working set: the
// number of distinct warm PIDs cycled through, so the origins table goes from
// one hot slot to well beyond the L1 and L2 caches (24 bytes per slot, at
// most half full).
func BenchmarkMapPIDs(b *testing.B) {
	for _, n := range []int{1, 1000, 100_000} {
		b.Run("strategy=bitfield/pids="+strconv.Itoa(n), func(b *testing.B) {
			m := NewMapper(Config{Strategy: Bitfield})
			pids := make([]int64, n)
			r := rand.New(rand.NewPCG(3, 4))
			for i := range pids {
				pids[i] = int64(i)
				if _, err := m.Map(clA, pids[i]); err != nil {
					b.Fatal(err)
				}
			}
			r.Shuffle(n, func(i, j int) { pids[i], pids[j] = pids[j], pids[i] })
			b.ReportAllocs()
			i := 0
			var sink int64
			for b.Loop() {
				v, _ := m.Map(clA, pids[i])
				sink += v
				if i++; i == n {
					i = 0
				}
			}
			benchSink = sink
		})
	}
}
