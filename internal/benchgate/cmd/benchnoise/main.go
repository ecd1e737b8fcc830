// Command benchnoise reads an A/A benchmark run — the same code measured as
// both sides, interleaved, as `mirrorpath bench` or a loop over one test
// binary runs it — and prints, per benchmark and time unit, the noise the
// gate sees (benchgate.Noise) and, per benchmark, the threshold that noise
// supports, as lines for .ci/bench-thresholds.
//
//	go run ./internal/benchgate/cmd/benchnoise -a 'aa/a-*.txt' -b 'aa/b-*.txt'
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"text/tabwriter"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
)

func main() {
	a := flag.String("a", "", "glob of the first side's benchmark output files")
	b := flag.String("b", "", "glob of the second side's benchmark output files")
	alpha := flag.Float64("alpha", benchgate.DefaultOptions.Alpha, "the gate's significance level")
	draws := flag.Int("draws", 2000, "random splits per row")
	floor := flag.Float64("floor", 100*benchgate.DefaultOptions.Threshold, "smallest threshold suggested, in percent")
	unit := flag.String("unit", ".", "`RE` of the time units the suggested thresholds follow (e.g. cpu-sec/op)")
	flag.Parse()
	re, err := regexp.Compile(*unit)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchnoise: -unit:", err)
		os.Exit(2)
	}
	if err := run(*a, *b, *alpha, *draws, *floor/100, re); err != nil {
		fmt.Fprintln(os.Stderr, "benchnoise:", err)
		os.Exit(1)
	}
}

func run(globA, globB string, alpha float64, draws int, floor float64, unit *regexp.Regexp) error {
	c := benchgate.NewCollector()
	for side, glob := range map[benchgate.Side]string{benchgate.Base: globA, benchgate.Head: globB} {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			return fmt.Errorf("no file matches %q (%v)", glob, err)
		}
		for _, f := range files {
			r, err := os.Open(f)
			if err != nil {
				return err
			}
			err = c.Add(side, r, f)
			r.Close()
			if err != nil {
				return err
			}
		}
	}
	rows := c.Noise(alpha, draws, 1)
	if len(rows) == 0 {
		return fmt.Errorf("no time unit measured on both sides")
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\tunit\tn\tIQR/median\tA/A shift\tA/A p\tsignificant draws\tlimit (p99)")
	var names []string
	byName := map[string][]benchgate.NoiseRow{}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f%%\t%+.1f%%\t%.3f\t%d of %d\t%.1f%%\n",
			r.Name, r.Unit, r.N, 100*r.Spread, 100*r.Shift, r.P, r.Significant, r.Draws, 100*r.Limit)
		if _, ok := byName[r.Name]; !ok {
			names = append(names, r.Name)
			byName[r.Name] = nil
		}
		if unit.MatchString(r.Unit) {
			byName[r.Name] = append(byName[r.Name], r)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("\n# thresholds the noise supports (p < %g; the largest limit of the units matching %q, rounded up to 5%%, at least %.0f%%)\n",
		alpha, unit.String(), 100*floor)
	for _, n := range names {
		fmt.Printf("^Benchmark%s$ %.0f%%\n", regexp.QuoteMeta(n), 100*benchgate.SuggestThreshold(byName[n], floor))
	}
	return nil
}
