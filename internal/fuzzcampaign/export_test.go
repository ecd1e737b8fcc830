package fuzzcampaign

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCorpusFileRoundTrip(t *testing.T) {
	vals := []any{[]byte("a\x00\xff\n\"é"), "s\té", int(-1), int8(-8), int16(300), int32(-70000), int64(math.MinInt64),
		uint(1), uint8(255), uint16(65535), uint32(1 << 31), uint64(math.MaxUint64),
		float32(-1.5), math.Copysign(0, -1), math.Inf(1), true, false, []byte{}, ""}
	b, err := marshalCorpusFile(vals)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseCorpusFile(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !reflect.DeepEqual(got, vals) {
		t.Fatalf("round trip:\n got %#v\nwant %#v\n%s", got, vals, b)
	}
	if math.Signbit(got[13].(float64)) != true {
		t.Error("-0 lost its sign")
	}
	nan, _ := parseCorpusFile([]byte("go test fuzz v1\nmath.Float64frombits(0x7ff8000000000001)\n"))
	if bits := math.Float64bits(nan[0].(float64)); bits != 0x7ff8000000000001 {
		t.Errorf("NaN payload %#x", bits)
	}
}

// The forms go test itself writes are read too.
func TestParseCorpusFileGoForms(t *testing.T) {
	b := []byte("go test fuzz v1\r\nbyte('a')\nrune('é')\nbyte('\\x00')\nfloat64(1.5)\nfloat32(-2)\nint(0x10)\nuint8(7)\nstring(\"x\")\n\n")
	got, err := parseCorpusFile(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{byte('a'), 'é', byte(0), 1.5, float32(-2), 16, uint8(7), "x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	for _, bad := range []string{
		"", "go test fuzz v2\n[]byte(\"\")", "go test fuzz v1\n", "go test fuzz v1\n[]int(1)",
		"go test fuzz v1\nint8(300)", "go test fuzz v1\nstring(1)", "go test fuzz v1\nbool(1)",
		"go test fuzz v1\nfoo(1)", "go test fuzz v1\n[]byte(\"x\"", "go test fuzz v1\nuint8(-1)",
		"go test fuzz v1\nmath.Float32frombits(0x100000000)", "go test fuzz v1\nbyte('€')",
	} {
		if _, err := parseCorpusFile([]byte(bad)); !errors.Is(err, ErrCorpusFile) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}

// consumerDecode decodes data the way go-fuzz-headers' ConsumeFuzzer does
// for go-118-fuzz-build's F.Fuzz (GetBytes, GetString, GetUint64, …), for
// the argument types of want; ok is false when the harness would return
// before calling the fuzz function.
func consumerDecode(data []byte, want []any) (vals []any, ok bool) {
	pos := 0
	take := func(n int) ([]byte, bool) {
		if pos >= len(data) || pos+n > len(data) {
			return nil, false
		}
		b := data[pos : pos+n]
		pos += n
		return b, true
	}
	order := func() (binary.ByteOrder, bool) { // GetBool: even = true = little-endian
		b, ok := take(1)
		if !ok {
			return nil, false
		}
		if b[0]%2 == 0 {
			return binary.LittleEndian, true
		}
		return binary.BigEndian, true
	}
	ordered := func(n int) ([]byte, binary.ByteOrder, bool) { // n bytes, then their order
		b, ok := take(n)
		if !ok {
			return nil, nil, false
		}
		o, ok := order()
		return b, o, ok
	}
	for _, w := range want {
		switch w.(type) {
		case []byte:
			lb, ok := take(4)
			if !ok {
				return nil, false
			}
			l := int(binary.BigEndian.Uint32(lb))
			if l == 0 {
				l = 30
			}
			left := len(data) - pos
			if left <= 0 {
				return nil, false
			}
			if l != left {
				l %= left
			}
			vals = append(vals, data[pos:pos+l])
			pos += l
		case string:
			if pos >= len(data) {
				return nil, false
			}
			lb, ok := take(4)
			if !ok || pos >= len(data) {
				return nil, false
			}
			l := int(binary.BigEndian.Uint32(lb))
			if pos+l > len(data) {
				return nil, false
			}
			vals = append(vals, string(data[pos:pos+l]))
			pos += l
		case bool:
			b, ok := take(1)
			if !ok {
				return nil, false
			}
			vals = append(vals, b[0]%2 == 0)
		case int8, uint8:
			b, ok := take(1)
			if !ok {
				return nil, false
			}
			vals = append(vals, reflect.ValueOf(b[0]).Convert(reflect.TypeOf(w)).Interface())
		case int32, uint32:
			b, ok := take(4)
			if !ok {
				return nil, false
			}
			vals = append(vals, reflect.ValueOf(binary.BigEndian.Uint32(b)).Convert(reflect.TypeOf(w)).Interface())
		case int16, uint16:
			b, o, ok := ordered(2)
			if !ok {
				return nil, false
			}
			vals = append(vals, reflect.ValueOf(o.Uint16(b)).Convert(reflect.TypeOf(w)).Interface())
		case float32:
			b, o, ok := ordered(4)
			if !ok {
				return nil, false
			}
			vals = append(vals, math.Float32frombits(o.Uint32(b)))
		case float64:
			b, o, ok := ordered(8)
			if !ok {
				return nil, false
			}
			vals = append(vals, math.Float64frombits(o.Uint64(b)))
		default: // int, int64, uint, uint64
			b, o, ok := ordered(8)
			if !ok {
				return nil, false
			}
			vals = append(vals, reflect.ValueOf(o.Uint64(b)).Convert(reflect.TypeOf(w)).Interface())
		}
	}
	return vals, true
}

// v2Decode decodes data the way go-118-fuzz-build's input.Source does:
// fixed-size arguments first, then weights, then the []byte/string bytes.
func v2Decode(data []byte, want []any) []any {
	pos := 0
	get := func(n int) []byte {
		b := make([]byte, n)
		if pos < len(data) {
			copy(b, data[pos:])
		}
		pos += n
		return b
	}
	vals := make([]any, len(want))
	var dyn []int
	for i, w := range want {
		switch w.(type) {
		case []byte, string:
			dyn = append(dyn, i)
		case bool:
			vals[i] = get(1)[0]&1 != 0
		case int8, uint8:
			vals[i] = reflect.ValueOf(get(1)[0]).Convert(reflect.TypeOf(w)).Interface()
		case int16, uint16:
			vals[i] = reflect.ValueOf(binary.BigEndian.Uint16(get(2))).Convert(reflect.TypeOf(w)).Interface()
		case int32, uint32:
			vals[i] = reflect.ValueOf(binary.BigEndian.Uint32(get(4))).Convert(reflect.TypeOf(w)).Interface()
		case float32:
			vals[i] = math.Float32frombits(binary.BigEndian.Uint32(get(4)))
		case float64:
			vals[i] = math.Float64frombits(binary.BigEndian.Uint64(get(8)))
		default:
			vals[i] = reflect.ValueOf(binary.BigEndian.Uint64(get(8))).Convert(reflect.TypeOf(w)).Interface()
		}
	}
	weights := get(len(dyn))
	sum := 0
	for _, w := range weights {
		sum += int(w)
	}
	left := max(len(data)-pos, 0)
	for j, i := range dyn {
		size := left / len(dyn)
		if j == len(dyn)-1 {
			size = max(len(data)-pos, 0)
		} else if sum > 0 {
			size = left * int(weights[j]) / sum
		}
		b := get(size)
		if _, ok := want[i].(string); ok {
			vals[i] = string(b)
		} else {
			vals[i] = b
		}
	}
	return vals
}

var encodeCases = [][]any{
	{[]byte("\x00\x01\x02\x03 header bytes")},
	{[]byte{1, 2}, uint8(3), uint8(5)},
	{[]byte{}, uint8(0), uint16(0)},
	{[]byte("123"), uint16(3), uint64(0xdeadbeef), uint8(8), uint32(0x80000000)},
	{[]byte{0, 0, 0, 1}, "abc", int64(-1), int64(2), int16(-3)},
	{[]byte(""), "", int64(0), int64(0), int16(0)},
	{"cluster A\n", []byte{1, 13, 0, 200}},
	{[]byte(strings.Repeat("x", 100)), []byte("yz"), []byte(strings.Repeat("w", 77))},
	{int(-5), int8(-6), int32(-7), uint(8), float32(1.25), float64(-2.5), true, false, []byte("end")},
}

func TestEncodeGoFuzzHeaders(t *testing.T) {
	for _, vals := range encodeCases {
		raw, err := EncodeLibFuzzer(vals, GoFuzzHeaders)
		if err != nil {
			t.Errorf("%v: %v", vals, err)
			continue
		}
		got, ok := consumerDecode(raw, vals)
		if !ok || !reflect.DeepEqual(normalize(got), normalize(vals)) {
			t.Errorf("encoded %x decodes to %#v (called %v), want %#v", raw, got, ok, vals)
		}
	}
	// A single []byte is its 4-byte length and the bytes, not the bytes alone.
	raw, _ := EncodeLibFuzzer([]any{[]byte("ab")}, GoFuzzHeaders)
	if !bytes.Equal(raw, []byte{0, 0, 0, 2, 'a', 'b'}) {
		t.Errorf("single []byte: %x", raw)
	}
	for _, vals := range [][]any{{[]byte{}}, {uint8(1), ""}, {[]int{1}}} {
		if _, err := EncodeLibFuzzer(vals, GoFuzzHeaders); !errors.Is(err, ErrUnencodable) {
			t.Errorf("%#v: err = %v, want ErrUnencodable", vals, err)
		}
	}
}

func TestEncodeV2(t *testing.T) {
	for _, vals := range append(encodeCases, []any{[]byte{}}, []any{uint8(1), ""}) {
		raw, err := EncodeLibFuzzer(vals, V2)
		if err != nil {
			t.Errorf("%v: %v", vals, err)
			continue
		}
		if got := v2Decode(raw, vals); !reflect.DeepEqual(normalize(got), normalize(vals)) {
			t.Errorf("encoded %x decodes to %#v, want %#v", raw, got, vals)
		}
	}
	// Weight bytes cannot give 2 of 1079 bytes to one argument and 1000 to
	// another: the split is refused rather than encoded wrong.
	long := []any{[]byte(strings.Repeat("x", 1000)), []byte("yz"), []byte(strings.Repeat("w", 77))}
	if _, err := EncodeLibFuzzer(long, V2); !errors.Is(err, ErrUnencodable) {
		t.Errorf("unsplittable lengths: err = %v", err)
	}
	if _, err := EncodeLibFuzzer(long, GoFuzzHeaders); err != nil {
		t.Errorf("go-fuzz-headers has explicit lengths: %v", err)
	}
	raw, _ := EncodeLibFuzzer([]any{[]byte("ab")}, V2)
	if !bytes.Equal(raw, []byte{0, 'a', 'b'}) {
		t.Errorf("single []byte: %x (one weight byte, then the bytes)", raw)
	}
	if _, err := EncodeLibFuzzer(nil, "raw"); err == nil || !strings.Contains(err.Error(), "unknown libFuzzer encoding") {
		t.Errorf("unknown encoding: %v", err)
	}
}

// normalize makes empty and nil byte slices compare equal.
func normalize(vals []any) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		if b, ok := v.([]byte); ok && len(b) == 0 {
			v = []byte{}
		}
		out[i] = v
	}
	return out
}

func TestRewriteFuzzCalls(t *testing.T) {
	src := []byte(`package p_test

import "testing"

// FuzzA is rewritten; the f.Fuzz of FuzzB is not, it is not wanted.
func FuzzA(ff *testing.F) {
	ff.Add([]byte("x"))
	ff.Fuzz(func(t *testing.T, b []byte) { _ = b })
}

func FuzzB(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }

func FuzzC(f *testing.F) {
	other.Fuzz(func(t *testing.T, s string) {})
	f.Fuzz(check)
}
`)
	out, pkg, names, err := rewriteFuzzCalls("x_test.go", src, map[string]bool{"FuzzA": true, "FuzzC": true})
	if err != nil {
		t.Fatal(err)
	}
	if pkg != "p_test" || strings.Join(names, ",") != "FuzzA,FuzzC" {
		t.Fatalf("pkg %q names %v", pkg, names)
	}
	for _, want := range []string{
		"ff.Fuzz(mirrorpathSeedHook(ff, func(t *testing.T, b []byte) { _ = b }))",
		"func FuzzB(f *testing.F) { f.Fuzz(func(t *testing.T, s string) {}) }",
		"other.Fuzz(func(t *testing.T, s string) {})",
		"f.Fuzz(mirrorpathSeedHook(f, check))",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("rewritten source lacks %q:\n%s", want, out)
		}
	}
	if _, _, _, err := rewriteFuzzCalls("bad_test.go", []byte("package"), nil); !errors.Is(err, ErrSeeds) {
		t.Errorf("unparsable file: %v", err)
	}
}

func TestBuildOverlayExtraSeeds(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "a_test.go"), []byte("package a\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) { f.Fuzz(func(t *testing.T, b []byte, n int64) {}) }\n"), 0o644)
	tg := []Target{{ImportPath: "m/a", Dir: dir, Rel: "./a", Name: "FuzzA"}}
	ov, err := buildOverlay(dir, tg, map[string][][]any{"FuzzA": {{[]byte("q"), int64(-2)}, {[]byte{}, int64(1)}}}, tmp)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(ov)
	hook, _ := os.ReadFile(filepath.Join(tmp, "hook_a.go"))
	if !bytes.Contains(js, []byte("zz_mirrorpath_seed_hook_a_test.go")) || !bytes.Contains(js, []byte("a_test.go")) {
		t.Errorf("overlay %s", js)
	}
	if !bytes.Contains(hook, []byte("\t\"FuzzA\": {\n\t\t{[]byte(\"q\"), int64(-2)},\n\t\t{[]byte(\"\"), int64(1)},\n\t},\n")) {
		t.Errorf("hook lacks the extra seeds:\n%s", hook)
	}
	_, err = buildOverlay(dir, []Target{{Dir: dir, Rel: "./a", Name: "FuzzNone"}}, nil, t.TempDir())
	if !errors.Is(err, ErrSeeds) || !strings.Contains(err.Error(), "no f.Fuzz call found in func FuzzNone") {
		t.Errorf("missing target: %v", err)
	}
}

func TestMergeProfiles(t *testing.T) {
	dir := t.TempDir()
	a, b, out := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "out")
	os.WriteFile(a, []byte("mode: set\nm/p.go:1.1,2.2 1 1\nm/p.go:3.1,4.2 2 0\n"), 0o644)
	os.WriteFile(b, []byte("mode: set\nm/p.go:1.1,2.2 1 0\nm/p.go:3.1,4.2 2 1\nm/q.go:1.1,1.9 1 0\n"), 0o644)
	if err := mergeProfiles([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if want := "mode: set\nm/p.go:1.1,2.2 1 1\nm/p.go:3.1,4.2 2 1\nm/q.go:1.1,1.9 1 0\n"; string(got) != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	os.WriteFile(b, []byte("mode: count\nm/p.go:1.1,2.2 1 3\n"), 0o644)
	if err := mergeProfiles([]string{a, b}, out); !errors.Is(err, ErrCoverage) {
		t.Errorf("mixed modes: %v", err)
	}
	os.WriteFile(b, []byte("mode: set\nm/p.go:1.1,2.2 1 x\n"), 0o644)
	if err := mergeProfiles([]string{a, b}, out); err == nil || !strings.Contains(err.Error(), ":2: bad count") {
		t.Errorf("bad count: %v", err)
	}
	if got := totalCoverage("p.go:3:\tF\t40.0%\ntotal:\t\t\t\t(statements)\t61.3%\n"); got != "61.3%" {
		t.Errorf("total %q", got)
	}
}

func TestArchiveName(t *testing.T) {
	tg := Target{ImportPath: "example.com/m/internal/flamegraph", Dir: "/src/m/internal/flamegraph", Name: "FuzzParse"}
	if got := tg.ArchiveName(); got != "flamegraph_FuzzParse" {
		t.Errorf("ArchiveName = %q (build.sh names the fuzzer <package base>_<FuzzX>)", got)
	}
}
