package pid

import (
	"math/rand/v2"
	"testing"
)

// The hot entry points allocate nothing once the partition's tables are warm.
func TestAllocs(t *testing.T) {
	check := func(name string, f func()) {
		t.Helper()
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocs/op", name, n)
		}
	}
	for _, s := range Strategies() {
		m := NewMapper(Config{Strategy: s, Registry: NewRegistry(nil, nil)})
		for p := range int64(1000) {
			mustMap(t, m, clA, p)
		}
		var p int64
		check("Map/"+s.String(), func() {
			if _, err := m.Map(clA, p%1000); err != nil {
				t.Fatal(err)
			}
			p++
		})
	}
	// Salted: a partition with salts, a salted cluster, mapped PIDs that do
	// and do not carry salts, and an unmappable PID (the error path).
	reg := NewRegistry(nil, nil)
	m := NewMapper(Config{Strategy: Bitfield, Registry: reg, Rand: rand.NewPCG(1, 1)})
	for p := range int64(1000) {
		mustMap(t, m, clA, p)
		if p%10 == 0 {
			mustMap(t, m, clB, p)
		}
	}
	var p int64
	check("Map/bitfield/salted", func() {
		if _, err := m.Map(clB, p%100*10); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Map(clA, p%1000); err != nil {
			t.Fatal(err)
		}
		p++
	})
	check("Map/bitfield/unmappable", func() {
		if _, err := m.Map(clA, 1<<40); err != ErrUnmappable {
			t.Fatal(err)
		}
	})
	check("Origin", func() { m.Origin(mustMapPure(42, 7)) })
	check("Lookup", func() { reg.Lookup([16]byte{}, 0, clB, 10) })
	for _, fix := range CRCFixes() {
		b := makeBatch(t, 16<<10, 5)
		check("Rewrite/"+fix.String(), func() {
			Rewrite(b, MapNegate(b.ProducerID()), fix)
		})
		check("RewriteBatch/"+fix.String(), func() {
			b.SetProducerID(5)
			if _, err := m.RewriteBatch(b, clA, fix); err != nil {
				t.Fatal(err)
			}
		})
	}
	check("pure", func() {
		_, _ = MapBitfield(FoldMix(clA), MapNegateSkip(MapNegate(5)), Reject)
		_, _, _ = Unbitfield(-12345)
	})
}
