package flamegraph

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// ErrNoSampleType is returned by SampleIndex for an unknown sample type.
var ErrNoSampleType = errors.New("flamegraph: no such sample type")

// SampleIndex returns the index of the sample value named typ (for example
// "cpu", "samples", "alloc_space"). An empty typ selects the profile's
// default sample type, or the last one when the profile names none, as pprof
// does.
func SampleIndex(p *profile.Profile, typ string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("%w: profile has no sample types", ErrNoSampleType)
	}
	if typ == "" {
		typ = p.DefaultSampleType
		if typ == "" {
			return len(p.SampleType) - 1, nil
		}
	}
	for i, st := range p.SampleType {
		if st.Type == typ {
			return i, nil
		}
	}
	var names []string
	for _, st := range p.SampleType {
		names = append(names, st.Type)
	}
	return 0, fmt.Errorf("%w %q (have %s)", ErrNoSampleType, typ, strings.Join(names, ", "))
}

// Node is one frame of the merged call tree: Value is the sum of the chosen
// sample value over every stack that passes through it.
type Node struct {
	Name     string
	Value    int64
	Children []*Node // sorted by name
	index    map[string]*Node
}

func (n *Node) child(name string) *Node {
	if c, ok := n.index[name]; ok {
		return c
	}
	c := &Node{Name: name}
	if n.index == nil {
		n.index = map[string]*Node{}
	}
	n.index[name] = c
	n.Children = append(n.Children, c)
	return c
}

// Tree merges the samples of p into a call tree rooted at a node named
// "root", using sample value index (see SampleIndex). Inlined frames become
// frames of their own. Samples with a value ≤ 0 are left out.
func Tree(p *profile.Profile, index int) *Node {
	root := &Node{Name: "root"}
	for _, s := range p.Sample {
		if index < 0 || index >= len(s.Value) || s.Value[index] <= 0 {
			continue
		}
		v := s.Value[index]
		n := root
		n.Value += v
		for i := len(s.Location) - 1; i >= 0; i-- {
			lines := s.Location[i].Line
			if len(lines) == 0 {
				n = n.child(fmt.Sprintf("0x%x", s.Location[i].ID))
				n.Value += v
				continue
			}
			for j := len(lines) - 1; j >= 0; j-- {
				n = n.child(lines[j].Function.Name)
				n.Value += v
			}
		}
	}
	var sortTree func(*Node)
	sortTree = func(n *Node) {
		sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].Name < n.Children[j].Name })
		for _, c := range n.Children {
			sortTree(c)
		}
	}
	sortTree(root)
	return root
}

// symbolPackage returns the Go package path of a symbol name:
// "github.com/a/b.(*T).M" → "github.com/a/b", "runtime.mallocgc" → "runtime".
func symbolPackage(symbol string) string {
	if i := strings.IndexByte(symbol, '['); i >= 0 { // generic instantiation
		symbol = symbol[:i]
	}
	slash := strings.LastIndexByte(symbol, '/')
	dot := strings.IndexByte(symbol[slash+1:], '.')
	if dot < 0 {
		return symbol
	}
	return symbol[:slash+1+dot]
}

// shortName drops the directories of a symbol's package path for frame
// labels: "github.com/a/b.(*T).M" → "b.(*T).M". Tooltips keep the full name.
func shortName(symbol string) string {
	pkg := symbolPackage(symbol)
	return symbol[strings.LastIndexByte(pkg, '/')+1:]
}

// SVGOptions configure WriteSVG.
type SVGOptions struct {
	Title string
	Unit  string // unit of Node.Value: "nanoseconds", "bytes", "count", …
	Width int    // pixels; default 1200
}

const (
	rowHeight = 17
	topMargin = 44
	sideMarg  = 10
	charWidth = 6.6 // of 11px monospace
)

// WriteSVG draws root as an icicle flame graph: the root on top, callees
// below their callers, frame widths proportional to Value, siblings sorted
// by name. Every frame carries a <title> tooltip with its value and share;
// colours are derived from the frame's Go package (standard library in blues,
// everything else in warm tones), so one package keeps one colour. The output
// is a standalone SVG document: no scripts, fonts or links.
func WriteSVG(w io.Writer, root *Node, opt SVGOptions) error {
	width := opt.Width
	if width <= 0 {
		width = 1200
	}
	depth := maxDepth(root)
	height := topMargin + depth*rowHeight + 24
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="11">
<style>rect.f{stroke:#fff;stroke-width:0.5} rect.f:hover{stroke:#000;stroke-width:1} text.l{pointer-events:none}</style>
<rect x="0" y="0" width="%d" height="%d" fill="#fdfdf8"/>
`, width, height, width, height, width, height)
	fmt.Fprintf(bw, "<text x=\"%d\" y=\"20\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n", width/2, esc(opt.Title))
	fmt.Fprintf(bw, "<text x=\"%d\" y=\"36\" fill=\"#555\">total %s · %d frames deep · hover a frame for its share</text>\n",
		sideMarg, esc(formatValue(root.Value, opt.Unit)), depth)
	if root.Value <= 0 {
		fmt.Fprintf(bw, "<text x=\"%d\" y=\"%d\">no samples</text>\n", sideMarg, topMargin+12)
	} else {
		scale := float64(width-2*sideMarg) / float64(root.Value)
		drawNode(bw, root, root.Value, float64(sideMarg), 0, scale, opt.Unit)
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

func drawNode(w *bufio.Writer, n *Node, total int64, x float64, level int, scale float64, unit string) {
	wd := float64(n.Value) * scale
	if wd < 0.3 {
		return
	}
	y := topMargin + level*rowHeight
	fmt.Fprintf(w, `<g><title>%s
%s (%.2f%%)</title><rect class="f" x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"/>`,
		esc(n.Name), esc(formatValue(n.Value, unit)), 100*float64(n.Value)/float64(total),
		x, y, wd, rowHeight-1, colour(n.Name))
	if chars := int((wd - 6) / charWidth); chars >= 3 {
		label := shortName(n.Name)
		if r := []rune(label); len(r) > chars {
			label = string(r[:chars-1]) + "…"
		}
		fmt.Fprintf(w, `<text class="l" x="%.2f" y="%d">%s</text>`, x+3, y+12, esc(label))
	}
	fmt.Fprintln(w, "</g>")
	cx := x
	for _, c := range n.Children {
		drawNode(w, c, total, cx, level+1, scale, unit)
		cx += float64(c.Value) * scale
	}
}

func maxDepth(n *Node) int {
	d := 0
	for _, c := range n.Children {
		d = max(d, maxDepth(c))
	}
	return d + 1
}

// colour maps a frame to a fill colour by its package.
func colour(name string) string {
	if name == "root" {
		return "hsl(0,0%,80%)"
	}
	pkg := symbolPackage(name)
	h := fnv.New32a()
	h.Write([]byte(pkg))
	x := h.Sum32()
	first, _, _ := strings.Cut(pkg, "/")
	if !strings.Contains(first, ".") { // standard library and main
		return fmt.Sprintf("hsl(%d,55%%,%d%%)", 190+x%60, 72+(x>>8)%10)
	}
	return fmt.Sprintf("hsl(%d,75%%,%d%%)", x%55, 60+(x>>8)%12)
}

func formatValue(v int64, unit string) string {
	switch unit {
	case "nanoseconds":
		return time.Duration(v).String()
	case "bytes":
		f, u := float64(v), "B"
		for _, p := range []string{"KiB", "MiB", "GiB", "TiB"} {
			if f < 1024 {
				break
			}
			f, u = f/1024, p
		}
		return fmt.Sprintf("%.4g %s", f, u)
	case "":
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d %s", v, unit)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// esc escapes text for XML and drops bytes XML 1.0 cannot carry.
func esc(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFD && r < 0xFFFE) || r > 0xFFFF {
			return r
		}
		return -1
	}, s)
	return xmlEscaper.Replace(strings.ToValidUTF8(s, ""))
}

// Entry is one function's share of a profile.
type Entry struct {
	Name      string
	Flat, Cum int64 // value in the function itself / in it and its callees
}

// Top returns the n functions with the largest flat value of sample index,
// as `pprof -top` lists them. A function that recurses counts once in Cum.
func Top(p *profile.Profile, index, n int) []Entry {
	flat, cum := map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		if index < 0 || index >= len(s.Value) || s.Value[index] <= 0 {
			continue
		}
		v := s.Value[index]
		seen := map[string]bool{}
		leaf := true
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				name := ln.Function.Name
				if leaf {
					flat[name] += v
					leaf = false
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	out := make([]Entry, 0, len(cum))
	for name, c := range cum {
		out = append(out, Entry{Name: name, Flat: flat[name], Cum: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Flat != out[j].Flat {
			return out[i].Flat > out[j].Flat
		}
		if out[i].Cum != out[j].Cum {
			return out[i].Cum > out[j].Cum
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// FormatValue renders v in unit the way the flame graph's tooltips do.
func FormatValue(v int64, unit string) string { return formatValue(v, unit) }
