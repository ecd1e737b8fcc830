package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

func loadFixture(t *testing.T) *Figures {
	t.Helper()
	f, err := os.Open("testdata/run.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fig, err := ParseBench(f, "run.txt")
	if err != nil {
		t.Fatal(err)
	}
	return fig
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestParseBenchFixture(t *testing.T) {
	f := loadFixture(t)
	// 4 limits + 2 producers × (3 strategies × 1 crc + 3 × 2) × 4 batches, + 6 updates + 2 parse, ×3 samples.
	if want := (4 + 2*9*4 + 6 + 2) * 3; f.Results != want || f.SyntaxErrors != 1 {
		t.Fatalf("results %d syntax errors %d, want %d and 1", f.Results, f.SyntaxErrors, want)
	}
	k := Key{Pkg: "github.com/mirrorpath/mirrorpath/appendpath", Name: "Append", Strategy: "asis", CRC: "none",
		Batch: "1KiB", Producers: "1000", Full: "Append/strategy=asis/crc=none/batch=1KiB/producers=1000"}
	s, ok := f.get(k, "sec/op")
	if !ok || !near(s.Median, 170e-9) || s.N != 3 {
		t.Fatalf("asis 1KiB/1000: %+v %v", s, ok)
	}
	if a, ok := f.get(k, "allocs/op"); !ok || a.Median != 0 {
		t.Fatalf("allocs %+v", a)
	}
	if f.hasCPU() {
		t.Error("fixture without cpu-ns/op reports CPU figures")
	}
	if got := strings.Join(f.Names(), ","); got != "Append,Limit,ParseVerify,Update" {
		t.Fatalf("names %s", got)
	}
}

func TestRatios(t *testing.T) {
	f := loadFixture(t)
	sa := f.strategyOverAsis()
	if got := strings.Join(sa.Cols, ","); got != "100B,1KiB,16KiB,1MiB" {
		t.Fatalf("batch columns not in size order: %s", got)
	}
	// negate adds 10 ns to asis's 1.5·limit + 40 + 10 (producers=1000); full adds one more limit.
	for _, c := range []struct {
		row, col string
		want     float64
	}{
		{"negate · patch · producers=1000", "1KiB", 180.0 / 170},
		{"negate · full · producers=1000", "1KiB", 260.0 / 170},
		{"bitfield · patch · producers=1", "16KiB", 1260.0 / 1240},
		{"barrier · none · producers=1", "100B", 75.0 / 70},
	} {
		if got := sa.Cells[[2]string{c.row, c.col}]; !near(got, c.want) {
			t.Errorf("%s %s = %g, want %g", c.row, c.col, got, c.want)
		}
	}
	if len(sa.Rows) != 2*8 { // 2 producers × (verbatim, barrier, and 3 strategies × 2 fixes)
		t.Errorf("%d strategy rows: %q", len(sa.Rows), sa.Rows)
	}
	if !strings.HasPrefix(sa.Rows[0], "verbatim") {
		t.Errorf("rows not in strategy order: %q", sa.Rows)
	}
	al := f.asisOverLimit()
	if got := al.Cells[[2]string{"producers=1 · none", "16KiB"}]; !near(got, 1240.0/800) {
		t.Errorf("asis/limit 16KiB = %g", got)
	}
	sm := f.storeOverModel()
	if got := sm.Cells[[2]string{"store/model", "1000"}]; !near(got, 0.25) {
		t.Errorf("store/model 1000 = %g (table %+v)", got, sm)
	}
	if got := strings.Join(sm.Cols, ","); got != "1,1000,1000000" {
		t.Errorf("producer columns %s", got)
	}
}

// A run with BenchmarkLimitRing, BenchmarkLimitFused, BenchmarkLimitRingFused
// and BenchmarkLimitLocked gets one more asis/limit row per producer count for
// each; the hot-buffer row is unchanged; BenchmarkCopyRing and
// BenchmarkLimitLocked add the rows of the copy alone and of the locked limit
// over the hot-buffer limit.
func TestAsisOverRingLimit(t *testing.T) {
	txt := "pkg: x\nBenchmarkLimit/batch=16KiB-2 10 800 ns/op\nBenchmarkLimitRing/batch=16KiB-2 10 850 ns/op\n" +
		"BenchmarkLimitFused/batch=16KiB-2 10 690 ns/op\n" +
		"BenchmarkLimitRingFused/batch=16KiB-2 10 820 ns/op\nBenchmarkCopyRing/batch=16KiB-2 10 720 ns/op\n" +
		"BenchmarkLimitLocked/batch=16KiB-2 10 810 ns/op\n" +
		"BenchmarkAppend/strategy=asis/crc=none/batch=16KiB/producers=1-2 10 900 ns/op\n"
	f, err := ParseBench(strings.NewReader(txt), "ring.txt")
	if err != nil {
		t.Fatal(err)
	}
	al := f.asisOverLimit()
	if got := al.Cells[[2]string{"producers=1 · none", "16KiB"}]; !near(got, 900.0/800) {
		t.Errorf("asis/limit = %g, want %g", got, 900.0/800)
	}
	if got := al.Cells[[2]string{"producers=1 · none · ring limit", "16KiB"}]; !near(got, 900.0/850) {
		t.Errorf("asis/ring limit = %g, want %g (rows %q)", got, 900.0/850, al.Rows)
	}
	if got := al.Cells[[2]string{"producers=1 · none · fused limit", "16KiB"}]; !near(got, 900.0/690) {
		t.Errorf("asis/fused limit = %g, want %g (rows %q)", got, 900.0/690, al.Rows)
	}
	if got := al.Cells[[2]string{"producers=1 · none · ring fused limit", "16KiB"}]; !near(got, 900.0/820) {
		t.Errorf("asis/ring fused limit = %g, want %g (rows %q)", got, 900.0/820, al.Rows)
	}
	if got := al.Cells[[2]string{copyRingRow, "16KiB"}]; !near(got, 720.0/800) {
		t.Errorf("copy ring/limit = %g, want %g (rows %q)", got, 720.0/800, al.Rows)
	}
	if got := al.Cells[[2]string{"producers=1 · none · locked limit", "16KiB"}]; !near(got, 900.0/810) {
		t.Errorf("asis/locked limit = %g, want %g (rows %q)", got, 900.0/810, al.Rows)
	}
	if got := al.Cells[[2]string{lockedRow, "16KiB"}]; !near(got, 810.0/800) {
		t.Errorf("locked limit/limit = %g, want %g (rows %q)", got, 810.0/800, al.Rows)
	}
	if last := al.Rows[len(al.Rows)-1]; last != lockedRow {
		t.Errorf("last row %q, want %q", last, lockedRow)
	}
}

func TestRatiosDegrade(t *testing.T) {
	// Only a limit and a strategy without its asis baseline: no ratio, no panic.
	txt := "pkg: x\nBenchmarkLimit/batch=1KiB-2 10 80 ns/op\nBenchmarkAppend/strategy=negate/crc=patch/batch=1KiB/producers=1-2 10 90 ns/op\n"
	f, err := ParseBench(strings.NewReader(txt), "x")
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{Title: "t", Figures: f}
	if len(r.tables()) != 0 {
		t.Fatalf("tables from incomplete data: %+v", r.tables())
	}
	var md bytes.Buffer
	if err := r.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "No ratio could be computed") || !strings.Contains(md.String(), "No scenario results") {
		t.Fatalf("report does not say what is missing:\n%s", md.String())
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]float64{"100B": 100, "16KiB": 16384, "1MiB": 1 << 20, "1000": 1000, "1M": 1e6, "1e6": 1e6, "10kB": 1e4} {
		if got, ok := parseSize(s); !ok || got != want {
			t.Errorf("parseSize(%q) = %g %v", s, got, ok)
		}
	}
	for _, s := range []string{"small", "", "KiB", "NaN"} {
		if _, ok := parseSize(s); ok {
			t.Errorf("parseSize(%q) ok", s)
		}
	}
	if got := strings.Join(sortBatches([]string{"1MiB", "small", "100B", "16KiB"}), ","); got != "100B,16KiB,1MiB,small" {
		t.Errorf("sorted %s", got)
	}
}

// checkSVG parses an SVG document and counts elements by name.
func checkSVG(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG not well-formed: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	if counts["svg"] != 1 {
		t.Fatalf("no svg root")
	}
	return counts
}

func TestCharts(t *testing.T) {
	f := loadFixture(t)
	tc := f.ThroughputChart()
	if got := strings.Join(tc.X, ","); got != "100B,1KiB,16KiB,1MiB" {
		t.Fatalf("x %s", got)
	}
	var limit *Series
	for i := range tc.Series {
		if tc.Series[i].Name == "limit (crc+copy)" {
			limit = &tc.Series[i]
		}
	}
	if limit == nil || !near(limit.Y[1], 1024/80e-9/1e6) || len(tc.Series) != 10 {
		t.Fatalf("throughput series %+v", tc.Series)
	}
	var buf bytes.Buffer
	if err := tc.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	c := checkSVG(t, buf.Bytes())
	if c["polyline"] != 10 || c["circle"] != 40 {
		t.Fatalf("throughput chart: %v", c)
	}
	if !strings.Contains(buf.String(), "producers=1000") || !strings.Contains(buf.String(), "negate-skip · patch") {
		t.Fatal("chart lacks title or legend")
	}

	uc := f.UpdateChart()
	buf.Reset()
	uc.WriteSVG(&buf)
	c = checkSVG(t, buf.Bytes())
	if c["polyline"] != 2 || c["circle"] != 6 || uc.X[2] != "1000000" {
		t.Fatalf("update chart %v x=%v", c, uc.X)
	}

	bar := f.StrategyChart()
	buf.Reset()
	bar.WriteSVG(&buf)
	if dir := os.Getenv("REPORT_CHART_DIR"); dir != "" { // to look at the fixture's charts
		for name, ch := range map[string]*Chart{"throughput.svg": tc, "update.svg": uc, "ratio.svg": bar} {
			fh, _ := os.Create(dir + "/" + name)
			ch.WriteSVG(fh)
			fh.Close()
		}
	}
	c = checkSVG(t, buf.Bytes())
	if c["rect"] != 1+8*4+8 { // background + bars + legend swatches, producers=1000 only
		t.Fatalf("bar chart rects %d", c["rect"])
	}
	if bar.Series[0].Name != "verbatim · none" || !strings.HasSuffix(bar.Title, "(producers=1000)") {
		t.Fatalf("bar chart series %q title %q", bar.Series[0].Name, bar.Title)
	}
}

func TestChartMissingPointsAndNoData(t *testing.T) {
	c := &Chart{Title: "a & b", X: []string{"1", "2", "3"}, Series: []Series{{Name: "s", Y: []float64{1, math.NaN(), 3}}}}
	var buf bytes.Buffer
	c.WriteSVG(&buf)
	n := checkSVG(t, buf.Bytes())
	if n["polyline"] != 0 || n["circle"] != 2 { // the gap leaves two single points
		t.Fatalf("gap: %v", n)
	}
	empty := &Chart{Title: "none", LogY: true}
	buf.Reset()
	empty.WriteSVG(&buf)
	checkSVG(t, buf.Bytes())
	if !strings.Contains(buf.String(), "no data") || empty.HasData() {
		t.Fatal("empty chart not labelled")
	}
}

const scenarioJSON = `{"file":"01.scn","strategy":"verbatim","violations":[{"code":"M4","step":12}],"expectations":[{"line":20,"held":true}]}
{"file":"01.scn","strategy":"barrier","violations":[],"expectations":[{"line":21,"held":true}]}
log line from the simulator
{"file":"05.scn","strategy":"negate","violations":[{"code":"LAT","step":3},{"code":"LAT","step":9},{"code":"ERR","step":4}],"expectations":[{"line":9,"held":false}]}
{"broken json
`

func TestScenarioMatrix(t *testing.T) {
	m, err := ParseScenarios(strings.NewReader(scenarioJSON))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Strategies, ","); got != "verbatim,negate,barrier" {
		t.Fatalf("strategies %s", got)
	}
	if m.Malformed != 1 || len(m.Files) != 2 {
		t.Fatalf("malformed %d files %v", m.Malformed, m.Files)
	}
	for _, c := range []struct{ file, strat, want string }{
		{"01.scn", "verbatim", "M4"}, {"01.scn", "barrier", "ok"}, {"05.scn", "negate", "ERR+LAT ✗"}, {"05.scn", "barrier", "-"},
	} {
		if got := m.Cells[[2]string{c.file, c.strat}].String(); got != c.want {
			t.Errorf("%s/%s = %q, want %q", c.file, c.strat, got, c.want)
		}
	}
	if u := m.Unmet(); len(u) != 1 || u[0] != "05.scn negate" {
		t.Errorf("unmet %v", u)
	}

	abs, _ := ParseScenarios(strings.NewReader(strings.ReplaceAll(scenarioJSON, `"file":"`, `"file":"/cat/`)))
	abs.ShortenFiles()
	if got := strings.Join(abs.Files, ","); got != "01.scn,05.scn" || abs.Cells[[2]string{"05.scn", "negate"}].String() != "ERR+LAT ✗" {
		t.Errorf("shortened files %s", got)
	}
	clash, _ := ParseScenarios(strings.NewReader(`{"file":"a/x.scn","strategy":"s"}` + "\n" + `{"file":"b/x.scn","strategy":"s"}`))
	clash.ShortenFiles()
	if got := strings.Join(clash.Files, ","); got != "a/x.scn,b/x.scn" {
		t.Errorf("clashing base names shortened: %s", got)
	}
}

func TestReportMarkdownAndText(t *testing.T) {
	m, _ := ParseScenarios(strings.NewReader(scenarioJSON))
	r := &Report{Title: "mirrorpath run 2026-01-02", Command: "mirrorpath run", Settings: []string{"benchtime 100ms"},
		Notes: []string{"pid: no benchmarks"}, Figures: loadFixture(t), Matrix: m,
		Charts: []ChartFile{{"Append throughput", "append-throughput.svg"}}, RawFiles: []string{"bench.txt"}}
	var md, txt bytes.Buffer
	if err := r.writeMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# mirrorpath run 2026-01-02", "## Notes", "- pid: no benchmarks", "| file | verbatim | negate | barrier |",
		"| 05.scn | - | ERR+LAT ✗ | - |", "### Append time per batch: strategy / asis", "| negate · patch · producers=1 | 1.14 ±4% | 1.06 ±4% |",
		"| store/model | 0.25 ±4% | 0.25 ±4% | 0.33 ±4% |", "![Append throughput](append-throughput.svg)", "[bench.txt](bench.txt)",
		"| appendpath | Append/strategy=asis/crc=none/batch=1KiB/producers=1000 | 170.0ns | - | 6.02 GB/s | 0 | 0 | 3 |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scenario verdicts", "As-is append / physical limit", "note: pid: no benchmarks"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if t.Failed() {
		t.Log(md.String())
	}
}

// TestRecordedRun parses the raw output of a real `mirrorpath run` (quick
// selection, 3 interleaved rounds: Append at producers=1000, Limit, Update) and
// checks that every figure of the report can be formed from it.
func TestRecordedRun(t *testing.T) {
	fh, err := os.Open("testdata/recorded-run.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := ParseBench(fh, "recorded-run.txt")
	if err != nil {
		t.Fatal(err)
	}
	if f.Results != 126 || f.SyntaxErrors != 0 {
		t.Fatalf("%d results, %d syntax errors", f.Results, f.SyntaxErrors)
	}
	finite := func(tb *table, rows, cols int) {
		t.Helper()
		if len(tb.Rows) != rows || len(tb.Cols) != cols {
			t.Fatalf("%s: %d×%d, want %d×%d (%q × %q)", tb.Title, len(tb.Rows), len(tb.Cols), rows, cols, tb.Rows, tb.Cols)
		}
		for k, v := range tb.Cells {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Errorf("%s %v = %g", tb.Title, k, v)
			}
		}
	}
	// negate, negate-skip, bitfield × {full, patch} + barrier, at producers=1000; 4 batch sizes.
	finite(f.strategyOverAsis(), 7, 4)
	finite(f.asisOverLimit(), 1, 4)
	finite(f.storeOverModel(), 1, 3)
	if got := strings.Join(f.storeOverModel().Cols, ","); got != "1000,100000,1000000" {
		t.Errorf("store/model columns %s", got)
	}
	// The benchmarks also report cpu-ns/op: the same tables in CPU time.
	if !f.hasCPU() {
		t.Fatal("no cpu-ns/op in the recorded run")
	}
	cpu := f.cpu()
	finite(cpu.strategyOverAsis(), 7, 4)
	finite(cpu.asisOverLimit(), 1, 4)
	finite(cpu.storeOverModel(), 1, 3)
	if tb := cpu.strategyOverAsis(); !strings.HasSuffix(tb.Title, "(CPU time)") || !strings.Contains(tb.Caption, "cpu-ns/op") {
		t.Errorf("CPU table %q: %s", tb.Title, tb.Caption)
	}
	if w, c := f.strategyOverAsis().Cells, cpu.strategyOverAsis().Cells; fmt.Sprint(w) == fmt.Sprint(c) {
		t.Error("CPU view divides the same numbers as the wall view")
	}
	finite(f.canary(), 1, 4)
	finite(cpu.canary(), 1, 4)
	r := &Report{Figures: f}
	if n := len(r.tables()); n != 8 {
		t.Errorf("report has %d tables, want 4 wall + 4 CPU", n)
	}
	for _, c := range []*Chart{f.ThroughputChart(), f.StrategyChart(), f.UpdateChart()} {
		if !c.HasData() {
			t.Errorf("%s: no data", c.Title)
		}
	}
	if n := len(f.ThroughputChart().Series); n != 9 { // 8 strategy/CRC variants + the limit
		t.Errorf("throughput chart has %d series", n)
	}
	// Every median is from the 3 rounds.
	for _, k := range f.configsOf("Append") {
		if s, _ := f.get(k, "sec/op"); s.N != 3 {
			t.Errorf("%s: n = %d", k.Full, s.N)
		}
	}
}

// BenchmarkUpdateOne (the one-call Update) gets its own store/model row and
// its own chart lines beside BenchmarkUpdate's.
func TestUpdateOneRows(t *testing.T) {
	txt := "pkg: x\n" +
		"BenchmarkUpdate/impl=store/producers=1000-2 10 20 ns/op\n" +
		"BenchmarkUpdate/impl=model/producers=1000-2 10 200 ns/op\n" +
		"BenchmarkUpdateOne/impl=store/producers=1000-2 10 15 ns/op\n" +
		"BenchmarkUpdateOne/impl=model/producers=1000-2 10 300 ns/op\n"
	f, err := ParseBench(strings.NewReader(txt), "one.txt")
	if err != nil {
		t.Fatal(err)
	}
	sm := f.storeOverModel()
	if got := sm.Cells[[2]string{"store/model", "1000"}]; !near(got, 0.1) {
		t.Errorf("store/model = %g (table %+v)", got, sm)
	}
	if got := sm.Cells[[2]string{"store/model · one call", "1000"}]; !near(got, 0.05) {
		t.Errorf("one call store/model = %g (table %+v)", got, sm)
	}
	var names []string
	for _, s := range f.UpdateChart().Series {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "impl=model,impl=model · one call,impl=store,impl=store · one call" {
		t.Errorf("series %s", got)
	}
}

// A run with BenchmarkAppendFetch gets a row per as-is chunk size: the
// call's time divided by its batches and by BenchmarkLimit at the batch
// size; a chunk of one batch and a mapped chunk get none.
func TestAsisOverLimitFetchRows(t *testing.T) {
	txt := "pkg: x\nBenchmarkLimit/batch=100B-2 10 8 ns/op\nBenchmarkLimit/batch=1KiB-2 10 40 ns/op\n" +
		"BenchmarkAppendFetch/strategy=asis/batch=100B/batches=1-2 10 60 ns/op\n" +
		"BenchmarkAppendFetch/strategy=asis/batch=100B/batches=64-2 10 1280 ns/op\n" +
		"BenchmarkAppendFetch/strategy=bitfield/batch=100B/batches=64-2 10 1600 ns/op\n" +
		"BenchmarkAppendFetch/strategy=asis/batch=1KiB/batches=16-2 10 800 ns/op\n"
	f, err := ParseBench(strings.NewReader(txt), "fetch.txt")
	if err != nil {
		t.Fatal(err)
	}
	al := f.asisOverLimit()
	for _, c := range []struct {
		row, col string
		want     float64
	}{
		{"chunk of 64 (AppendFetch), per batch", "100B", 1280.0 / 64 / 8},
		{"chunk of 16 (AppendFetch), per batch", "1KiB", 800.0 / 16 / 40},
	} {
		if got := al.Cells[[2]string{c.row, c.col}]; !near(got, c.want) {
			t.Errorf("%s %s = %g, want %g (rows %q)", c.row, c.col, got, c.want, al.Rows)
		}
	}
	if len(al.Rows) != 2 {
		t.Errorf("rows %q, want the two chunk rows", al.Rows)
	}
}
