package benchgate

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchunit"
)

// WriteMarkdown writes the comparison as GitHub-flavoured Markdown for a
// job summary or a pull-request comment: a heading with the verdict and the
// gate's rule, a table of the failing rows (when any), and every row in a
// collapsed table below.
func (r *Result) WriteMarkdown(w io.Writer) error {
	fails := r.failures()
	verdict := "PASS"
	if len(fails) > 0 {
		verdict = fmt.Sprintf("FAIL (%d of %d rows)", len(fails), len(r.Rows))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Benchmark gate: %s\n\n", verdict)
	rule := fmt.Sprintf("A row fails on a slowdown that is significant (p < %g) and above its threshold (%.1f%% unless a thresholds file says otherwise), or on any allocs/op increase.",
		r.Options.Alpha, 100*r.Options.Threshold)
	if r.Confirmed {
		rule += fmt.Sprintf(" Time regressions were rerun for %d more rounds and fail only when the rerun confirms them.", r.ConfirmRounds)
	}
	b.WriteString(rule + "\n\n")
	if len(fails) > 0 {
		b.WriteString("#### Failing rows\n\n")
		mdTable(&b, fails)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "<details><summary>All %d rows</summary>\n\n", len(r.Rows))
	mdTable(&b, r.Rows)
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func mdTable(b *strings.Builder, rows []Row) {
	b.WriteString("| package | benchmark | unit | base | head | delta | p | n | threshold | verdict | note |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, row := range rows {
		cls := benchunit.ClassOf(row.Unit)
		th := "-"
		if row.Threshold > 0 && isTime(row.Unit) {
			th = fmt.Sprintf("%.1f%%", 100*row.Threshold)
		}
		verdict := row.Verdict.String()
		if row.Verdict == Regression {
			verdict = "**FAIL**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %d+%d | %s | %s | %s |\n",
			mdCell(row.Pkg), mdCell(row.Name), mdCell(row.Unit),
			mdCell(summary(row.Base, row.NBase, cls)), mdCell(summary(row.Head, row.NHead, cls)),
			pct(row.Delta), pval(row.P), row.NBase, row.NHead, th, verdict, mdCell(row.Note))
	}
}

// mdCell escapes what would break a table cell or turn into markup.
func mdCell(s string) string {
	if s == "" {
		return ""
	}
	r := strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`")
	return r.Replace(s)
}
