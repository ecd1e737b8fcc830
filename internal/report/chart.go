package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ChartKind selects how a Chart draws its series.
type ChartKind int

const (
	Line ChartKind = iota // one polyline with markers per series
	Bar                   // grouped bars, one group per X category
)

// Series is one named line (or bar colour); Y[i] belongs to Chart.X[i]; a
// NaN is a missing point (the line breaks there, the bar is left out).
type Series struct {
	Name string
	Y    []float64
}

// Chart is a categorical-X chart. X categories are spaced evenly (batch
// sizes and producer counts span decades, so even spacing reads like a log
// axis); Y is linear from zero, or logarithmic when LogY is set.
type Chart struct {
	Kind           ChartKind
	Title          string
	XLabel, YLabel string
	X              []string
	Series         []Series
	LogY           bool
	// RefY draws a dashed horizontal reference line (e.g. ratio 1.0) when > 0.
	RefY float64
}

// palette: 10 colours distinguishable in print and by most colour-blind readers.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f"}

const (
	chartW, chartH              = 860, 460
	padL, padR, padT, padB      = 78, 210, 48, 62
	plotW, plotH                = chartW - padL - padR, chartH - padT - padB
	legendRow                   = 18
	labelFont, tickFont, titleF = 13, 11, 16
)

// HasData reports whether any series holds a finite point.
func (c *Chart) HasData() bool {
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) && (!c.LogY || y > 0) {
				return true
			}
		}
	}
	return false
}

// WriteSVG writes the chart as a standalone SVG document (no scripts, no
// external fonts): title, axes with ticks and labels, the series and a
// legend. Each point carries a <title> tooltip with its exact value.
func (c *Chart) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">
<rect width="%d" height="%d" fill="#fff"/>
<text x="%d" y="26" font-size="%d" text-anchor="middle" font-weight="bold">%s</text>
`, chartW, chartH, chartW, chartH, chartW, chartH, padL+plotW/2, titleF, esc(c.Title))

	lo, hi, ticks := c.yScale()
	yPos := func(v float64) float64 {
		if c.LogY {
			return float64(padT+plotH) - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*plotH
		}
		return float64(padT+plotH) - (v-lo)/(hi-lo)*plotH
	}
	n := max(len(c.X), 1)
	band := float64(plotW) / float64(n)
	xPos := func(i int) float64 { return float64(padL) + band*(float64(i)+0.5) }

	// Grid and Y ticks.
	for _, t := range ticks {
		y := yPos(t)
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e3e3e3"/>`+"\n", padL, y, padL+plotW, y)
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", padL-6, y+4, tickFont, formatTick(t))
	}
	if c.RefY > 0 && c.RefY >= lo && c.RefY <= hi {
		y := yPos(c.RefY)
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#444" stroke-dasharray="5,4"/>`+"\n", padL, y, padL+plotW, y)
	}
	// Axes.
	fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", padL, padT, padL, padT+plotH)
	fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", padL, padT+plotH, padL+plotW, padT+plotH)
	for i, x := range c.X {
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>`+"\n", xPos(i), padT+plotH, xPos(i), padT+plotH+5)
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", xPos(i), padT+plotH+19, tickFont, esc(x))
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="%d" text-anchor="middle">%s</text>`+"\n", padL+plotW/2, chartH-16, labelFont, esc(c.XLabel))
	fmt.Fprintf(bw, `<text x="18" y="%d" font-size="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>`+"\n",
		padT+plotH/2, labelFont, padT+plotH/2, esc(c.YLabel))

	if !c.HasData() {
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="%d" text-anchor="middle" fill="#900">no data</text>`+"\n", padL+plotW/2, padT+plotH/2, labelFont)
	}
	ok := func(y float64) bool { return !math.IsNaN(y) && !math.IsInf(y, 0) && (!c.LogY || y > 0) }
	for si, s := range c.Series {
		col := palette[si%len(palette)]
		switch c.Kind {
		case Line:
			var pts []string
			flush := func() {
				if len(pts) > 1 {
					fmt.Fprintf(bw, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(pts, " "))
				}
				pts = pts[:0]
			}
			for i, y := range s.Y {
				if i >= len(c.X) || !ok(y) {
					flush()
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", xPos(i), yPos(y)))
			}
			flush()
			for i, y := range s.Y {
				if i < len(c.X) && ok(y) {
					fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s, %s: %s</title></circle>`+"\n",
						xPos(i), yPos(y), col, esc(s.Name), esc(c.X[i]), formatTick(y))
				}
			}
		case Bar:
			bwid := band * 0.8 / float64(max(len(c.Series), 1))
			for i, y := range s.Y {
				if i >= len(c.X) || !ok(y) {
					continue
				}
				x := float64(padL) + band*float64(i) + band*0.1 + bwid*float64(si)
				base := yPos(lo)
				top := yPos(y)
				fmt.Fprintf(bw, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
					x, top, bwid, base-top, col, esc(s.Name), esc(c.X[i]), formatTick(y))
			}
		}
		ly := padT + 8 + si*legendRow
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d" font-size="%d">%s</text>`+"\n",
			padL+plotW+16, ly, col, padL+plotW+36, ly+9, tickFont, esc(s.Name))
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// yScale returns the axis range and tick values.
func (c *Chart) yScale() (lo, hi float64, ticks []float64) {
	mn, mx := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, y := range s.Y {
			if math.IsNaN(y) || math.IsInf(y, 0) || (c.LogY && y <= 0) {
				continue
			}
			mn, mx = math.Min(mn, y), math.Max(mx, y)
		}
	}
	if c.RefY > 0 {
		mn, mx = math.Min(mn, c.RefY), math.Max(mx, c.RefY)
	}
	if math.IsInf(mn, 1) { // no data
		mn, mx = 1, 10
	}
	if c.LogY {
		lo = math.Pow(10, math.Floor(math.Log10(mn)))
		hi = math.Pow(10, math.Ceil(math.Log10(mx)))
		if hi <= lo {
			hi = lo * 10
		}
		for t := lo; t <= hi*1.0001; t *= 10 {
			ticks = append(ticks, t)
		}
		return lo, hi, ticks
	}
	if mx <= 0 {
		mx = 1
	}
	step := niceStep(mx / 5)
	hi = math.Ceil(mx/step) * step
	for t := 0.0; t <= hi*1.0001; t += step {
		ticks = append(ticks, t)
	}
	return 0, hi, ticks
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// formatTick prints a value with up to 3 significant digits and an SI suffix.
func formatTick(v float64) string {
	av := math.Abs(v)
	switch {
	case av == 0:
		return "0"
	case av >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 3, 64) + "G"
	case av >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case av >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func esc(s string) string { return xmlEscaper.Replace(strings.ToValidUTF8(s, "")) }
