package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

func init() {
	register(command{
		name:    "ratio",
		summary: "ratio of two benchmarks' medians in one go test -bench output, with a bootstrap confidence interval",
		harness: true,
		run:     runRatio,
	})
}

const ratioUsage = "usage: mirrorpath ratio --num RE --den RE [--unit U] [--confidence C] FILE... (a FILE ending in .gz is decompressed)"

// runRatio is `mirrorpath ratio`: the ratio of two configurations in the
// same benchmark output with its percentile-bootstrap interval, by the rule
// the report follows (report.Figures.Ratio): paired by round when the output
// is in interleaved rounds, else median(num) / median(den). benchstat compares one configuration across
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
	figs, err := report.ReadBenchFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "ratio: %v\n", err)
		return 1
	}
	if len(figs.Configs()) == 0 {
		fmt.Fprintf(stderr, "ratio: no benchmark results in %s\n", strings.Join(fs.Args(), ", "))
		return 1
	}
	r, err := ratioOf(figs, numRE, denRE, *unit, *conf)
	if err != nil {
		fmt.Fprintf(stderr, "ratio: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, r)
	return 0
}

// benchName is a configuration's name as go test prints it, without the
// -GOMAXPROCS suffix: what --num and --den match and the output names.
func benchName(k report.Key) string { return "Benchmark" + k.Full }

// ratioOf divides the configuration numRE matches by the one denRE matches.
// Each must match exactly one configuration, and both must carry the unit.
func ratioOf(f *report.Figures, numRE, denRE *regexp.Regexp, unit string, conf float64) (ratioResult, error) {
	configs := f.Configs()
	pick := func(flagName string, re *regexp.Regexp) (report.Key, error) {
		var hits []report.Key
		var names []string
		for _, k := range configs {
			if re.MatchString(benchName(k)) {
				hits = append(hits, k)
				names = append(names, benchName(k))
			}
		}
		switch len(hits) {
		case 0:
			return report.Key{}, fmt.Errorf("%s %q matches no benchmark (there are %d, e.g. %s)", flagName, re, len(configs), benchName(configs[0]))
		case 1:
			return hits[0], nil
		}
		return report.Key{}, fmt.Errorf("%s %q matches %d benchmarks, not one: %s", flagName, re, len(hits), strings.Join(names, ", "))
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
		if f.Samples(n, "cpu-sec/op") != nil {
			unit = "cpu-sec/op"
		}
	}
	for _, k := range []report.Key{n, d} {
		if f.Samples(k, unit) == nil {
			return ratioResult{}, fmt.Errorf("%s reports no %s (it reports %s)", benchName(k), unit, strings.Join(f.Units(k), ", "))
		}
	}
	r := ratioResult{num: benchName(n), den: benchName(d), unit: unit,
		RatioSummary: f.Ratio(n, d, unit, conf)}
	if math.IsNaN(r.Center) || math.IsInf(r.Center, 0) {
		return ratioResult{}, fmt.Errorf("%s: the median %s of %s is 0", unit, unit, benchName(d))
	}
	return r, nil
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
	if r.Paired {
		interval += ", paired by round"
	}
	return fmt.Sprintf("%s / %s = %.3f %s, %s, n = %d + %d", r.num, r.den, r.Center, interval, r.unit, r.N, r.D)
}
