package benchgate

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// WriteText writes a benchstat-like table: one block per package, a row per
// benchmark and unit with both medians, their 95% ranges, the change, the
// p-value and the verdict, then a closing line saying whether the gate passed.
func (r *Result) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	pkg := "\x00"
	for _, row := range r.Rows {
		if row.Pkg != pkg {
			if pkg != "\x00" {
				fmt.Fprintln(tw)
			}
			pkg = row.Pkg
			fmt.Fprintf(tw, "pkg: %s\n", pkg)
			fmt.Fprintln(tw, "benchmark\tunit\tbase\thead\tdelta\tp\tn\tverdict\tnote")
		}
		cls := benchunit.ClassOf(row.Unit)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d+%d\t%s\t%s\n",
			row.Name, row.Unit, summary(row.Base, row.NBase, cls), summary(row.Head, row.NHead, cls),
			pct(row.Delta), pval(row.P), row.NBase, row.NHead, row.Verdict, row.Note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fails := r.failures()
	var err error
	if len(fails) == 0 {
		_, err = fmt.Fprintf(w, "\ngate: PASS (%d rows; fails on p < %g and slowdown > %.1f%%, or any allocs/op increase)\n",
			len(r.Rows), r.Options.Alpha, 100*r.Options.Threshold)
	} else {
		_, err = fmt.Fprintf(w, "\ngate: FAIL (%d of %d rows)\n", len(fails), len(r.Rows))
		for _, f := range fails {
			fmt.Fprintf(w, "  %s %s %s: %s\n", f.Pkg, f.Name, f.Unit, f.Note)
		}
	}
	return err
}

func summary(s benchmath.Summary, n int, cls benchunit.Class) string {
	if n == 0 {
		return "-"
	}
	out := benchunit.Scale(s.Center, cls)
	if r := s.PctRangeString(); r != "" {
		out += " ± " + r
	}
	return out
}

func pct(d float64) string {
	switch {
	case math.IsNaN(d):
		return "-"
	case math.IsInf(d, 1):
		return "+∞%"
	}
	return fmt.Sprintf("%+.2f%%", 100*d)
}

func pval(p float64) string {
	if math.IsNaN(p) {
		return "-"
	}
	return fmt.Sprintf("%.3g", p)
}

// WriteCSV writes one record per row with raw numbers (medians in the tidied
// unit, seconds for sec/op) for spreadsheets and CI artifacts.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"pkg", "benchmark", "unit", "base_median", "base_n", "head_median", "head_n", "delta", "p", "verdict", "note"})
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, row := range r.Rows {
		cw.Write([]string{row.Pkg, row.Name, row.Unit,
			f(row.Base.Center), strconv.Itoa(row.NBase), f(row.Head.Center), strconv.Itoa(row.NHead),
			f(row.Delta), f(row.P), row.Verdict.String(), row.Note})
	}
	cw.Flush()
	return cw.Error()
}
