package report

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"
)

// Key identifies one benchmark configuration by its name parts
// (docs/measuring.md, "Naming"),
// e.g. BenchmarkAppend/strategy=bitfield/crc=patch/batch=16KiB/producers=1000.
// Parts a benchmark does not have are "".
type Key struct {
	Pkg, Name                       string // Name without "Benchmark", e.g. "Append"
	Strategy, CRC, Batch, Producers string
	Impl                            string
	// Full is the whole name without "Benchmark" and the -GOMAXPROCS
	// suffix; it keeps apart configurations that differ in other parts.
	Full string
}

// stat is the summary of one unit of one configuration.
type stat struct {
	Median float64 // tidied unit: sec/op, B/s, B/op, allocs/op
	N      int
	Range  string // 95% confidence interval as ±%, "" if too few samples
	// Lo and Hi bound benchmath's 95% confidence interval of the median
	// (AssumeNothing: order statistics, so at least 6 samples); ±Inf with
	// fewer.
	Lo, Hi float64
}

// Figures holds every benchmark summary of one run.
type Figures struct {
	stats   map[Key]map[string]stat
	samples map[Key]map[string][]float64
	keys    []Key
	// Results counts benchmark result lines read.
	Results int
	// SyntaxErrors counts malformed benchmark lines skipped.
	SyntaxErrors int
	// timeUnit is the unit the ratio tables divide: sec/op (wall clock),
	// or cpu-sec/op in the view cpu returns.
	timeUnit string
	// rounds is true when every file read lists its results in interleaved
	// rounds (each configuration's i-th result before any configuration's
	// (i+1)-th), so that the i-th samples of two configurations come from
	// the same round and their ratios pair (Figures.Ratio).
	rounds bool
}

const projection = "pkg,.name,/strategy,/crc,/batch,/producers,/impl"

// ParseBench reads go test -bench output (several packages may be
// concatenated) with benchfmt and groups it with benchproc. Malformed
// benchmark lines are skipped and counted (Figures.SyntaxErrors).
func ParseBench(r io.Reader, name string) (*Figures, error) {
	br, err := newBenchReader()
	if err != nil {
		return nil, err
	}
	if err := br.read(r, name, false); err != nil {
		return nil, err
	}
	return br.figures(), nil
}

// ReadBenchFiles is ParseBench over the files at paths, read in turn into one
// set of figures (the samples of a configuration that appears in several
// files are pooled), except that a malformed benchmark line is an error that
// names its file and line: a figure must not quietly leave samples out. A
// file whose name ends in .gz is decompressed as it is read.
func ReadBenchFiles(paths []string) (*Figures, error) {
	br, err := newBenchReader()
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		err := readBenchFile(br, p)
		if err != nil {
			if errors.As(err, new(*benchfmt.SyntaxError)) {
				return nil, err // it names its file and line
			}
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return br.figures(), nil
}

// readBenchFile reads one file into br; a name ending in .gz is read
// through gzip (results/ keeps large raw outputs compressed).
func readBenchFile(br *benchReader, p string) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		defer zr.Close()
		r = zr
	}
	return br.read(r, p, true)
}

// benchReader groups benchmark results by configuration and unit as they
// are read, for ParseBench and ReadBenchFiles.
type benchReader struct {
	proj      *benchproc.Projection
	unitField *benchproc.Field
	samples   map[benchGroup][]float64
	order     []benchGroup
	results   int
	syntax    int
	unordered bool // a file's results were not in interleaved rounds
	// seen counts each configuration's results (pkg and full name) in the
	// file being read, whatever units they report: the rounds check.
	seen map[string]int
}

// benchGroup is one configuration and unit. benchproc replaces separately
// projected parts of .fullname with "*", so full is the result's own name.
type benchGroup struct {
	k    benchproc.Key
	full string
}

func newBenchReader() (*benchReader, error) {
	var pp benchproc.ProjectionParser
	proj, unitField, err := pp.ParseWithUnit(projection, nil)
	if err != nil {
		return nil, fmt.Errorf("report: projection: %v", err)
	}
	return &benchReader{proj: proj, unitField: unitField, samples: map[benchGroup][]float64{}}, nil
}

// read adds r's results; strict makes a malformed line an error.
func (br *benchReader) read(r io.Reader, name string, strict bool) error {
	rd := benchfmt.NewReader(r, name)
	round := 0 // the highest result index of a configuration seen in this file
	br.seen = map[string]int{}
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			if strict {
				return rec
			}
			br.syntax++
		case *benchfmt.Result:
			br.results++
			full := benchgate.TrimProcs(strings.TrimPrefix(string(rec.Name.Full()), "Benchmark"))
			cfg := rec.GetConfig("pkg") + " " + full
			if at := br.seen[cfg]; at < round {
				br.unordered = true
			} else {
				round = at
			}
			br.seen[cfg]++
			for i, k := range br.proj.ProjectValues(rec) {
				g := benchGroup{k, full}
				if _, ok := br.samples[g]; !ok {
					br.order = append(br.order, g)
				}
				br.samples[g] = append(br.samples[g], rec.Values[i].Value)
			}
		}
	}
	return rd.Err()
}

// figures summarizes what was read.
func (br *benchReader) figures() *Figures {
	fields := br.proj.Fields()
	f := &Figures{stats: map[Key]map[string]stat{}, samples: map[Key]map[string][]float64{}, timeUnit: secPerOp,
		Results: br.results, SyntaxErrors: br.syntax, rounds: !br.unordered}
	th := benchmath.DefaultThresholds
	for _, g := range br.order {
		k := g.k
		key := Key{Pkg: k.Get(fields[0]), Name: k.Get(fields[1]), Strategy: k.Get(fields[2]), CRC: k.Get(fields[3]),
			Batch: k.Get(fields[4]), Producers: k.Get(fields[5]), Impl: k.Get(fields[6]), Full: g.full}
		unit := k.Get(br.unitField)
		// NewSample sorts the values it is given: a copy, so that the
		// samples keep the order read, by which rounds pair (Figures.Ratio).
		s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(br.samples[g]), &th), 0.95)
		if f.stats[key] == nil {
			f.stats[key] = map[string]stat{}
			f.samples[key] = map[string][]float64{}
			f.keys = append(f.keys, key)
		}
		f.samples[key][unit] = br.samples[g]
		rng := s.PctRangeString()
		if strings.Contains(rng, "∞") { // too few samples for a 95% interval
			rng = ""
		}
		f.stats[key][unit] = stat{Median: s.Center, N: len(br.samples[g]), Range: rng, Lo: s.Lo, Hi: s.Hi}
	}
	return f
}

// Configs returns every configuration read, in first-seen order.
func (f *Figures) Configs() []Key { return slices.Clone(f.keys) }

// Units returns the units k was measured in, sorted.
func (f *Figures) Units(k Key) []string {
	units := make([]string, 0, len(f.samples[k]))
	for u := range f.samples[k] {
		units = append(units, u)
	}
	slices.Sort(units)
	return units
}

// Samples returns k's values of unit in the order read; nil if none.
func (f *Figures) Samples(k Key, unit string) []float64 { return f.samples[k][unit] }

// get returns the summary of unit for k.
func (f *Figures) get(k Key, unit string) (stat, bool) {
	s, ok := f.stats[k][unit]
	return s, ok
}

// configsOf returns the configurations of benchmark name, in first-seen order.
func (f *Figures) configsOf(name string) []Key {
	var out []Key
	for _, k := range f.keys {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// Names returns the distinct benchmark names, sorted.
func (f *Figures) Names() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range f.keys {
		if !seen[k.Name] {
			seen[k.Name] = true
			out = append(out, k.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Time units: wall clock per op, and process CPU time per op as the
// mirrorpath benchmarks report it (b.ReportMetric(..., "cpu-ns/op"), which
// benchfmt tidies to cpu-sec/op).
const (
	secPerOp    = "sec/op"
	cpuSecPerOp = "cpu-sec/op"
)

// hasCPU reports whether any benchmark reported cpu-ns/op.
func (f *Figures) hasCPU() bool {
	for _, units := range f.stats {
		if _, ok := units[cpuSecPerOp]; ok {
			return true
		}
	}
	return false
}

// cpu returns a view of f whose ratio tables divide process CPU time per op
// (cpu-ns/op) instead of wall-clock time: on a shared machine wall time
// includes time spent descheduled, CPU time does not. The view shares f's data.
func (f *Figures) cpu() *Figures {
	g := *f
	g.timeUnit = cpuSecPerOp
	return &g
}

func (f *Figures) secs(k Key) (float64, bool) {
	s, ok := f.get(k, f.timeUnit)
	if !ok || s.Median <= 0 {
		return 0, false
	}
	return s.Median, true
}
