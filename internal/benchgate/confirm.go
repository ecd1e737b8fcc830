package benchgate

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A confirming run. Before the gate fails on a time regression it reruns
// only the flagged benchmarks, interleaved, for more rounds, and compares
// those fresh samples alone: a row fails only when the first run and the
// confirming run both find it slower beyond its threshold. Fresh samples
// rather than the pooled ones, because the rerun exists to tell a real
// slowdown, present in every round, from a burst of load on a shared runner
// that hit some rounds of the first run: pooled, those rounds would still
// weigh in the verdict; fresh, they do not, and an A/A row fails twice in a
// row with probability about Alpha². allocs/op rows are not rerun: counts
// are exact and a rerun could not change them.

// Flagged returns the rows a confirming run would rerun: time regressions.
func (r *Result) Flagged() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Verdict == Regression && isTime(row.Unit) {
			out = append(out, row)
		}
	}
	return out
}

// ConfirmPatterns returns, per package, the -test.bench regexp that runs
// the benchmarks of rows and no others that differ from them at the top
// level. go test matches -bench level by level ("A/b" runs sub-benchmark b
// of A), so the regexp holds one alternation per level: when several
// sub-benchmarks of a package are flagged it may also run combinations of
// their levels; only the flagged rows are compared.
func ConfirmPatterns(rows []Row) map[string]string {
	levels := map[string][]map[string]bool{}
	for _, row := range rows {
		parts := strings.Split("Benchmark"+row.Name, "/")
		lv := levels[row.Pkg]
		for len(lv) < len(parts) {
			lv = append(lv, map[string]bool{})
		}
		for i, p := range parts {
			lv[i][p] = true
		}
		levels[row.Pkg] = lv
	}
	out := map[string]string{}
	for pkg, lv := range levels {
		var b strings.Builder
		for i, set := range lv {
			if i > 0 {
				b.WriteByte('/')
			}
			var alts []string
			for p := range set {
				alts = append(alts, regexp.QuoteMeta(p))
			}
			sort.Strings(alts)
			b.WriteString("^(" + strings.Join(alts, "|") + ")$")
		}
		out[pkg] = b.String()
	}
	return out
}

// Confirm returns the result of r after a confirming run whose comparison
// is c (same options): every flagged row of r is replaced by the same
// (package, benchmark, unit) row of c, which decides its verdict, with a
// note saying what the first run found. A flagged row absent from c stays
// a failure (the rerun did not measure it). rounds is the confirming run's
// number of rounds, for the note.
func (r *Result) Confirm(c *Result, rounds int) *Result {
	type key struct{ pkg, name, unit string }
	again := map[key]Row{}
	for _, row := range c.Rows {
		again[key{row.Pkg, row.Name, row.Unit}] = row
	}
	out := &Result{Options: r.Options, Confirmed: true, ConfirmRounds: rounds}
	for _, row := range r.Rows {
		if row.Verdict != Regression || !isTime(row.Unit) {
			out.Rows = append(out.Rows, row)
			continue
		}
		first := row.Note
		nr, ok := again[key{row.Pkg, row.Name, row.Unit}]
		if !ok || nr.Verdict == Missing {
			row.Note = fmt.Sprintf("%s; not measured by the confirming run", first)
			out.Rows = append(out.Rows, row)
			continue
		}
		if nr.Verdict == Regression {
			nr.Note = fmt.Sprintf("confirmed by %d more rounds: %s (first run: %s)", rounds, nr.Note, first)
		} else {
			nr.Note = strings.TrimSuffix(fmt.Sprintf("not confirmed by %d more rounds (first run: %s); %s", rounds, first, nr.Note), "; ")
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}
