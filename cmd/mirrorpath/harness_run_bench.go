package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

// benchmarks builds one test binary per package (so that a package that
// does not build or has no benchmark does not hide the others), then runs
// c.count rounds (benchgate.Rounds, as the gate does); each round runs
// every binary once per pattern with -test.count 1, which keeps machine
// drift out of the ratios between configurations. The output goes to
// bench.txt and is parsed. failure is go test's reason when a benchmark
// binary failed to run (a bad -bench pattern, a failing benchmark).
func (c runConfig) benchmarks(rep *report.Report, stderr io.Writer) (fig *report.Figures, failure string) {
	raw, err := os.Create(filepath.Join(c.out, report.BenchFile))
	if err != nil {
		rep.Notes = append(rep.Notes, "bench.txt: "+err.Error())
		return nil, ""
	}
	defer raw.Close()
	binDir, err := os.MkdirTemp("", "mirrorpath-run-")
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return nil, ""
	}
	defer os.RemoveAll(binDir)

	ctx := context.Background()
	tree := benchgate.WorkingTree(c.root, "run")
	var bins []benchgate.Binary
	step := progress(stderr, "run", fmt.Sprintf("building test binaries of %s", strings.Join(c.pkgs, " ")), nil)
	for i, pkg := range c.pkgs {
		if !strings.Contains(pkg, "...") {
			if st, err := os.Stat(filepath.Join(c.root, pkg)); err != nil || !st.IsDir() {
				rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no such directory in the module, so no benchmarks from it", pkg))
				continue
			}
		}
		b, broken, err := tree.BuildTests(ctx, []string{pkg}, filepath.Join(binDir, strconv.Itoa(i)))
		for _, e := range broken {
			if err == nil {
				err = e
			}
		}
		switch {
		case err != nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: does not build, its benchmarks are missing: %s", pkg, firstLines(err.Error(), 3)))
		case len(b) == 0:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: has no test files, so no benchmarks", pkg))
		}
		bins = append(bins, b...)
	}
	step(fmt.Sprintf("%d binaries", len(bins)))

	rq := startRunQueue(250 * time.Millisecond)
	defer func() {
		if rep.RunQueue = rq.Stop(); rep.RunQueue != nil {
			rep.Env = append(rep.Env, rep.RunQueue.String())
		}
	}()
	if c.interleave {
		return c.interleavedBenchmarks(ctx, rep, bins, raw, stderr)
	}
	results := map[string]int{}
	failed := map[string]bool{}
	var all bytes.Buffer
	var total atomic.Int64 // read by the heartbeat of progress
	plan := func(round int) iter.Seq[benchgate.Job] {
		return func(yield func(benchgate.Job) bool) {
			step := progress(stderr, "run", fmt.Sprintf("benchmarks, round %d/%d", round+1, c.count),
				func() string { return fmt.Sprintf("%d results so far", total.Load()) })
			defer func() { step(fmt.Sprintf("%d results", total.Load())) }()
			for _, b := range bins {
				for _, pat := range c.patterns {
					if failed[b.ImportPath] {
						break
					}
					bt := c.benchtime
					if f, ok := c.fixed[pat]; ok {
						bt = f
					}
					if !yield(benchgate.Job{Bin: b, Bench: pat, BenchTime: bt}) {
						return
					}
				}
			}
		}
	}
	// done never fails: a package whose run fails is noted and left out of
	// the later rounds, the others go on.
	_ = benchgate.Rounds(ctx, c.count, 0, plan, func(round int, j benchgate.Job, out []byte, err error) error {
		if err != nil {
			failed[j.Bin.ImportPath] = true
			msg := fmt.Sprintf("%s: benchmark run failed in round %d, later rounds skipped: %s",
				j.Bin.ImportPath, round+1, failLines(err.Error(), 4))
			rep.Notes = append(rep.Notes, msg)
			if failure == "" {
				failure = msg
			}
			return nil
		}
		n := strings.Count(string(out), "\nBenchmark")
		results[j.Bin.ImportPath] += n
		total.Add(int64(n))
		raw.Write(out)
		all.Write(out)
		return nil
	})
	for _, b := range bins {
		if results[b.ImportPath] == 0 && !failed[b.ImportPath] {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: none of its benchmarks is in the selection (`%s`)", b.ImportPath, strings.Join(c.patterns, "` or `")))
		}
	}
	return parseRunBench(rep, &all), failure
}

// interleavedBenchmarks is benchmarks' default selection measured by each
// package's TestInterleavedFigures (interleaved): the plan's rounds, every
// configuration a ratio compares alternating in slices in one process.
func (c runConfig) interleavedBenchmarks(ctx context.Context, rep *report.Report, bins []benchgate.Binary, raw io.Writer, stderr io.Writer) (*report.Figures, string) {
	plan := runInterleavePlan
	plan.Rounds = c.count
	out, none, err := interleaved(ctx, bins, plan, stderr)
	if err != nil {
		msg := "benchmark run failed: " + failLines(err.Error(), 4)
		rep.Notes = append(rep.Notes, msg)
		return nil, msg
	}
	for _, p := range none {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: printed no interleaved figures (no %s in it)", p, strings.Trim(runInterleaveTest, "^$")))
	}
	raw.Write(out)
	return parseRunBench(rep, bytes.NewReader(out)), ""
}

// parseRunBench parses the run's benchmark output and notes what the
// report's tables lack.
func parseRunBench(rep *report.Report, r io.Reader) *report.Figures {
	fig, err := report.ParseBench(r, report.BenchFile)
	if err != nil {
		rep.Notes = append(rep.Notes, "parsing benchmark output: "+err.Error())
		return nil
	}
	names := fig.Names()
	for _, want := range []struct{ name, why string }{
		{"Append", "strategy/asis ratios and the throughput chart"},
		{"Limit", "the asis/limit ratio and the limit line"},
		{"Update", "the store/model ratio and the producer-state chart"},
	} {
		if !slices.Contains(names, want.name) {
			rep.Notes = append(rep.Notes, fmt.Sprintf("no Benchmark%s results, so %s cannot be produced", want.name, want.why))
		}
	}
	return fig
}

// charts writes the SVG charts that have data.
func (c runConfig) charts(rep *report.Report, stderr io.Writer) {
	for _, ch := range []struct {
		file  string
		chart *report.Chart
	}{
		{"append-throughput.svg", rep.Figures.ThroughputChart()},
		{"strategy-over-asis.svg", rep.Figures.StrategyChart()},
		{"psm-update.svg", rep.Figures.UpdateChart()},
	} {
		if !ch.chart.HasData() {
			os.Remove(filepath.Join(c.out, ch.file)) // no stale chart from an earlier run in the same --out
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s not drawn: no data for %q", ch.file, ch.chart.Title))
			continue
		}
		if err := writeFileWith(filepath.Join(c.out, ch.file), ch.chart.WriteSVG); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %v", ch.file, err))
			continue
		}
		rep.Charts = append(rep.Charts, report.ChartFile{Title: ch.chart.Title, File: ch.file})
	}
}

// benchCPU returns the first "cpu:" line of benchmark output.
func benchCPU(path string) string {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "cpu: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
