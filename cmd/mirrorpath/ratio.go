package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"golang.org/x/perf/benchfmt"
)

func init() {
	register(command{
		name:    "ratio",
		summary: "ratio of two benchmarks' medians in one go test -bench output, with a bootstrap confidence interval",
		run:     runRatio,
	})
}

const ratioUsage = "usage: mirrorpath ratio --num RE --den RE [--unit U] [--confidence C] FILE..."

// runRatio is `mirrorpath ratio`: median(num) / median(den) over the samples
// of two configurations in the same benchmark output, with the percentile
// bootstrap interval the report prints beside its ratios
// (benchgate.RatioInterval). benchstat compares one configuration across
// files; this divides two configurations of one run, such as a strategy by
// asis (docs/measuring.md).
func runRatio(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ratio", flag.ContinueOnError)
	num := fs.String("num", "", "the numerator: a regular expression matching one benchmark's full name (`RE`)")
	den := fs.String("den", "", "the denominator (`RE`), as --num")
	unit := fs.String("unit", "", "the unit to divide (`U`, benchstat's tidied name); default cpu-sec/op where the benchmarks report it, else sec/op")
	conf := fs.Float64("confidence", 0.95, "confidence level of the interval (`C`, between 0 and 1)")
	if code, ok := parseFlags(fs, args, stderr, ratioUsage); !ok {
		return code
	}
	switch {
	case *num == "" || *den == "":
		return usageError(fs, stderr, "--num and --den are required")
	case fs.NArg() == 0:
		return usageError(fs, stderr, "no benchmark output FILE given")
	case !(*conf > 0 && *conf < 1):
		return usageError(fs, stderr, fmt.Sprintf("--confidence %v is not between 0 and 1", *conf))
	}
	numRE, err := regexp.Compile(*num)
	if err != nil {
		return usageError(fs, stderr, fmt.Sprintf("--num: %v", err))
	}
	denRE, err := regexp.Compile(*den)
	if err != nil {
		return usageError(fs, stderr, fmt.Sprintf("--den: %v", err))
	}
	samples, err := readSamples(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "ratio: %v\n", err)
		return 1
	}
	r, err := ratioOf(samples, numRE, denRE, *unit, *conf)
	if err != nil {
		fmt.Fprintf(stderr, "ratio: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, r)
	return 0
}

// benchSamples holds every value of a benchmark output by configuration (the
// full name without the -GOMAXPROCS suffix) and tidied unit, in file order.
type benchSamples struct {
	names  []string // configurations in the order first seen
	values map[string]map[string][]float64
}

// readSamples reads go test -bench output files with benchfmt. A malformed
// benchmark line is an error that names the file and line: a ratio must not
// quietly leave samples out.
func readSamples(files []string) (*benchSamples, error) {
	s := &benchSamples{values: map[string]map[string][]float64{}}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rd := benchfmt.NewReader(f, path)
		for rd.Scan() {
			switch rec := rd.Result(); rec := rec.(type) {
			case *benchfmt.SyntaxError:
				f.Close()
				return nil, rec
			case *benchfmt.Result:
				base, parts := rec.Name.Parts()
				name := "Benchmark" + string(base)
				for _, p := range parts {
					if !strings.HasPrefix(string(p), "-") {
						name += string(p)
					}
				}
				byUnit := s.values[name]
				if byUnit == nil {
					byUnit = map[string][]float64{}
					s.values[name] = byUnit
					s.names = append(s.names, name)
				}
				for _, v := range rec.Values {
					byUnit[v.Unit] = append(byUnit[v.Unit], v.Value)
				}
			}
		}
		err = rd.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if len(s.names) == 0 {
		return nil, errors.New("no benchmark results in " + strings.Join(files, ", "))
	}
	return s, nil
}

// ratioResult is one ratio with its interval, printed as one line.
type ratioResult struct {
	num, den, unit string
	benchgate.RatioSummary
}

func (r ratioResult) String() string {
	interval := "no interval: fewer than 2 samples on a side"
	if r.HasInterval() {
		interval = fmt.Sprintf("[%.3f, %.3f] (%g %% bootstrap interval)", r.Lo, r.Hi, 100*r.Confidence)
	}
	return fmt.Sprintf("%s / %s = %.3f %s, %s, n = %d + %d", r.num, r.den, r.Center, interval, r.unit, r.N, r.D)
}

// ratioOf divides the configuration numRE matches by the one denRE matches.
// Each must match exactly one configuration, and both must carry the unit.
func ratioOf(s *benchSamples, numRE, denRE *regexp.Regexp, unit string, conf float64) (ratioResult, error) {
	pick := func(flagName string, re *regexp.Regexp) (string, error) {
		var hits []string
		for _, n := range s.names {
			if re.MatchString(n) {
				hits = append(hits, n)
			}
		}
		switch len(hits) {
		case 0:
			return "", fmt.Errorf("%s %q matches no benchmark (there are %d, e.g. %s)", flagName, re, len(s.names), s.names[0])
		case 1:
			return hits[0], nil
		}
		return "", fmt.Errorf("%s %q matches %d benchmarks, not one: %s", flagName, re, len(hits), strings.Join(hits, ", "))
	}
	n, err := pick("--num", numRE)
	if err != nil {
		return ratioResult{}, err
	}
	d, err := pick("--den", denRE)
	if err != nil {
		return ratioResult{}, err
	}
	if unit == "" {
		unit = "sec/op"
		if _, ok := s.values[n]["cpu-sec/op"]; ok {
			unit = "cpu-sec/op"
		}
	}
	for _, name := range []string{n, d} {
		if _, ok := s.values[name][unit]; !ok {
			units := make([]string, 0, len(s.values[name]))
			for u := range s.values[name] {
				units = append(units, u)
			}
			slices.Sort(units)
			return ratioResult{}, fmt.Errorf("%s reports no %s (it reports %s)", name, unit, strings.Join(units, ", "))
		}
	}
	r := ratioResult{num: n, den: d, unit: unit,
		RatioSummary: benchgate.RatioInterval(s.values[n][unit], s.values[d][unit], conf)}
	if math.IsNaN(r.Center) || math.IsInf(r.Center, 0) {
		return ratioResult{}, fmt.Errorf("%s: the median %s of %s is 0", unit, unit, d)
	}
	return r, nil
}
