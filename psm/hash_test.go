package psm

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/pid"
)

// TestHashSpreadsPIDFamilies: the one-multiply table hash (hashPID) keeps
// probe runs short and shards balanced for the PID families a broker sees:
// sequential PIDs from 0 (every cluster allocates them so), their negations
// (negate), bit-field PIDs of several regions sharing their low bits
// (bitfield), PIDs with only high bits set, and random ones. A hash whose low bits
// ignored the high bits of the PID would put the bit-field families'
// same-low-bits PIDs on one slot and fail here.
func TestHashSpreadsPIDFamilies(t *testing.T) {
	const n = 50000
	rng := rand.New(rand.NewPCG(9, 9))
	families := map[string]func(i int) int64{
		"sequential": func(i int) int64 { return int64(i) },
		"negated":    func(i int) int64 { return pid.MapNegate(int64(i)) },
		"bitfield, three regions": func(i int) int64 {
			return pid.Compose([]uint32{1, 2, 0x7fffffff}[i%3], int64(i/3))
		},
		"high bits only": func(i int) int64 { return int64(i) << 40 },
		"random":         func(i int) int64 { return int64(rng.Uint64() >> 1) },
	}
	for name, pidOf := range families {
		for _, part := range []PartitionID{0, 1, 1000} { // seedOf gives each its own seed
			t.Run(name+"/partition="+strconv.Itoa(int(part)), func(t *testing.T) {
				spreadCheck(t, part, n, pidOf)
			})
		}
	}
}

// spreadCheck fills partition part of a new Store with the n PIDs of pidOf
// and checks shard balance and probe lengths.
func spreadCheck(t *testing.T, part PartitionID, n int, pidOf func(int) int64) {
	s := NewStore(Options{HasProducerID: NonNegativeOne}) // negated PIDs are tracked
	a := s.Begin(part, Replication)
	for i := range n {
		b := data(pidOf(i), 0, 0, 1)
		b.BaseOffset = int64(i)
		if _, err := a.Add(&b); err != nil {
			t.Fatal(err)
		}
	}
	a.Commit()
	if got := s.ProducerCount(part); got != n {
		t.Fatalf("%d producers, want %d", got, n)
	}
	sp := s.part(part)
	probes, worst := 0, 0
	for si := range sp.shards {
		sh := &sp.shards[si]
		live := 0
		mask := len(sh.slots) - 1
		for i := range sh.slots {
			sl := &sh.slots[i]
			if sl.gen != sp.gen {
				continue
			}
			live++
			home := int(sh.home(sp.hash(sl.pid)))
			d := (i - home) & mask
			probes += d + 1
			worst = max(worst, d+1)
		}
		// The shard comes from the hash's top bits: each of the 16
		// should hold close to n/16.
		if want := n / numShards; live < want*3/4 || live > want*5/4 {
			t.Errorf("shard %d holds %d producers, want about %d", si, live, want)
		}
	}
	avg := float64(probes) / float64(n)
	t.Logf("average probes %.2f, longest run %d", avg, worst)
	if avg > 2 || worst > 128 {
		t.Errorf("average probes %.2f, longest %d: want at most 2 and 128", avg, worst)
	}
}
