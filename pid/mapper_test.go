package pid

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

var (
	topicT = [16]byte{0x70, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	clA    = clusterWithRegion(0x1111_2222_3333_4444, 42)
	clB    = clash(clA, 0x00ff_0000_ffff_0000) // same XOR region as clA
	clC    = clusterWithRegion(0x5555_6666_7777_8888, 99)
)

func newTestMapper(reg *Registry, seed uint64) *Mapper {
	return NewMapper(Config{
		Strategy: Bitfield, Rand: rand.NewPCG(seed, 1), Registry: reg,
		TopicID: topicT, Partition: 3,
	})
}

func mustMap(t *testing.T, m *Mapper, c [16]byte, p int64) int64 {
	t.Helper()
	got, err := m.Map(c, p)
	if err != nil {
		t.Fatalf("Map(%x, %d): %v", c[:2], p, err)
	}
	return got
}

func TestMapperCollisionGetsSalt(t *testing.T) {
	var log bytes.Buffer
	reg := NewRegistry(&log, func() int64 { return 1234 })
	m := newTestMapper(reg, 1)

	a5 := mustMap(t, m, clA, 5)
	if want, _ := MapBitfield(42, 5, Reject); a5 != want {
		t.Fatalf("A.5 = %d, want %d", a5, want)
	}
	b5 := mustMap(t, m, clB, 5)
	if b5 == a5 {
		t.Fatal("B.5 conflated with A.5")
	}
	r, low, ok := Unbitfield(b5)
	if !ok || low != 5 || r == 42 {
		t.Fatalf("B.5 = region %d low %d", r, low)
	}
	salt, ok := reg.Lookup(topicT, 3, clB, 5)
	if !ok || r != 42^salt {
		t.Fatalf("registry salt %#x (ok %v), region %#x", salt, ok, r)
	}
	if again := mustMap(t, m, clB, 5); again != b5 {
		t.Errorf("B.5 remapped to %d, was %d", again, b5)
	}
	if again := mustMap(t, m, clA, 5); again != a5 {
		t.Errorf("A.5 remapped to %d, was %d", again, a5)
	}
	// B.6 lands on a free slot of the shared region: no collision. A.6 then
	// finds it held by B and is the one salted.
	b6 := mustMap(t, m, clB, 6)
	if want, _ := MapBitfield(42, 6, Reject); b6 != want {
		t.Errorf("B.6 = %d, want the unsalted %d", b6, want)
	}
	a6 := mustMap(t, m, clA, 6)
	if a6 == b6 {
		t.Error("A.6 conflated with B.6")
	}
	if _, ok := reg.Lookup(topicT, 3, clA, 6); !ok {
		t.Error("A.6 has no salt")
	}
	st := m.Stats()
	if st.Collisions != 2 || st.Salted != 2 || st.Unresolved != 0 || st.Origins != 4 || st.Clusters != 2 {
		t.Errorf("stats %+v", st)
	}
	for _, c := range []struct {
		mapped  int64
		cluster [16]byte
		pid     int64
	}{{a5, clA, 5}, {b5, clB, 5}, {a6, clA, 6}, {b6, clB, 6}} {
		cl, p, ok := m.Origin(c.mapped)
		if !ok || cl != c.cluster || p != c.pid {
			t.Errorf("Origin(%d) = %x, %d, %v", c.mapped, cl[:2], p, ok)
		}
	}
	for _, v := range []int64{mustMapPure(42, 7), 0, -1, 5} {
		if _, _, ok := m.Origin(v); ok {
			t.Errorf("Origin of unmapped %d", v)
		}
	}

	// The log holds exactly the two salt records as valid v2 batches.
	salts := reg.Salts()
	if len(salts) != 2 {
		t.Fatalf("salts %+v", salts)
	}
	rd := codec.NewReader(log.Bytes(), 0)
	n := 0
	for {
		b, _, err := rd.Next()
		if err != nil {
			break
		}
		if b.BaseOffset() != int64(n) || b.ProducerID() != -1 || b.IsControl() || b.RecordsCount() != 1 {
			t.Errorf("batch %d header: offset %d pid %d", n, b.BaseOffset(), b.ProducerID())
		}
		it := b.Records()
		rec, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		k, err := codec.ParseMirrorPidCollisionKey(rec.Key)
		if err != nil {
			t.Fatal(err)
		}
		v, err := codec.ParseMirrorPidCollisionValue(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		if k.TopicID != topicT || k.Partition != 3 || v.TimestampMs != 1234 || v.Salt <= 0 || v.Salt > math.MaxUint32 {
			t.Errorf("record %d: %+v %+v", n, k, v)
		}
		switch n {
		case 0:
			if k.SourceClusterID != FormatClusterID(clB) || k.OriginalPID != 5 || v.CollidingClusterID != FormatClusterID(clA) {
				t.Errorf("record 0: %+v %+v", k, v)
			}
		case 1:
			if k.SourceClusterID != FormatClusterID(clA) || k.OriginalPID != 6 || v.CollidingClusterID != FormatClusterID(clB) {
				t.Errorf("record 1: %+v %+v", k, v)
			}
		}
		n++
	}
	if n != 2 || reg.NextOffset() != 2 {
		t.Errorf("%d batches, next offset %d", n, reg.NextOffset())
	}
}

func mustMapPure(region uint32, p int64) int64 {
	m, err := MapBitfield(region, p, Reject)
	if err != nil {
		panic(err)
	}
	return m
}

// A registry reloaded from its log gives identical mappings, in any order.
func TestRegistryReloadSameMappings(t *testing.T) {
	var log bytes.Buffer
	reg := NewRegistry(&log, nil)
	m := newTestMapper(reg, 2)
	type op struct {
		c [16]byte
		p int64
	}
	var ops []op
	for p := int64(0); p < 50; p++ {
		ops = append(ops, op{clA, p})
		if p%3 == 0 {
			ops = append(ops, op{clB, p})
		}
		ops = append(ops, op{clC, p})
	}
	first := map[op]int64{}
	for _, o := range ops {
		first[o] = mustMap(t, m, o.c, o.p)
	}
	if m.Stats().Salted != 17 {
		t.Fatalf("salted %d, want 17 (B's PIDs 0,3,…,48)", m.Stats().Salted)
	}

	reg2 := NewRegistry(nil, nil)
	if err := reg2.Load(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(reg.Salts(), reg2.Salts()) {
		t.Fatal("reloaded salts differ")
	}
	if reg2.NextOffset() != reg.NextOffset() {
		t.Errorf("next offset %d after Load, want %d", reg2.NextOffset(), reg.NextOffset())
	}
	m2 := newTestMapper(reg2, 99) // another random source: no draw may happen
	for i := len(ops) - 1; i >= 0; i-- {
		o := ops[i]
		if got := mustMap(t, m2, o.c, o.p); got != first[o] {
			t.Errorf("after reload %x.%d = %d, was %d", o.c[:2], o.p, got, first[o])
		}
	}
	if st := m2.Stats(); st.Collisions != 0 {
		t.Errorf("reloaded mapper met %d collisions", st.Collisions)
	}
}

// The origins table is not persisted: after a leader change a collision
// with a mapping made by the old leader goes undetected (docs/strategies.md).
func TestLeaderChangeCollisionUndetected(t *testing.T) {
	var log bytes.Buffer
	old := newTestMapper(NewRegistry(&log, nil), 3)
	a7 := mustMap(t, old, clA, 7)

	// Same leader: B.7 is detected and salted.
	if b7 := mustMap(t, old, clB, 7); b7 == a7 {
		t.Fatal("collision on the same leader not detected")
	}
	// New leader: it knows B.7's salt, so B.7 stays apart...
	reg := NewRegistry(nil, nil)
	if err := reg.Load(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	nw := newTestMapper(reg, 3)
	if b7 := mustMap(t, nw, clB, 7); b7 == a7 {
		t.Error("salted mapping lost across the leader change")
	}
	// ...but B.8, first seen now, collides with A.8 mapped by the old leader,
	// and nothing notices.
	a8 := mustMap(t, old, clA, 8)
	b8 := mustMap(t, nw, clB, 8)
	if b8 != a8 {
		t.Errorf("B.8 = %d, A.8 = %d: expected the undetected conflation", b8, a8)
	}
	if st := nw.Stats(); st.Collisions != 0 {
		t.Errorf("new leader saw %d collisions", st.Collisions)
	}
	// Reset is the same loss on one Mapper.
	old.Reset()
	if b9, a9 := mustMap(t, old, clB, 9), mustMapPure(42, 9); b9 != a9 || old.Stats().Collisions != 0 {
		t.Errorf("after Reset B.9 = %d, want %d without collision", b9, a9)
	}
}

// A→B→C→D: a bitfield PID mapped at B passes unchanged through every later
// hop, and each hop's local PID 5 gets its own region.
func TestChainedMappingStable(t *testing.T) {
	id := map[string][16]byte{"A": clA, "B": clC, "C": clusterWithRegion(7, 17), "D": clusterWithRegion(8, 23)}
	hops := []string{"A", "B", "C", "D"}
	// carried[i] is the set of PIDs in hop i's log: its own PID 5, plus what
	// it mirrored (already mapped) from the hop before.
	carried := []int64{5}
	seen := map[int64]string{}
	for i := 1; i < len(hops); i++ {
		src := id[hops[i-1]]
		m := NewMapper(Config{Strategy: Bitfield})
		var next []int64
		for _, p := range carried {
			got := mustMap(t, m, src, p)
			if p < 0 && got != p {
				t.Errorf("hop %s: mapped PID %d changed to %d", hops[i], p, got)
			}
			if p >= 0 {
				if again, _ := MapBitfield(Region(src), got, Reject); again != got {
					t.Errorf("hop %s: map(map(%d)) = %d, want %d", hops[i], p, again, got)
				}
			}
			next = append(next, got)
		}
		carried = append(next, 5) // the hop's local producer
		if st := m.Stats(); st.Collisions != 0 {
			t.Errorf("hop %s: %d collisions", hops[i], st.Collisions)
		}
	}
	for _, p := range carried[:len(carried)-1] {
		if prev, dup := seen[p]; dup {
			t.Errorf("PID %d of D's log from two origins (%s)", p, prev)
		}
		seen[p] = "x"
	}
	if len(carried) != 4 {
		t.Fatalf("carried %v", carried)
	}
	// negate on the same chain: A.5 → -7 at B, back to 5 at C: meets C's
	// local PID 5. That is why negate is not chain-safe.
	if MapNegate(MapNegate(5)) != 5 {
		t.Error("negate chain")
	}
}

func TestMapperPolicy(t *testing.T) {
	big := int64(1)<<31 + 5
	rej := NewMapper(Config{Strategy: Bitfield})
	if got, err := rej.Map(clA, big); !errors.Is(err, ErrUnmappable) || got != big {
		t.Errorf("reject: %d, %v", got, err)
	}
	if rej.Stats().Origins != 0 {
		t.Error("rejected PID recorded")
	}
	al := NewMapper(Config{Strategy: Bitfield, Policy: Alias, Registry: NewRegistry(nil, nil)})
	p5 := mustMap(t, al, clA, 5)
	if pb := mustMap(t, al, clA, big); pb != p5 {
		t.Errorf("alias: 2^31+5 → %d, 5 → %d; want the same (the demonstrated conflation)", pb, p5)
	}
	if st := al.Stats(); st.Collisions != 0 || st.Origins != 1 {
		t.Errorf("alias stats %+v", st)
	}
	// Another cluster in the same region still collides with the alias slot.
	if pb := mustMap(t, al, clB, big); pb == p5 {
		t.Error("alias: cross-cluster collision not resolved")
	}
	// A salted aliased PID keeps its salt under its own (unaliased) key.
	if _, ok := al.reg.Lookup([16]byte{}, 0, clB, big); !ok {
		t.Error("salt of B.2^31+5 not keyed by the original PID")
	}
}

func TestMapperMinusOneSlot(t *testing.T) {
	hi := clusterWithRegion(0x77, math.MaxUint32)
	if _, err := MapBitfield(Region(hi), LowMask, Reject); !errors.Is(err, ErrReserved) {
		t.Fatal("test cluster does not hit the -1 slot")
	}
	reg := NewRegistry(nil, nil)
	m := newTestMapper(reg, 4)
	got := mustMap(t, m, hi, LowMask)
	if got == -1 {
		t.Fatal("Mapper produced -1")
	}
	if r, low, ok := Unbitfield(got); !ok || low != LowMask || r == math.MaxUint32 {
		t.Errorf("salted -1 slot: region %#x low %d", r, low)
	}
	s := reg.Salts()
	if len(s) != 1 || s[0].CollidingCluster != "" || s[0].PID != LowMask {
		t.Errorf("salt record %+v", s)
	}
	off := NewMapper(Config{Strategy: Bitfield})
	if got, err := off.Map(hi, LowMask); !errors.Is(err, ErrReserved) || got != LowMask {
		t.Errorf("salts off: %d, %v", got, err)
	}
}

func TestMapperSaltsOff(t *testing.T) {
	m := NewMapper(Config{Strategy: Bitfield})
	a := mustMap(t, m, clA, 5)
	b := mustMap(t, m, clB, 5)
	if a != b {
		t.Error("salts off: collision resolved anyway")
	}
	if st := m.Stats(); st.Collisions != 1 || st.Unresolved != 1 || st.Salted != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestMapperSaltDraws(t *testing.T) {
	reg := NewRegistry(nil, nil)
	// Draws: 0 (no-op salt), 42^99 (lands on C's region, in use), then 7.
	src := &seqSource{vals: []uint64{0, 42 ^ 99, 0xdead_0000_0000_0007}}
	m := NewMapper(Config{Strategy: Bitfield, Rand: src, Registry: reg})
	mustMap(t, m, clC, 1) // region 99 now holds an origin
	mustMap(t, m, clA, 5)
	b5 := mustMap(t, m, clB, 5)
	if r, _, _ := Unbitfield(b5); r != 42^7 {
		t.Errorf("salted region %#x, want 42^7 (two draws skipped)", r)
	}
	if src.i != 3 {
		t.Errorf("%d draws, want 3", src.i)
	}
	broken := NewMapper(Config{Strategy: Bitfield, Rand: &seqSource{vals: []uint64{0}}, Registry: NewRegistry(nil, nil)})
	mustMap(t, broken, clA, 5)
	if got, err := broken.Map(clB, 5); !errors.Is(err, ErrNoFreeRegion) || got != 5 {
		t.Errorf("broken source: %d, %v", got, err)
	}
}

func TestMapperLogWriteFails(t *testing.T) {
	w := &flakyWriter{fail: true}
	reg := NewRegistry(w, nil)
	m := newTestMapper(reg, 5)
	mustMap(t, m, clA, 5)
	if got, err := m.Map(clB, 5); !errors.Is(err, ErrLogWrite) || !errors.Is(err, errDisk) || got != 5 {
		t.Fatalf("failing log: %d, %v", got, err)
	}
	if reg.Len() != 0 || reg.NextOffset() != 0 || m.Stats().Origins != 1 {
		t.Fatal("a salt whose record was not written became visible")
	}
	w.fail = false
	b5 := mustMap(t, m, clB, 5)
	reg2 := NewRegistry(nil, nil)
	if err := reg2.Load(w.buf); err != nil {
		t.Fatal(err)
	}
	m2 := newTestMapper(reg2, 6)
	if got := mustMap(t, m2, clB, 5); got != b5 {
		t.Errorf("after retry and reload: %d, want %d", got, b5)
	}
}

// Negative PIDs pass through; a positive mapping that lands on a slot a
// pass-through holds is a collision and is salted.
func TestMapperNegativePassThrough(t *testing.T) {
	m := newTestMapper(NewRegistry(nil, nil), 7)
	a5 := mustMapPure(42, 5)
	if got := mustMap(t, m, clC, a5); got != a5 { // C's log carries A.5 mapped upstream
		t.Fatalf("pass-through changed %d to %d", a5, got)
	}
	if got := mustMap(t, m, clA, -7); got != -7 {
		t.Errorf("-7 → %d", got)
	}
	if got := mustMap(t, m, clA, -1); got != -1 {
		t.Errorf("-1 → %d", got)
	}
	b5 := mustMap(t, m, clB, 5) // region 42 like A: slot held by the pass-through
	if b5 == a5 {
		t.Error("positive PID conflated with a pass-through")
	}
	// The reverse order cannot be resolved: a pass-through cannot move.
	m2 := newTestMapper(NewRegistry(nil, nil), 8)
	b5 = mustMap(t, m2, clB, 5)
	if got := mustMap(t, m2, clC, b5); got != b5 {
		t.Error("pass-through moved")
	}
	if st := m2.Stats(); st.Unresolved != 1 || st.Collisions != 1 {
		t.Errorf("stats %+v: want 1 collision, unresolved", st)
	}
}

func TestMapperOtherStrategies(t *testing.T) {
	for _, s := range []Strategy{Verbatim, Negate, NegateSkip, Barrier} {
		m := NewMapper(Config{Strategy: s, Registry: NewRegistry(nil, nil)})
		for _, p := range []int64{-1, 0, 5, -7, math.MaxInt64, math.MinInt64} {
			want, _ := s.Map(0, p, Reject)
			if got := mustMap(t, m, clA, p); got != want {
				t.Errorf("%v: Map(%d) = %d, want %d", s, p, got, want)
			}
			if got := mustMap(t, m, clB, p); got != want {
				t.Errorf("%v: Map(B, %d) = %d, want %d", s, p, got, want)
			}
		}
		for _, v := range []int64{-7, 0, 5} {
			if _, _, ok := m.Origin(v); ok {
				t.Errorf("%v keeps origins (%d)", s, v)
			}
		}
	}
}

func TestRewriteBatch(t *testing.T) {
	m := NewMapper(Config{Strategy: Bitfield})
	for _, fix := range CRCFixes() {
		b := makeBatch(t, 300, 5)
		np, err := m.RewriteBatch(b, clA, fix)
		if err != nil || np != mustMapPure(42, 5) || b.ProducerID() != np || b.VerifyCRC() != nil {
			t.Errorf("%v: %d, %v, pid %d, crc %v", fix, np, err, b.ProducerID(), b.VerifyCRC())
		}
	}
	b := makeBatch(t, 300, 1<<31)
	orig := append([]byte(nil), b...)
	if _, err := m.RewriteBatch(b, clA, Patch); !errors.Is(err, ErrUnmappable) || string(b) != string(orig) {
		t.Errorf("unmappable: %v, batch changed %v", err, string(b) != string(orig))
	}
	v := NewMapper(Config{Strategy: Verbatim})
	b = makeBatch(t, 300, 5)
	orig = append([]byte(nil), b...)
	if np, err := v.RewriteBatch(b, clA, Full); np != 5 || err != nil || string(b) != string(orig) {
		t.Error("verbatim rewrote the batch")
	}
}

// Mappers of different partitions share a Registry and add salts while the
// others map: run with -race.
func TestRegistryConcurrent(t *testing.T) {
	// A log of salts for cluster C in the same four partitions, which a
	// loader replays while the Mappers run: their snapshots change under
	// them, their mappings (of A and B) must not.
	var cLog []byte
	off := int64(0)
	for part := range int32(4) {
		for p := range int64(20) {
			var err error
			off++
			cLog, err = appendSaltBatch(cLog, off, Salt{TopicID: topicT, Partition: part, Cluster: clC, PID: p, Salt: 0x5a5a})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var log bytes.Buffer
	reg := NewRegistry(&log, nil)
	var wg sync.WaitGroup
	done := make(chan struct{})
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := reg.Load(cLog); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	results := make([]map[int64]int64, 4)
	for part := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := NewMapper(Config{Strategy: Bitfield, Registry: reg, TopicID: topicT, Partition: int32(part), Rand: rand.NewPCG(uint64(part), 0)})
			res := map[int64]int64{}
			for p := range int64(200) {
				a, err1 := m.Map(clA, p)
				b, err2 := m.Map(clB, p)
				if err1 != nil || err2 != nil || a == b {
					t.Errorf("partition %d PID %d: %d %v, %d %v", part, p, a, err1, b, err2)
					return
				}
				res[p] = b
			}
			results[part] = res
		}()
	}
	wg.Wait()
	close(done)
	<-loaded
	if reg.Len() != 4*200+4*20 {
		t.Fatalf("%d salts", reg.Len())
	}
	reg2 := NewRegistry(nil, nil)
	if err := reg2.Load(log.Bytes()); err != nil {
		t.Fatal(err)
	}
	for part := range 4 {
		m := NewMapper(Config{Strategy: Bitfield, Registry: reg2, TopicID: topicT, Partition: int32(part)})
		for p, want := range results[part] {
			if got := mustMap(t, m, clB, p); got != want {
				t.Errorf("partition %d B.%d = %d after reload, want %d", part, p, got, want)
			}
		}
	}
}

// TestMapperMatchesReference runs random operation sequences through
// FuzzMapperInjective's body without the fuzzing engine, so that every
// `go test` exercises the differential check beyond the seed corpus.
func TestMapperMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	f := fuzzInjective(t)
	for range 300 {
		ops := make([]byte, 3*(1+r.IntN(200)))
		for i := range ops {
			ops[i] = byte(r.Uint32())
			if i%3 == 0 && r.IntN(40) == 0 {
				ops[i] = 0xff // leader change
			}
		}
		f(r.Uint64(), r.IntN(4) == 0, r.IntN(5) != 0, ops)
	}
}

// The fold is a Mapper option: the XOR clash of clA and clB (same XOR
// region) is not a clash under FoldMix, and both spellings of a cluster ID
// name the same cluster.
func TestMapperFold(t *testing.T) {
	for _, fold := range Folds() {
		m := NewMapper(Config{Strategy: Bitfield, Fold: fold, Registry: NewRegistry(nil, nil)})
		a, b := mustMap(t, m, clA, 5), mustMap(t, m, clB, 5)
		ra, _, _ := Unbitfield(a)
		if ra != fold.Region(clA) {
			t.Errorf("%v: A's region %#x, want %#x", fold, ra, fold.Region(clA))
		}
		wantCollisions := uint64(0)
		if fold == XOR {
			wantCollisions = 1
		}
		if st := m.Stats(); a == b || st.Collisions != wantCollisions {
			t.Errorf("%v: A.5 = %d, B.5 = %d, stats %+v", fold, a, b, st)
		}
	}
	text, err := ParseClusterID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if err != nil {
		t.Fatal(err)
	}
	b64, err := ParseClusterID("a6e4EJ2tEdGAtADAT9QwyA")
	if err != nil {
		t.Fatal(err)
	}
	m := NewMapper(Config{Strategy: Bitfield})
	if x, y := mustMap(t, m, text, 9), mustMap(t, m, b64, 9); x != y || m.Stats().Clusters != 1 {
		t.Errorf("the two spellings map apart: %d, %d", x, y)
	}
}

// A cluster with several salts (from the registry) marks each salted region
// it maps into as used, not only the first: a collision's salt draw that
// lands on the second one is skipped, so no origin is overwritten.
func TestMapperSaltDrawSkipsEverySaltedRegion(t *testing.T) {
	reg := NewRegistry(nil, nil)
	for _, s := range []Salt{{TopicID: topicT, Partition: 3, Cluster: clA, PID: 1, Salt: 0x10},
		{TopicID: topicT, Partition: 3, Cluster: clA, PID: 2, Salt: 0x20}} {
		if err := reg.add(s); err != nil {
			t.Fatal(err)
		}
	}
	// Draws: the one landing C on A's second salted region, then 7.
	src := &seqSource{vals: []uint64{99 ^ 42 ^ 0x20, 7}}
	m := NewMapper(Config{Strategy: Bitfield, Rand: src, Registry: reg, TopicID: topicT, Partition: 3})
	a1, a2 := mustMap(t, m, clA, 1), mustMap(t, m, clA, 2)
	if r, _, _ := Unbitfield(a2); r != 42^0x20 || a1 == a2 {
		t.Fatalf("A's salted PIDs: %#x, %#x", a1, a2)
	}
	mustMap(t, m, clash(clC, 0xff), 2) // holds C's slot for PID 2
	c2 := mustMap(t, m, clC, 2)        // collides: the first draw is skipped
	if r, _, _ := Unbitfield(c2); r != 99^7 {
		t.Errorf("C's salted region %#x, want 99^7", r)
	}
	if cl, p, ok := m.Origin(a2); !ok || cl != clA || p != 2 {
		t.Errorf("A's origin of %#x became %x/%d", a2, cl[:2], p)
	}
}
