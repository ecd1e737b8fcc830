package flamegraph

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// pb is a minimal protobuf encoder for building test profiles.
type pb []byte

func (b pb) varint(v uint64) pb {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
func (b pb) uint(field, v uint64) pb { return b.varint(field << 3).varint(v) }
func (b pb) msg(field uint64, m []byte) pb {
	return append(b.varint(field<<3|2).varint(uint64(len(m))), m...)
}
func (b pb) packed(field uint64, vs ...uint64) pb {
	var m pb
	for _, v := range vs {
		m = m.varint(v)
	}
	return b.msg(field, m)
}

// synthetic builds a profile with two sample types and an inlined frame:
//
//	main.main → example.com/p.Outer → [example.com/p.inner inlined] : 30
//	main.main → runtime.mallocgc                                 : 12
func synthetic() []byte {
	var p pb
	strs := []string{"", "samples", "count", "cpu", "nanoseconds", "main.main", "example.com/p.Outer", "example.com/p.inner", "runtime.mallocgc", "p.go"}
	p = p.msg(1, pb{}.uint(1, 1).uint(2, 2))
	p = p.msg(1, pb{}.uint(1, 3).uint(2, 4))
	p = p.msg(2, pb{}.packed(1, 2, 1).packed(2, 3, 30))             // leaf first: loc 2 (Outer+inner), loc 1 (main)
	p = p.msg(2, pb{}.uint(1, 3).uint(1, 1).uint(2, 1).uint(2, 12)) // unpacked
	p = p.msg(4, pb{}.uint(1, 1).msg(4, pb{}.uint(1, 1).uint(2, 10)))
	p = p.msg(4, pb{}.uint(1, 2).msg(4, pb{}.uint(1, 3).uint(2, 7)).msg(4, pb{}.uint(1, 2).uint(2, 20)))
	p = p.msg(4, pb{}.uint(1, 3).uint(3, 0xdead).msg(4, pb{}.uint(1, 4)))
	for i, n := range []uint64{5, 6, 7, 8} {
		p = p.msg(5, pb{}.uint(1, uint64(i+1)).uint(2, n).uint(3, n).uint(4, 9))
	}
	p = p.msg(3, pb{}.uint(1, 1))                         // a mapping: skipped
	p = append(p.varint(30<<3|1), 1, 2, 3, 4, 5, 6, 7, 8) // a field profile.proto lacks: skipped
	p = p.uint(12, 10000000).uint(10, 1e9).uint(14, 3)
	p = p.msg(11, pb{}.uint(1, 3).uint(2, 4))
	for _, s := range strs { // string table last: references resolve afterwards
		p = p.msg(6, []byte(s))
	}
	return []byte(p)
}

func TestParseSynthetic(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(synthetic())
	zw.Close()
	for name, data := range map[string][]byte{"raw": synthetic(), "gzip": z.Bytes()} {
		p, err := Parse(data, DefaultLimits)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(p.SampleType) != 2 || p.SampleType[1].Type != "cpu" || p.SampleType[1].Unit != "nanoseconds" ||
			p.DefaultSampleType != "cpu" {
			t.Fatalf("%s: sample types %v default %q", name, p.SampleType, p.DefaultSampleType)
		}
		if p.Period != 10000000 || p.DurationNanos != 1e9 || p.PeriodType.Unit != "nanoseconds" {
			t.Fatalf("%s: period %d %v duration %d", name, p.Period, p.PeriodType, p.DurationNanos)
		}
		if len(p.Sample) != 2 || len(p.Sample[0].Location) != 2 || p.Sample[1].Value[1] != 12 {
			t.Fatalf("%s: samples %+v", name, p.Sample)
		}
		i, err := SampleIndex(p, "")
		if err != nil || i != 1 {
			t.Fatalf("SampleIndex(\"\") = %d, %v", i, err)
		}
		root := Tree(p, i)
		if root.Value != 42 || len(root.Children) != 1 {
			t.Fatalf("root %d children %d", root.Value, len(root.Children))
		}
		m := root.Children[0]
		if m.Name != "main.main" || m.Value != 42 || len(m.Children) != 2 {
			t.Fatalf("main: %+v", m)
		}
		outer := m.Children[0]
		if outer.Name != "example.com/p.Outer" || outer.Value != 30 ||
			len(outer.Children) != 1 || outer.Children[0].Name != "example.com/p.inner" {
			t.Fatalf("inlined frames not expanded caller-first: %+v", outer)
		}
		if m.Children[1].Name != "runtime.mallocgc" || m.Children[1].Value != 12 {
			t.Fatalf("second child %+v", m.Children[1])
		}
	}
}

func TestParseRejects(t *testing.T) {
	good := synthetic()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"truncated", good[:len(good)-3]},
		{"group wire type", pb{}.varint(1<<3 | 3)},
		{"field zero", pb{}.varint(0)},
		{"long varint", bytes.Repeat([]byte{0xff}, 11)},
		{"string index", pb{}.msg(1, pb{}.uint(1, 7)).msg(6, nil)},
		{"location without function", pb{}.msg(4, pb{}.uint(1, 1).msg(4, pb{}.uint(1, 9))).msg(6, nil)},
		{"sample without location", pb{}.msg(1, pb{}.uint(1, 0)).msg(2, pb{}.uint(1, 4).uint(2, 1)).msg(6, nil)},
		{"values vs types", pb{}.msg(2, pb{}.uint(2, 4)).msg(6, nil)},
		{"huge length", pb{}.varint(6<<3 | 2).varint(1 << 40)},
		{"bad gzip", []byte{0x1f, 0x8b, 0, 0}},
	} {
		if p, err := Parse(tc.data, DefaultLimits); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v (profile %v), want ErrCorrupt", tc.name, err, p)
		}
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(make([]byte, 4096))
	zw.Close()
	if _, err := Parse(z.Bytes(), Limits{MaxDecompressed: 1000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("gzip bomb: %v", err)
	}
}

func TestSymbolPackage(t *testing.T) {
	for sym, want := range map[string]string{
		"runtime.mallocgc": "runtime",
		"github.com/mirrorpath/mirrorpath/codec.(*B).CRC": "github.com/mirrorpath/mirrorpath/codec",
		"github.com/a/b.F.func1":                          "github.com/a/b",
		"example.com/p.G[go.shape.struct { a/b.c int }]":  "example.com/p",
		"main.main": "main",
		"nodot":     "nodot",
	} {
		if got := symbolPackage(sym); got != want {
			t.Errorf("symbolPackage(%q) = %q, want %q", sym, got, want)
		}
	}
}

//go:noinline
func burnCPU(n int) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < n; i++ {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}

var sink uint64

// burnCPUFor runs burnCPU until the process has used d of CPU time. The CPU
// profiler samples CPU time, not wall time, so d of CPU yields about d/10ms
// samples however loaded the machine is; a wall-clock loop would not. The
// bound on the work (2^36 iterations, seconds of CPU anywhere) only stops a
// clock that does not advance.
func burnCPUFor(t *testing.T, d time.Duration, chunk int) {
	t.Helper()
	start := cputime.Process()
	for done := 0; done < 1<<36; done += chunk {
		sink += burnCPU(chunk)
		if cputime.Process()-start >= d {
			return
		}
	}
	t.Fatalf("2^36 iterations of burnCPU measured %v of CPU, want %v", cputime.Process()-start, d)
}

// TestRealCPUProfile captures a CPU profile of burnCPU with runtime/pprof,
// decodes it and renders it.
func TestRealCPUProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("CPU profiling unavailable: %v", err)
	}
	burnCPUFor(t, 200*time.Millisecond, 1<<16)
	pprof.StopCPUProfile()

	p, err := Parse(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	i, err := SampleIndex(p, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if p.SampleType[i].Unit != "nanoseconds" || p.Period <= 0 {
		t.Fatalf("sample type %v period %d", p.SampleType[i], p.Period)
	}
	root := Tree(p, i)
	burn := find(root, "flamegraph.burnCPU")
	if burn == nil {
		t.Fatalf("no sample landed in burnCPU after 200 ms of its CPU (%d samples)", len(p.Sample))
	}
	if burn.Value <= 0 || burn.Value > root.Value {
		t.Fatalf("burnCPU %d of %d", burn.Value, root.Value)
	}
	svg := render(t, root, SVGOptions{Title: "cpu <test>", Unit: "nanoseconds"})
	if !strings.Contains(svg, "internal/flamegraph.burnCPU") || !strings.Contains(svg, ">flamegraph.burnCPU") || !strings.Contains(svg, "cpu &lt;test&gt;") {
		t.Fatal("SVG lacks the burnCPU frame or the escaped title")
	}
}

// TestRealAllocProfile decodes the runtime's allocs profile.
func TestRealAllocProfile(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	for i := 0; i < 100; i++ {
		allocSink = make([]byte, 1000)
	}
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	i, err := SampleIndex(p, "alloc_space")
	if err != nil {
		t.Fatal(err)
	}
	n := find(Tree(p, i), "flamegraph.TestRealAllocProfile")
	if n == nil || n.Value < 100*1000 {
		t.Fatalf("alloc_space under the test: %+v", n)
	}
	if _, err := SampleIndex(p, "nope"); !errors.Is(err, ErrNoSampleType) {
		t.Fatalf("unknown sample type: %v", err)
	}
}

var allocSink []byte

func find(n *Node, suffix string) *Node {
	if strings.HasSuffix(n.Name, suffix) {
		return n
	}
	for _, c := range n.Children {
		if f := find(c, suffix); f != nil {
			return f
		}
	}
	return nil
}

// render writes root as SVG and checks that it is well-formed XML whose
// frames carry <title> tooltips.
func render(t *testing.T, root *Node, opt SVGOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := WriteSVG(&out, root, opt); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(out.Bytes()))
	var rects, titles int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "title":
				titles++
			}
		}
	}
	if root.Value > 0 && (titles == 0 || rects != titles+1) { // +1: the background
		t.Fatalf("%d rects, %d titles", rects, titles)
	}
	return out.String()
}

func TestSVGWidthsProportional(t *testing.T) {
	p, err := Parse(synthetic(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	svg := render(t, Tree(p, 1), SVGOptions{Title: "t", Unit: "nanoseconds", Width: 420})
	// Usable width 400 px for 42 units: Outer (30) is 285.71 px, mallocgc (12) 114.29 px.
	for _, want := range []string{`width="400.00"`, `width="285.71"`, `width="114.29"`, "example.com/p.Outer\n30ns (71.43%)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// One package, one colour: Outer and inner share a fill.
	if colour("example.com/p.Outer") != colour("example.com/p.inner") || colour("runtime.a") == colour("example.com/p.Outer") {
		t.Error("colours are not per package")
	}
	empty := render(t, &Node{Name: "root"}, SVGOptions{})
	if !strings.Contains(empty, "no samples") {
		t.Error("empty graph not labelled")
	}
}

// FuzzParse: hostile profiles never panic, and whatever decodes also builds a
// tree and renders well-formed SVG; allocation stays bounded by the input.
func FuzzParse(f *testing.F) {
	f.Add(synthetic())
	f.Add([]byte{})
	f.Add([]byte(pb{}.msg(6, []byte("x"))))
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(synthetic())
	zw.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, Limits{MaxDecompressed: 1 << 20})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for i := range p.SampleType {
			root := Tree(p, i)
			var out bytes.Buffer
			if err := WriteSVG(&out, root, SVGOptions{Title: string(data[:min(len(data), 20)])}); err != nil {
				t.Fatal(err)
			}
			d := xml.NewDecoder(&out)
			for {
				if _, err := d.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("bad XML: %v", err)
				}
			}
		}
	})
}

func TestTop(t *testing.T) {
	p, err := Parse(synthetic(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	top := Top(p, 1, 10)
	// Leaves: inner (30, inlined into Outer) and mallocgc (12); main is only cumulative.
	want := []Entry{{"example.com/p.inner", 30, 30}, {"runtime.mallocgc", 12, 12}, {"main.main", 0, 42}, {"example.com/p.Outer", 0, 30}}
	if len(top) != len(want) {
		t.Fatalf("top %+v", top)
	}
	for i := range want {
		if top[i] != want[i] {
			t.Errorf("top[%d] = %+v, want %+v", i, top[i], want[i])
		}
	}
	if got := Top(p, 1, 1); len(got) != 1 || got[0].Name != "example.com/p.inner" {
		t.Errorf("top 1 = %+v", got)
	}
}
