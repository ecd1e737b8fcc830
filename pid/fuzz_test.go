package pid

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mirrorpath/mirrorpath/codec"
)

// FuzzMapInvariants checks the pure mapping functions: negate is an
// involution, negate-skip and bitfield are idempotent, nothing but -1 maps to
// -1, negatives pass through where the strategy says (docs/strategies.md), and
// Unbitfield inverts
// bitfield.
func FuzzMapInvariants(f *testing.F) {
	for _, p := range []int64{-1, 0, 5, -2, -7, LowMask, LowMask + 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1} {
		f.Add(p, uint64(0x1111_2222_3333_4444), uint64(0x5555_6666_7777_8888))
	}
	f.Add(int64(LowMask), uint64(0), uint64(math.MaxUint32)) // the -1 slot
	f.Fuzz(func(t *testing.T, p int64, msb, lsb uint64) {
		var id [16]byte
		binary.BigEndian.PutUint64(id[:8], msb)
		binary.BigEndian.PutUint64(id[8:], lsb)
		if FoldXOR(id) != uint32(msb^lsb) {
			t.Fatalf("FoldXOR = %#x", FoldXOR(id))
		}

		n := MapNegate(p)
		if MapNegate(n) != p {
			t.Fatalf("negate not an involution at %d", p)
		}
		if (n == -1) != (p == -1) {
			t.Fatalf("negate(%d) = %d", p, n)
		}
		s := MapNegateSkip(p)
		if MapNegateSkip(s) != s || (s == -1) != (p == -1) || (p < 0 && s != p) {
			t.Fatalf("negate-skip(%d) = %d, again %d", p, s, MapNegateSkip(s))
		}

		for _, fold := range Folds() {
			region := fold.Region(id)
			for _, pol := range Policies() {
				m, err := MapBitfield(region, p, pol)
				switch {
				case p < 0:
					if m != p || err != nil {
						t.Fatalf("negative %d → %d, %v", p, m, err)
					}
					continue
				case p > LowMask && pol == Reject:
					if !errors.Is(err, ErrUnmappable) || m != p {
						t.Fatalf("reject %d → %d, %v", p, m, err)
					}
					continue
				case region == math.MaxUint32 && p&LowMask == LowMask:
					if !errors.Is(err, ErrReserved) || m != p {
						t.Fatalf("-1 slot: %d, %v", m, err)
					}
					continue
				}
				if err != nil || m >= 0 || m == -1 {
					t.Fatalf("bitfield(%#x, %d, %v) = %d, %v", region, p, pol, m, err)
				}
				if again, err := MapBitfield(region, m, pol); again != m || err != nil {
					t.Fatalf("bitfield not idempotent at %d: %d", p, again)
				}
				r, low, ok := Unbitfield(m)
				if !ok || r != region || low != p&LowMask {
					t.Fatalf("Unbitfield(%d) = %#x, %d, %v; want %#x, %d", m, r, low, ok, region, p&LowMask)
				}
				if Compose(r, low) != m {
					t.Fatalf("Compose does not invert Unbitfield at %d", m)
				}
			}
		}
	})
}

// refMapper is the plain reference of Mapper under bitfield with the XOR
// fold: Go maps, a linear scan for region use, the same salt draws.
type refMapper struct {
	policy  Policy
	rnd     rand.Source
	saltsOn bool
	salts   map[refOrigin]uint32
	origins map[int64]refOrigin
}

type refOrigin struct {
	c [16]byte
	p int64
}

func (r *refMapper) Map(c [16]byte, p int64) (int64, error) {
	if p == -1 {
		return -1, nil
	}
	mapped := p
	if p >= 0 {
		if p > LowMask && r.policy == Reject {
			return p, ErrUnmappable
		}
		region := FoldXOR(c)
		if s, ok := r.salts[refOrigin{c, p}]; ok {
			region ^= s
		}
		mapped = Compose(region, p&LowMask)
		if mapped == -1 {
			return r.collide(c, p)
		}
	}
	o, held := r.origins[mapped]
	switch {
	case !held:
		r.origins[mapped] = refOrigin{c, p}
		return mapped, nil
	case o == refOrigin{c, p}, o.c == c && o.p >= 0 && p >= 0, p < 0:
		return mapped, nil
	}
	return r.collide(c, p)
}

func (r *refMapper) collide(c [16]byte, p int64) (int64, error) {
	base := FoldXOR(c)
	if !r.saltsOn {
		if Compose(base, p&LowMask) == -1 {
			return p, ErrReserved
		}
		return Compose(base, p&LowMask), nil
	}
	for range MaxSaltDraws {
		salt := uint32(r.rnd.Uint64())
		region := base ^ salt
		used := false
		for k := range r.origins {
			if uint32(uint64(k)>>LowBits) == region {
				used = true
			}
		}
		cand := Compose(region, p&LowMask)
		if salt == 0 || used || cand == -1 {
			continue
		}
		r.salts[refOrigin{c, p}] = salt
		r.origins[cand] = refOrigin{c, p}
		return cand, nil
	}
	return p, ErrNoFreeRegion
}

var fuzzClusters = func() [][16]byte {
	hi := clusterWithRegion(0x77, math.MaxUint32)
	return [][16]byte{clA, clB, clC, hi, clash(hi, 0x1234), clash(clA, 0xffff_ffff_0000_0001), clusterWithRegion(9, 42^1), clusterWithRegion(10, 0)}
}()

// fuzzPID turns two bytes into a PID biased towards collisions and edges.
func fuzzPID(sel byte, v byte) int64 {
	switch sel % 8 {
	case 0, 1, 2, 3:
		return int64(v % 16)
	case 4:
		return LowMask - int64(v%4)
	case 5:
		return 1<<31 + int64(v%16) // unmappable or aliased
	case 6:
		return Compose(42^uint32(v%4), int64(v%16)) // looks mapped upstream: passes through
	}
	return -int64(v % 4) // -1, -2, -3, 0
}

// FuzzMapperInjective runs a Mapper and the reference on the same operation
// sequence (including leader changes through the log) and checks that they
// agree, that nothing maps to -1, that a (cluster, PID) keeps its mapping
// between leader changes, and that with salts on two distinct origins never
// share a mapped PID unless the design allows it (same cluster under alias, or
// a pass-through negative that cannot move).
func FuzzMapperInjective(f *testing.F) {
	f.Add(uint64(1), false, true, []byte{0, 0, 5, 1, 0, 5, 0, 0, 6, 1, 0, 6})
	f.Add(uint64(2), true, true, []byte{0, 5, 5, 0, 0, 5, 1, 5, 5, 0xff, 0, 0, 1, 0, 5})
	f.Add(uint64(3), false, true, []byte{3, 4, 0, 4, 4, 0, 0xff, 0, 0, 4, 4, 0, 3, 4, 0})
	f.Add(uint64(4), false, false, []byte{0, 0, 1, 1, 0, 1, 3, 4, 0})
	f.Add(uint64(5), false, true, []byte{2, 6, 1, 1, 0, 1, 0, 7, 2, 5, 6, 3})
	f.Fuzz(func(t *testing.T, seed uint64, alias, saltsOn bool, ops []byte) {
		fuzzInjective(t)(seed, alias, saltsOn, ops)
	})
}

// fuzzInjective is FuzzMapperInjective's body.
func fuzzInjective(t *testing.T) func(seed uint64, alias, saltsOn bool, ops []byte) {
	return func(seed uint64, alias, saltsOn bool, ops []byte) {
		t.Helper()
		if len(ops) > 3*512 {
			ops = ops[:3*512]
		}
		policy := Reject
		if alias {
			policy = Alias
		}
		var log bytes.Buffer
		src := rand.NewPCG(seed, seed^0x5eed)
		var reg *Registry
		newMapper := func() *Mapper {
			return NewMapper(Config{Strategy: Bitfield, Policy: policy, Rand: src, Registry: reg, TopicID: topicT})
		}
		if saltsOn {
			reg = NewRegistry(&log, func() int64 { return 1 })
		}
		m := newMapper()
		ref := &refMapper{policy: policy, rnd: rand.NewPCG(seed, seed^0x5eed), saltsOn: saltsOn,
			salts: map[refOrigin]uint32{}, origins: map[int64]refOrigin{}}
		mapped := map[refOrigin]int64{} // since the last leader change
		holder := map[int64]refOrigin{}
		for ; len(ops) >= 3; ops = ops[3:] {
			if ops[0] == 0xff { // leader change
				if saltsOn {
					reg = NewRegistry(nil, nil)
					if err := reg.Load(log.Bytes()); err != nil {
						t.Fatal(err)
					}
					reg.w = &log
				}
				m = newMapper()
				clear(ref.origins)
				clear(mapped)
				clear(holder)
				continue
			}
			c := fuzzClusters[int(ops[0])%len(fuzzClusters)]
			p := fuzzPID(ops[1], ops[2])
			got, err := m.Map(c, p)
			want, werr := ref.Map(c, p)
			if got != want || err != werr {
				t.Fatalf("Map(%x, %d) = %d, %v; reference %d, %v", c[:2], p, got, err, want, werr)
			}
			if err != nil {
				continue
			}
			if got == -1 && p != -1 {
				t.Fatalf("Map(%x, %d) = -1", c[:2], p)
			}
			o := refOrigin{c, p}
			if prev, ok := mapped[o]; ok && prev != got {
				t.Fatalf("Map(%x, %d) moved from %d to %d", c[:2], p, prev, got)
			}
			mapped[o] = got
			if h, ok := holder[got]; ok && h != o && saltsOn && p >= 0 && !(alias && h.c == c && h.p >= 0) {
				t.Fatalf("(%x, %d) and (%x, %d) both map to %d", c[:2], p, h.c[:2], h.p, got)
			}
			if _, ok := holder[got]; !ok && p != -1 {
				holder[got] = o
				if oc, op, ok := m.Origin(got); !ok || oc != c || op != p {
					t.Fatalf("Origin(%d) = %x, %d, %v", got, oc[:2], op, ok)
				}
			}
		}
		if saltsOn {
			if reg.Len() != len(ref.salts) {
				t.Fatalf("registry has %d salts, reference %d", reg.Len(), len(ref.salts))
			}
			for o, s := range ref.salts {
				if got, ok := reg.Lookup(topicT, 0, o.c, o.p); !ok || got != s {
					t.Fatalf("salt of (%x, %d) = %#x, %v; reference %#x", o.c[:2], o.p, got, ok, s)
				}
			}
		}
	}
}

// FuzzParseClusterID: no panic; whatever parses, both spellings of the result
// parse back to it; the base64 spelling agrees with an independent decoder.
func FuzzParseClusterID(f *testing.F) {
	for _, s := range []string{
		"MkU3OEVBNTcwNTJENDM2Qk", "a6e4EJ2tEdGAtADAT9QwyA", "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "AAAAAAAAAAAAAAAAAAAAAA", "______________________",
		"a6e4EJ2tEdGAtADAT9Qw\nA", "6ba7b8109dad11d180b400c04fd430c8", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseClusterID(s)
		ref, refOK := refDecode(s)
		if err != nil {
			if !errors.Is(err, ErrClusterID) {
				t.Fatalf("error %v does not match ErrClusterID", err)
			}
			if refOK {
				t.Fatalf("%q rejected, reference decodes %x", s, ref)
			}
			return
		}
		if !refOK || ref != id {
			t.Fatalf("%q = %x; reference %x, %v", s, id, ref, refOK)
		}
		b64 := FormatClusterID(id)
		text := uuid.UUID(id).String()
		if len(b64) != 22 || len(text) != 36 {
			t.Fatalf("spellings %q, %q", b64, text)
		}
		for _, sp := range []string{b64, text, strings.ToUpper(text)} {
			if back, err := ParseClusterID(sp); err != nil || back != id {
				t.Fatalf("%q → %x, but %q → %x, %v", s, id, sp, back, err)
			}
		}
		if len(s) == 36 && !strings.EqualFold(s, text) {
			t.Fatalf("text %q parsed to %s", s, text)
		}
	})
}

// refDecode is an independent decoder of both spellings: hex digits with
// dashes at 8, 13, 18, 23, or 22 characters of the URL-safe alphabet whose
// first 128 bits are the ID (the last character's low 4 bits ignored).
func refDecode(s string) ([16]byte, bool) {
	var id [16]byte
	switch len(s) {
	case 36:
		j := 0
		for i := 0; i < 36; i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return id, false
				}
				continue
			}
			var v int
			switch c := s[i]; {
			case c >= '0' && c <= '9':
				v = int(c - '0')
			case c >= 'a' && c <= 'f':
				v = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				v = int(c-'A') + 10
			default:
				return id, false
			}
			id[j/2] |= byte(v) << (4 * (1 - j%2))
			j++
		}
		return id, true
	case 22:
		const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		var bits [132]byte
		for i := 0; i < 22; i++ {
			v := strings.IndexByte(alpha, s[i])
			if v < 0 {
				return id, false
			}
			for k := 0; k < 6; k++ {
				bits[6*i+k] = byte(v>>(5-k)) & 1
			}
		}
		for i := 0; i < 128; i++ {
			id[i/8] |= bits[i] << (7 - i%8)
		}
		return id, true
	}
	return id, false
}

// FuzzRegistryLoad feeds arbitrary bytes to the mirror-state log decoder, raw
// (the CRC check guards the rejection paths) and with every framed batch's
// CRC repaired (so mutations reach the record, key and value decoders). Load
// must not panic, must allocate and hold no more than the input has room for
// (32 bytes allocated per input byte plus 1 MiB of slack for the process,
// one salt per 54-byte key), and
// what it loads must survive a write/Load round trip.
func FuzzRegistryLoad(f *testing.F) {
	var log bytes.Buffer
	reg := NewRegistry(&log, func() int64 { return 1_700_000_000_000 })
	m := newTestMapper(reg, 1)
	for p := int64(0); p < 3; p++ {
		m.Map(clA, p)
		m.Map(clB, p)
	}
	f.Add(log.Bytes())
	f.Add(log.Bytes()[:len(log.Bytes())-3])
	tomb, _ := codec.AppendBatch(nil, codec.BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]codec.Record{{Key: codec.MirrorPidCollisionKey{TopicID: topicT, Partition: 3,
			SourceClusterID: uuid.UUID(clB).String(), OriginalPID: 0}.AppendTo(nil)}}, codec.CompressionNone)
	f.Add(append(bytes.Clone(log.Bytes()), tomb...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, repair := range []bool{false, true} {
			in := data
			if repair {
				in = repairCRCs(data)
			}
			r := NewRegistry(nil, nil)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := r.Load(in)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32*uint64(len(in))+1<<20 { // slack: the fuzz engine allocates too
				t.Fatalf("Load of %d bytes allocated %d bytes", len(in), alloc)
			}
			if err != nil && !errors.Is(err, ErrBadLog) {
				t.Fatalf("Load error %v does not match ErrBadLog", err)
			}
			// Every salt needs a key of its own: type, topic, partition,
			// string length, a cluster ID of at least 22 bytes, PID.
			const minSaltKey = 2 + 16 + 4 + 2 + 22 + 8
			if r.Len() > len(in)/minSaltKey {
				t.Fatalf("%d salts from %d bytes", r.Len(), len(in))
			}
			salts := r.Salts()
			var out []byte
			for i, s := range salts {
				if out, err = appendSaltBatch(out, int64(i), s); err != nil {
					t.Fatal(err)
				}
			}
			back := NewRegistry(nil, nil)
			if err := back.Load(out); err != nil {
				t.Fatalf("reloading what Load read: %v", err)
			}
			if !slices.Equal(salts, back.Salts()) {
				t.Fatalf("round trip changed the salts:\n%+v\n%+v", salts, back.Salts())
			}
		}
	})
}

// repairCRCs returns a copy of data with the CRC of every framed batch
// recomputed.
func repairCRCs(data []byte) []byte {
	out := bytes.Clone(data)
	rest := out
	for {
		b, r, err := codec.Next(rest)
		if err != nil {
			return out
		}
		b.UpdateCRC()
		rest = r
	}
}

// FuzzTables checks the two open-addressing tables against Go maps: the
// origins table (insert, find, growth) and the salt snapshot (put, lookup,
// the salted-clusters list), with keys drawn to collide in their hashes.
func FuzzTables(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(bytes.Repeat([]byte{0x80, 1, 0xff}, 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		var ot originTable
		ot.init(1 + int(len(data)%3)) // sizes 1, 2, 4: growth from the start
		ref := map[int64]origin{}
		saltRef := map[refOrigin]uint32{}
		var ss []Salt
		for i := 0; i+1 < len(data); i += 2 {
			key := Compose(uint32(data[i]>>4), int64(data[i+1]))
			if data[i]&1 == 1 {
				key = -int64(data[i+1]) - 2 // a pass-through-like key
			}
			v := origin{pid: int64(i), cluster: uint32(data[i] & 7)}
			j, found := ot.find(key)
			if _, ok := ref[key]; ok != found {
				t.Fatalf("find(%d) = %v, reference %v", key, found, ok)
			}
			if !found {
				ot.insert(j, key, v)
				ref[key] = v
			}
			c := fuzzClusters[int(data[i])%len(fuzzClusters)]
			o := refOrigin{c, int64(data[i+1] % 32)}
			saltRef[o] = uint32(i)
			ss = append(ss, Salt{Cluster: c, PID: o.p, Salt: int64(i)})
		}
		if ot.n != len(ref) || 2*ot.n > len(ot.slots) && ot.n > 0 {
			t.Fatalf("%d entries in %d slots, reference %d", ot.n, len(ot.slots), len(ref))
		}
		for k, v := range ref {
			j, found := ot.find(k)
			if !found || ot.slots[j].origin != v {
				t.Fatalf("entry %d: %v %+v, want %+v", k, found, ot.slots[j].origin, v)
			}
		}
		ps := &partSalts{m: map[saltKey]Salt{}}
		for _, s := range ss {
			ps.m[saltKey{s.Cluster, s.PID}] = s
		}
		ps.publish()
		snap := ps.snap.Load()
		for _, c := range fuzzClusters {
			for p := range int64(32) {
				got, ok := snap.lookup(c, p)
				want, wok := saltRef[refOrigin{c, p}]
				if ok != wok || got != want {
					t.Fatalf("salt of (%x, %d) = %#x, %v; reference %#x, %v", c[:2], p, got, ok, want, wok)
				}
			}
		}
	})
}
