package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mirrorpath/mirrorpath/pid"
	"golang.org/x/perf/benchunit"
)

// readmeBench writes the benchmark section: where the figures come from,
// the noise verdict, the headline ratio tables and the absolute medians.
func (r *Report) readmeBench(ew *errWriter, from string, link func(string) string) {
	st := r.BenchStamp()
	ew.printf("Generated from `%s` by `%s`; regenerate, never edit (`go test ./internal/report` compares this section with its raw results).\n\n", from, st.Command)
	ew.printf("- run: %s UTC, commit %s; %s\n", st.Date, st.Commit, strings.Join(r.Settings, "; "))
	ew.printf("- cpu: %s\n", r.cpuLine())
	for _, e := range r.Env {
		ew.printf("- %s\n", e)
	}
	n := r.Noise()
	if n == nil {
		ew.printf("\nNo benchmark results in this run.\n")
		return
	}
	n.markdown(ew)
	unit := "process CPU time per op (cpu-ns/op)"
	if n.View != "CPU time" {
		unit = "wall time per op (sec/op)"
	}
	ew.printf("\nEach ratio is the median of the per-round ratios of %s in the same interleaved rounds, ± its %.0f%% interval (a bootstrap over the rounds, docs/measuring.md); ‼ marks a cell that fails a noise rule. Wall-time tables and every configuration's medians are in [%s](%s).\n",
		unit, 100*confidence, filepath.ToSlash(filepath.Join(from, ReportFile)), link(filepath.ToSlash(filepath.Join(from, ReportFile))))
	for _, t := range r.Figures.headlineTables() {
		ew.printf("\n**%s.** %s.\n\n", t.Title, upperFirst(t.Caption))
		t.markdown(ew)
	}
	r.Figures.headline().absolute(ew)
}

// absolute writes the absolute medians the ratios come from: the as-is
// append and the limits by batch size, the producer-state update by
// producer count.
func (f *Figures) absolute(ew *errWriter) {
	timeName := "CPU time/op"
	if f.timeUnit == secPerOp {
		timeName = "time/op"
	}
	cellOf := func(k Key) string {
		s, ok := f.get(k, f.timeUnit)
		if !ok {
			return "-"
		}
		out := benchunit.Scale(s.Median, benchunit.Decimal) + "s"
		if s.Range != "" {
			out += " ±" + s.Range
		}
		if bytes, ok := f.batchBytes(k); ok {
			// The batch's bytes over the median time per op; its interval is
			// the time's, inverted.
			out += fmt.Sprintf(" · %.2f GB/s", bytes/s.Median/1e9)
		}
		return out
	}
	type grid struct {
		rows, cols []string
		cells      map[[2]string]string
	}
	put := func(g *grid, row, col, v string) {
		if !slices.Contains(g.rows, row) {
			g.rows = append(g.rows, row)
		}
		if !slices.Contains(g.cols, col) {
			g.cols = append(g.cols, col)
		}
		g.cells[[2]string{row, col}] = v
	}
	write := func(g *grid, head string) {
		if len(g.rows) == 0 {
			return
		}
		g.cols = sortBatches(g.cols)
		ew.printf("| %s | %s |\n|---|%s\n", head, strings.Join(g.cols, " | "), strings.Repeat("---:|", len(g.cols)))
		for _, row := range g.rows {
			ew.printf("| %s |", row)
			for _, c := range g.cols {
				v, ok := g.cells[[2]string{row, c}]
				if !ok {
					v = "-"
				}
				ew.printf(" %s |", v)
			}
			ew.printf("\n")
		}
	}
	path := &grid{cells: map[[2]string]string{}}
	for _, k := range sortKeys(f.configsOf("Append")) {
		if k.Strategy == "asis" {
			put(path, rowLabel("append asis", k.CRC, "producers="+k.Producers), k.Batch, cellOf(k))
		}
	}
	for _, lim := range append(limitRows, struct{ name, label string }{"CopyRing", "copy alone into the ring"}) {
		label := lim.label
		if label == "" {
			label = "limit"
		}
		for _, k := range sortKeys(f.configsOf(lim.name)) {
			put(path, label, k.Batch, cellOf(k))
		}
	}
	upd := &grid{cells: map[[2]string]string{}}
	for _, k := range sortKeys(f.updateKeys()) {
		put(upd, rowLabel("update", k.Impl, updateLabel(k), k.Strategy, k.Batch), k.Producers, cellOf(k))
	}
	if len(path.rows)+len(upd.rows) == 0 {
		return
	}
	ew.printf("\n**Absolute medians.** %s ± benchmath's 95%% interval of the median; throughput is the batch's bytes (b.SetBytes) over that median, so its interval is the same ±%%.\n\n", timeName)
	write(path, "benchmark · batch")
	if len(path.rows) > 0 && len(upd.rows) > 0 {
		ew.printf("\n")
	}
	write(upd, "benchmark · producers")
}

// batchBytes is the bytes per op a benchmark set with b.SetBytes:
// throughput times wall time per op of one result, the fastest (the least
// rounding in go test's MB/s). The samples are in the order read, one of
// each unit per result line, so index i of both is one result.
func (f *Figures) batchBytes(k Key) (float64, bool) {
	bps, wall := f.samples[k]["B/s"], f.samples[k][secPerOp]
	if len(bps) == 0 || len(bps) != len(wall) {
		return 0, false
	}
	i := 0
	for j, w := range wall {
		if w < wall[i] {
			i = j
		}
	}
	return math.Round(bps[i] * wall[i]), true
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// strategyDesign is one sentence per design (docs/strategies.md).
var strategyDesign = map[pid.Strategy]string{
	pid.Verbatim:   "stores mirrored batches as-is and does nothing at failover: the unprotected baseline.",
	pid.Negate:     "rewrites every mirrored PID p to −(p+2) (`pid.MapNegate`).",
	pid.NegateSkip: "rewrites mirrored PIDs p ≥ 0 to −(p+2) and passes negative ones through (`pid.MapNegateSkip`).",
	pid.Bitfield:   "rewrites a mirrored PID to 1 · region(source cluster) · its low 31 bits (`pid.MapBitfield`), salted on collision.",
	pid.Barrier:    "stores batches as-is; when the mirror stops, a MIRROR_PID_RESET control batch in the log clears producer state wherever it is appended or replayed.",
	pid.Allocator:  "stores batches as-is; at failover the destination's PID allocator advances past every PID it holds before any partition is writable (Redpanda's design).",
}

// designOf is the design sentence of the strategy named name.
func designOf(name string) string {
	if st, err := pid.ParseStrategy(name); err == nil {
		if d, ok := strategyDesign[st]; ok {
			return d
		}
	}
	return "is not a strategy of this build (docs/strategies.md lists them)."
}

// readmeVerdicts writes the verdict matrix and one generated paragraph per
// design saying where it breaks.
func (r *Report) readmeVerdicts(ew *errWriter, from string) {
	m := r.Matrix
	st := r.ScenarioStamp()
	ew.printf("Generated from `%s` by `%s`; regenerate, never edit. Run %s UTC, commit %s: every file of the catalog under every strategy (failure codes seen; `ok` = none; ✗ = an `expect` line did not hold; the codes are in `docs/scenarios.md`).\n\n",
		filepath.ToSlash(filepath.Join(from, ScenarioFile)), st.Command, st.Date, st.Commit)
	if m == nil || len(m.Files) == 0 {
		ew.printf("No scenario results in this run.\n")
		return
	}
	ew.printf("| scenario | %s |\n|---|%s\n", strings.Join(m.Strategies, " | "), strings.Repeat("---|", len(m.Strategies)))
	for _, f := range m.Files {
		ew.printf("| %s |", strings.TrimSuffix(f, ".scn"))
		for _, s := range m.Strategies {
			c := m.Cells[[2]string{f, s}]
			v := c.String()
			if c != nil && len(c.Codes) > 0 {
				v = strings.Replace(v, strings.Join(c.Codes, "+"), strings.Join(c.Codes, ", "), 1)
			}
			ew.printf(" %s |", v)
		}
		ew.printf("\n")
	}
	ew.printf("\n")
	m.shortNames = m.shortIDs()
	common := m.commonCodes()
	if len(common) > 0 {
		ew.printf("Under every design (the cost of the scenario, not of a PID design): %s.\n\n", codeList(common))
	}
	for _, s := range m.Strategies {
		own := map[string][]string{}
		broken, unmet := 0, []string{}
		for _, f := range m.Files {
			c := m.Cells[[2]string{f, s}]
			if c == nil {
				continue
			}
			if c.Held < c.Want {
				unmet = append(unmet, m.shortNames[f])
			}
			any := false
			for _, code := range c.Codes {
				if !slices.Contains(common[code], m.shortNames[f]) {
					own[code] = append(own[code], m.shortNames[f])
					any = true
				}
			}
			if any {
				broken++
			}
		}
		ew.printf("- **%s** %s ", s, designOf(s))
		if broken == 0 {
			ew.printf("It breaks in none of the %d scenarios beyond the codes every design shows.", len(m.Files))
		} else {
			ew.printf("It breaks in %d of %d scenarios: %s.", broken, len(m.Files), codeList(own))
		}
		if len(unmet) > 0 {
			ew.printf(" Expectations not met: %s.", strings.Join(unmet, ", "))
		}
		ew.printf("\n")
	}
}

// shortIDs names each file by its number ("05" for 05-chain.scn) where no
// other file has that number, else by its name without ".scn".
func (m *Matrix) shortIDs() map[string]string {
	count := map[string]int{}
	id := func(f string) string { n, _, _ := strings.Cut(strings.TrimSuffix(f, ".scn"), "-"); return n }
	for _, f := range m.Files {
		count[id(f)]++
	}
	out := map[string]string{}
	for _, f := range m.Files {
		if count[id(f)] == 1 {
			out[f] = id(f)
		} else {
			out[f] = strings.TrimSuffix(f, ".scn")
		}
	}
	return out
}

// commonCodes maps each code to the files where every strategy shows it.
func (m *Matrix) commonCodes() map[string][]string {
	out := map[string][]string{}
	for _, f := range m.Files {
		var shared []string
		for i, s := range m.Strategies {
			c := m.Cells[[2]string{f, s}]
			var codes []string
			if c != nil {
				codes = c.Codes
			}
			if i == 0 {
				shared = slices.Clone(codes)
				continue
			}
			shared = slices.DeleteFunc(shared, func(x string) bool { return !slices.Contains(codes, x) })
		}
		for _, code := range shared {
			out[code] = append(out[code], m.shortNames[f])
		}
	}
	return out
}

// codeList renders "M4 in 01-a, 03-b; ERR in 05-c", codes by how many files
// show them, then by name.
func codeList(byCode map[string][]string) string {
	codes := make([]string, 0, len(byCode))
	for c := range byCode {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		a, b := codes[i], codes[j]
		if len(byCode[a]) != len(byCode[b]) {
			return len(byCode[a]) > len(byCode[b])
		}
		return a < b
	})
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = c + " in " + strings.Join(byCode[c], ", ")
	}
	return strings.Join(parts, "; ")
}

// readmeSummary writes the README's summary: one line per generated table
// (where each design breaks, what each strategy costs, the as-is append
// over the physical limit, the producer-state store over the model) and
// the noise verdict, each linking to the table in results/.
func (r *Report) readmeSummary(ew *errWriter, link func(string) string) {
	if m := r.Matrix; m != nil && len(m.Files) > 0 {
		st := r.ScenarioStamp()
		m.shortNames = m.shortIDs()
		common := m.commonCodes()
		var parts []string
		for _, s := range m.Strategies {
			broken := 0
			for _, f := range m.Files {
				c := m.Cells[[2]string{f, s}]
				if c == nil {
					continue
				}
				for _, code := range c.Codes {
					if !slices.Contains(common[code], m.shortNames[f]) {
						broken++
						break
					}
				}
			}
			parts = append(parts, fmt.Sprintf("%s %d", s, broken))
		}
		ew.printf("- **Where each design breaks** ([table](%s), run %s UTC, commit %s): of %d scenarios, beyond the codes every design shows: %s.\n",
			link(verdictDoc), st.Date, st.Commit, len(m.Files), strings.Join(parts, ", "))
	} else {
		ew.printf("- **Where each design breaks**: no scenario results in this run.\n")
	}
	n := r.Noise()
	if n == nil {
		ew.printf("- **What it costs**: no benchmark results in this run.\n")
		return
	}
	st := r.BenchStamp()
	h := r.Figures.headline()
	for _, t := range []*table{h.strategyOverAsis(), h.asisOverLimit(), h.storeOverModel()} {
		if t.empty() {
			continue
		}
		ew.printf("- **%s** ([table](%s)): %s.\n", t.Title, link(benchDoc), t.summary())
	}
	host := ""
	if n.Host != "" {
		host = fmt.Sprintf("; the core ran the 100-byte limit at two speeds across the rounds ([why](%s))", link("docs/measuring.md#the-hosts-two-speeds"))
	}
	ew.printf("- **Noise** (run %s UTC, commit %s, [rules](%s)): %s%s.\n", st.Date, st.Commit, link("docs/measuring.md"), n.Verdict(), host)
}

// summary is a table in one clause: its only row across the columns, or
// at 16 KiB (the producer's default batch.size; else the last column) the
// lowest and the highest row.
func (t *table) summary() string {
	cell := func(row, col string) string {
		v, ok := t.Cells[[2]string{row, col}]
		if !ok {
			return "-"
		}
		return ratioString(v)
	}
	if len(t.Rows) <= 2 {
		var rows []string
		for _, row := range t.Rows {
			var cols []string
			for _, c := range t.Cols {
				cols = append(cols, c+" "+cell(row, c))
			}
			rows = append(rows, row+": "+strings.Join(cols, ", "))
		}
		return strings.Join(rows, "; ")
	}
	col := t.Cols[len(t.Cols)-1]
	if slices.Contains(t.Cols, "16KiB") {
		col = "16KiB"
	}
	lo, hi := "", ""
	for _, row := range t.Rows {
		v, ok := t.Cells[[2]string{row, col}]
		if !ok {
			continue
		}
		if lo == "" || v < t.Cells[[2]string{lo, col}] {
			lo = row
		}
		if hi == "" || v > t.Cells[[2]string{hi, col}] {
			hi = row
		}
	}
	if lo == "" {
		return "no cell at " + col
	}
	return fmt.Sprintf("at %s from %s (%s) to %s (%s), %d rows", col, cell(lo, col), lo, cell(hi, col), hi, len(t.Rows))
}
