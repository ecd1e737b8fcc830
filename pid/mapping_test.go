package pid

import (
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/mirrorpath/mirrorpath/codec"
)

func TestNames(t *testing.T) {
	want := []string{"verbatim", "negate", "negate-skip", "bitfield", "barrier", "allocator"}
	ss := Strategies()
	if len(ss) != len(want) {
		t.Fatalf("Strategies() = %v", ss)
	}
	for i, s := range ss {
		if s.String() != want[i] {
			t.Errorf("Strategies()[%d] = %q, want %q", i, s, want[i])
		}
		got, err := ParseStrategy(want[i])
		if err != nil || got != s {
			t.Errorf("ParseStrategy(%q) = %v, %v", want[i], got, err)
		}
		var u Strategy
		txt, _ := s.MarshalText()
		if err := u.UnmarshalText(txt); err != nil || u != s {
			t.Errorf("text round trip of %v: %v, %v", s, u, err)
		}
	}
	rewrites := map[Strategy]bool{Negate: true, NegateSkip: true, Bitfield: true}
	for _, s := range ss {
		if s.Rewrites() != rewrites[s] {
			t.Errorf("%v.Rewrites() = %v", s, s.Rewrites())
		}
	}
	for i, f := range CRCFixes() {
		if n := []string{"full", "patch"}[i]; f.String() != n {
			t.Errorf("CRCFix %d = %q", i, f)
		} else if g, err := ParseCRCFix(n); err != nil || g != f {
			t.Errorf("ParseCRCFix(%q) = %v, %v", n, g, err)
		}
	}
	for i, p := range Policies() {
		if n := []string{"reject", "alias"}[i]; p.String() != n {
			t.Errorf("Policy %d = %q", i, p)
		} else if g, err := ParsePolicy(n); err != nil || g != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", n, g, err)
		}
	}
	for i, f := range Folds() {
		if n := []string{"xor", "mix"}[i]; f.String() != n {
			t.Errorf("Fold %d = %q", i, f)
		} else if g, err := ParseFold(n); err != nil || g != f {
			t.Errorf("ParseFold(%q) = %v, %v", n, g, err)
		}
	}
	for _, f := range CRCFixes() {
		textRoundTrip(t, f, new(CRCFix))
	}
	for _, p := range Policies() {
		textRoundTrip(t, p, new(Policy))
	}
	for _, f := range Folds() {
		textRoundTrip(t, f, new(Fold))
	}
	if err := new(Fold).UnmarshalText([]byte("XOR")); !errors.Is(err, ErrUnknownName) {
		t.Error("UnmarshalText(XOR) accepted")
	}
	if Strategy(0) != Verbatim || CRCFix(0) != Full || Policy(0) != Reject || Fold(0) != XOR {
		t.Error("zero values are not the defaults")
	}
	for _, bad := range []string{"", "Negate", "negate_skip", "bit-field", "asis"} {
		if _, err := ParseStrategy(bad); !errors.Is(err, ErrUnknownName) {
			t.Errorf("ParseStrategy(%q) err = %v", bad, err)
		}
	}
	if _, err := ParseCRCFix("asis"); !errors.Is(err, ErrUnknownName) {
		t.Error("ParseCRCFix(asis) accepted")
	}
	if _, err := ParsePolicy("Reject"); !errors.Is(err, ErrUnknownName) {
		t.Error("ParsePolicy(Reject) accepted")
	}
	if Strategy(9).String() != "strategy(9)" {
		t.Errorf("Strategy(9) = %q", Strategy(9))
	}
	if _, err := Strategy(9).MarshalText(); !errors.Is(err, ErrUnknownName) {
		t.Error("MarshalText of an invalid strategy succeeded")
	}
}

func TestNegateEdges(t *testing.T) {
	cases := []struct{ p, want int64 }{
		{-1, -1},
		{0, -2},
		{-2, 0},
		{5, -7},
		{-7, 5},
		{math.MaxInt64, math.MaxInt64},         // -(MaxInt64+2) wraps to MaxInt64
		{math.MinInt64, math.MaxInt64 - 1},     // -(MinInt64+2) = MaxInt64-1
		{math.MaxInt64 - 1, math.MinInt64},     // MaxInt64-1+2 wraps to MinInt64, -MinInt64 = MinInt64
		{math.MinInt64 + 1, math.MaxInt64 - 2}, // no wrap needed beyond the add
	}
	for _, c := range cases {
		if got := MapNegate(c.p); got != c.want {
			t.Errorf("MapNegate(%d) = %d, want %d", c.p, got, c.want)
		}
		if back := MapNegate(MapNegate(c.p)); back != c.p {
			t.Errorf("MapNegate is not an involution at %d: %d", c.p, back)
		}
	}
}

func TestNegateSkip(t *testing.T) {
	cases := []struct{ p, want int64 }{
		{-1, -1},
		{-2, -2},
		{-7, -7},
		{0, -2},
		{5, -7},
		{math.MinInt64, math.MinInt64},
		{math.MaxInt64, math.MaxInt64},     // wraps to itself, positive
		{math.MaxInt64 - 1, math.MinInt64}, // wraps to MinInt64
	}
	for _, c := range cases {
		got := MapNegateSkip(c.p)
		if got != c.want {
			t.Errorf("MapNegateSkip(%d) = %d, want %d", c.p, got, c.want)
		}
		if again := MapNegateSkip(got); again != got {
			t.Errorf("MapNegateSkip not idempotent at %d: %d then %d", c.p, got, again)
		}
	}
}

// The seed's worked example: PID 5 from clusters whose regions are 42 and 99.
func TestSeedWorkedExample(t *testing.T) {
	const (
		want42 = "1|00000000000000000000000000101010|0000000000000000000000000000101"
		want99 = "1|00000000000000000000000001100011|0000000000000000000000000000101"
	)
	a := clusterWithRegion(0x1234_5678_9abc_def0, 42)
	b := clusterWithRegion(0x0fed_cba9_8765_4321, 99)
	if FoldXOR(a) != 42 || FoldXOR(b) != 99 {
		t.Fatalf("test clusters fold to %d, %d", FoldXOR(a), FoldXOR(b))
	}
	for _, c := range []struct {
		id   [16]byte
		want string
	}{{a, want42}, {b, want99}} {
		m, err := MapBitfield(Region(c.id), 5, Reject)
		if err != nil {
			t.Fatal(err)
		}
		if got := bitString(m); got != c.want {
			t.Errorf("PID 5 from region %d:\n got %s\nwant %s", Region(c.id), got, c.want)
		}
		mp := NewMapper(Config{Strategy: Bitfield})
		if got, err := mp.Map(c.id, 5); err != nil || got != m {
			t.Errorf("Mapper.Map = %d, %v; want %d", got, err, m)
		}
		r, low, ok := Unbitfield(m)
		if !ok || r != Region(c.id) || low != 5 {
			t.Errorf("Unbitfield(%d) = %d, %d, %v", m, r, low, ok)
		}
	}
}

func TestBitfield(t *testing.T) {
	const r = 0x8000_0001
	cases := []struct {
		p      int64
		policy Policy
		want   int64
		err    error
	}{
		{0, Reject, math.MinInt64 | r<<31, nil},
		{LowMask, Reject, math.MinInt64 | r<<31 | LowMask, nil},
		{LowMask + 1, Reject, LowMask + 1, ErrUnmappable},
		{LowMask + 1, Alias, math.MinInt64 | r<<31, nil},
		{1<<31 + 5, Alias, math.MinInt64 | r<<31 | 5, nil},
		{math.MaxInt64, Reject, math.MaxInt64, ErrUnmappable},
		{math.MaxInt64, Alias, math.MinInt64 | r<<31 | LowMask, nil},
		{-1, Reject, -1, nil},
		{-7, Reject, -7, nil},
		{math.MinInt64, Reject, math.MinInt64, nil},
	}
	for _, c := range cases {
		got, err := MapBitfield(r, c.p, c.policy)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("MapBitfield(%#x, %d, %v) = %d, %v; want %d, %v", r, c.p, c.policy, got, err, c.want, c.err)
		}
		if s, err2 := Bitfield.Map(r, c.p, c.policy); s != got || err2 != err {
			t.Errorf("Strategy.Map disagrees at %d: %d, %v", c.p, s, err2)
		}
	}
	// The -1 slot: region 0xFFFFFFFF with PID 2^31-1.
	if got, err := MapBitfield(math.MaxUint32, LowMask, Reject); !errors.Is(err, ErrReserved) || got != LowMask {
		t.Errorf("MapBitfield(0xFFFFFFFF, 2^31-1) = %d, %v; want ErrReserved", got, err)
	}
	if got, err := MapBitfield(math.MaxUint32, 1<<32|LowMask, Alias); !errors.Is(err, ErrReserved) || got != 1<<32|LowMask {
		t.Errorf("alias onto the -1 slot = %d, %v; want p unchanged and ErrReserved", got, err)
	}
	if got, err := MapBitfield(math.MaxUint32, LowMask-1, Reject); err != nil || got != -2 {
		t.Errorf("MapBitfield(0xFFFFFFFF, 2^31-2) = %d, %v; want -2", got, err)
	}
	if _, _, ok := Unbitfield(-1); ok {
		t.Error("Unbitfield(-1) ok")
	}
	if _, _, ok := Unbitfield(0); ok {
		t.Error("Unbitfield(0) ok")
	}
	if r, low, ok := Unbitfield(math.MinInt64); !ok || r != 0 || low != 0 {
		t.Errorf("Unbitfield(MinInt64) = %d, %d, %v", r, low, ok)
	}
}

func TestStrategyMapFunctions(t *testing.T) {
	for _, p := range []int64{-1, 0, 5, -7, math.MaxInt64, math.MinInt64, 1 << 40} {
		for _, s := range []Strategy{Verbatim, Barrier} {
			if got, err := s.Map(7, p, Reject); got != p || err != nil {
				t.Errorf("%v.Map(%d) = %d, %v", s, p, got, err)
			}
		}
		if got, _ := Negate.Map(7, p, Reject); got != MapNegate(p) {
			t.Errorf("Negate.Map(%d) = %d", p, got)
		}
		if got, _ := NegateSkip.Map(7, p, Reject); got != MapNegateSkip(p) {
			t.Errorf("NegateSkip.Map(%d) = %d", p, got)
		}
	}
}

func TestFolds(t *testing.T) {
	// Expected value computed independently (Python: (msb ^ lsb) & 0xFFFFFFFF).
	id := uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if got := FoldXOR(id); got != 0xd2792119 {
		t.Errorf("FoldXOR = %#x, want 0xd2792119", got)
	}
	if XOR.Region(id) != FoldXOR(id) || Mix.Region(id) != FoldMix(id) || Region(id) != FoldXOR(id) {
		t.Error("Fold.Region does not dispatch")
	}
	// The (hi^d, lo^d) clash: same XOR region, different mixed regions.
	for d := uint64(1); d < 1<<20; d = d*3 + 1 {
		o := clash(id, d)
		if FoldXOR(o) != FoldXOR(id) {
			t.Fatalf("clash(%#x) changed the XOR region", d)
		}
		if FoldMix(o) == FoldMix(id) {
			t.Errorf("FoldMix collides on the XOR clash d=%#x", d)
		}
	}
}

func TestParseClusterID(t *testing.T) {
	// Kafka's widely used example id: base64 of the ASCII "2E78EA57052D436B",
	// spelled with a non-zero unused last-character bit ('k', canonical 'g'),
	// which Kafka (java.util.Base64) accepts.
	want := [16]byte([]byte("2E78EA57052D436B"))
	for _, s := range []string{
		"MkU3OEVBNTcwNTJENDM2Qk",
		"MkU3OEVBNTcwNTJENDM2Qg",
		"32453738-4541-3537-3035-324434333642",
		"32453738-4541-3537-3035-324434333642",
	} {
		got, err := ParseClusterID(s)
		if err != nil || got != want {
			t.Errorf("ParseClusterID(%q) = %x, %v", s, got, err)
		}
	}
	if s := FormatClusterID(want); s != "MkU3OEVBNTcwNTJENDM2Qg" {
		t.Errorf("FormatClusterID = %q", s)
	}
	u := uuid.MustParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	if got, err := ParseClusterID("a6e4EJ2tEdGAtADAT9QwyA"); err != nil || got != [16]byte(u) {
		t.Errorf("base64 of 6ba7b810-…: %x, %v", got, err)
	}
	if got, err := ParseClusterID("6BA7B810-9DAD-11D1-80B4-00C04FD430C8"); err != nil || got != [16]byte(u) {
		t.Errorf("upper-case text: %x, %v", got, err)
	}
	for _, bad := range []string{
		"",
		"6ba7b8109dad11d180b400c04fd430c8", // 32 hex: uuid.Parse takes it, we do not
		"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", // urn form
		"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
		"6ba7b810-9dad-11d1-80b4-00c04fd430cg", // not hex
		"6ba7b810x9dad-11d1-80b4-00c04fd430c8", // bad dash
		"a6e4EJ2tEdGAtADAT9Qwy+",               // standard alphabet
		"a6e4EJ2tEdGAtADAT9Qwy=",
		"a6e4EJ2tEdGAtADAT9Qw\nA", // Go's decoder skips newlines: must not pass
		"a6e4EJ2tEdGAtADAT9QwyA==",
	} {
		if _, err := ParseClusterID(bad); !errors.Is(err, ErrClusterID) {
			t.Errorf("ParseClusterID(%q) err = %v", bad, err)
		}
	}
}

func TestRewrite(t *testing.T) {
	for _, size := range []int{codec.HeaderSize, 100, 1024, 16 << 10} {
		for _, fix := range CRCFixes() {
			b := makeBatch(t, size, 5)
			orig := append([]byte(nil), b...)
			np := MapNegate(5)
			Rewrite(b, np, fix)
			nb, err := codec.ParseBatch(b)
			if err != nil {
				t.Fatal(err)
			}
			if nb.ProducerID() != np {
				t.Errorf("size %d %v: PID %d, want %d", size, fix, nb.ProducerID(), np)
			}
			if err := nb.VerifyCRC(); err != nil {
				t.Errorf("size %d %v: %v", size, fix, err)
			}
			for i := range b {
				inPID := i >= codec.OffProducerID && i < codec.OffProducerID+8
				inCRC := i >= codec.OffCRC && i < codec.OffCRC+4
				if !inPID && !inCRC && b[i] != orig[i] {
					t.Fatalf("size %d %v: byte %d changed", size, fix, i)
				}
			}
			Rewrite(b, 5, fix)
			if string(b) != string(orig) {
				t.Errorf("size %d %v: rewriting back does not restore the bytes", size, fix)
			}
		}
	}
	// Same PID: nothing is written, not even a CRC repair.
	b := makeBatch(t, 200, 5)
	b[100] ^= 1
	Rewrite(b, 5, Full)
	if b.VerifyCRC() == nil {
		t.Error("Rewrite to the same PID repaired a corrupt CRC")
	}
}

type textValue interface {
	MarshalText() ([]byte, error)
	String() string
}

func textRoundTrip[T textValue, P interface {
	*T
	UnmarshalText([]byte) error
}](t *testing.T, v T, into P) {
	t.Helper()
	b, err := v.MarshalText()
	if err != nil || string(b) != v.String() {
		t.Errorf("MarshalText(%v) = %q, %v", v, b, err)
	}
	if err := into.UnmarshalText(b); err != nil || (*into).String() != v.String() {
		t.Errorf("UnmarshalText(%q) = %v, %v", b, *into, err)
	}
}
