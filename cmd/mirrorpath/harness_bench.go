package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/benchgate"
)

func init() {
	register(command{
		name:    "bench",
		summary: "CI benchmark gate: interleaved base/head runs compared with benchstat statistics",
		harness: true,
		run:     runBench,
	})
}

// runBench is `mirrorpath bench`: builds test binaries of --base and --head
// (default: the working tree), runs them interleaved, and fails (1) on a
// significant slowdown above --threshold or any allocs/op increase.
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	base := fs.String("base", "", "base git revision (`REF`, required)")
	head := fs.String("head", "", "head git revision (`REF`); default: the working tree as it is on disk")
	bench := fs.String("bench", ".", "benchmarks to run (`RE`, as go test -bench)")
	count := intFlag(fs, "count", 10, 1, maxBenchRounds, "interleaved rounds = samples per side (`N`, at least 10 for a meaningful gate)")
	benchtime := fs.String("benchtime", "100ms", "per-run -benchtime (`D` or Nx, positive)")
	threshold := fs.Float64("threshold", 5, "slowdown in `PCT` that fails when significant")
	alpha := fs.Float64("alpha", benchgate.DefaultOptions.Alpha, "p-value below which a difference is significant")
	pkg := fs.String("pkg", "./...", "packages (`PATTERNS`, space or comma separated)")
	out := fs.String("out", "", "write base.txt, head.txt, gate.txt and gate.csv into `DIR`")
	repo := fs.String("repo", ".", "module directory (`DIR`) of the repository to gate")
	timeout := durationFlag(fs, "timeout", 30*time.Minute, time.Second, maxBenchTimeout, "give up after `D`")
	markdown := fs.Bool("markdown", false, "write the table to stdout as Markdown (job summaries, pull-request comments)")
	confirm := intFlag(fs, "confirm", 0, 0, maxBenchRounds, "before failing on a time regression, rerun only the flagged benchmarks for `N` more rounds; fail only if the rerun confirms it (0: no rerun)")
	thresholds := fs.String("thresholds", "", "per-benchmark slowdown limits from `FILE` (lines \"REGEXP PCT\" and \"default PCT\")")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath bench --base REF [--head REF] [--bench RE] [--count N] [--confirm N] [--threshold PCT] [--thresholds FILE] [--pkg ./...] [--out DIR] [--markdown]"); !ok {
		return code
	}
	switch {
	case *base == "":
		return usageError(fs, stderr, "--base is required")
	case checkBenchtime(*benchtime) != nil:
		return usageError(fs, stderr, checkBenchtime(*benchtime).Error())
	case *threshold < 0 || *alpha <= 0 || *alpha >= 1:
		return usageError(fs, stderr, "--threshold must be >= 0 and --alpha in (0,1)")
	}
	opt := benchgate.Options{Alpha: *alpha, Threshold: *threshold / 100}
	if *thresholds != "" {
		f, err := os.Open(*thresholds)
		if err != nil {
			return usageError(fs, stderr, "--thresholds: "+err.Error())
		}
		opt.PerBenchmark, err = benchgate.ParseThresholds(f, *thresholds)
		f.Close()
		if err != nil {
			return usageError(fs, stderr, err.Error())
		}
	}
	if *count < 10 {
		fmt.Fprintf(stderr, "bench: warning: --count %d < 10: the gate needs at least 10 samples per side (docs/measuring.md) (with fewer than 5, no p-value can fall below 0.01)\n", *count)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	g := gateRun{
		repo: *repo, base: *base, head: *head, patterns: splitList(*pkg),
		cfg:     benchgate.RunConfig{Bench: *bench, BenchTime: *benchtime, Rounds: *count, Progress: stderr},
		opt:     opt,
		out:     *out,
		confirm: *confirm,
	}
	res, err := g.do(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if *markdown {
		res.WriteMarkdown(stdout)
	} else {
		res.WriteText(stdout)
	}
	if res.Failed() {
		return 1
	}
	return 0
}

// Bounds of bench's flags, checked before anything is checked out or built.
const (
	maxBenchRounds  = 1000
	maxBenchTimeout = 24 * time.Hour
)

type gateRun struct {
	repo, base, head string
	patterns         []string
	cfg              benchgate.RunConfig
	opt              benchgate.Options
	out              string
	confirm          int // rounds of the confirming rerun; 0 = none
}

func (g gateRun) do(ctx context.Context, stderr io.Writer) (*benchgate.Result, error) {
	tmp, err := os.MkdirTemp("", "mirrorpath-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	var trees [2]*benchgate.Tree
	var bins [2][]benchgate.Binary
	for s, ref := range [2]string{g.base, g.head} {
		label := benchgate.Side(s).String()
		if ref == "" {
			trees[s] = benchgate.WorkingTree(g.repo, label)
		} else {
			fmt.Fprintf(stderr, "bench: checking out %s %s\n", label, ref)
			t, err := benchgate.Checkout(ctx, g.repo, ref, label)
			if err != nil {
				return nil, err
			}
			defer t.Close()
			trees[s] = t
		}
		start := time.Now()
		fmt.Fprintf(stderr, "bench: building %s test binaries (%s)\n", trees[s].Label, strings.Join(g.patterns, " "))
		var broken map[string]error
		bins[s], broken, err = trees[s].BuildTests(ctx, g.patterns, filepath.Join(tmp, label))
		if err != nil {
			return nil, err
		}
		for pkg, e := range broken {
			if benchgate.Side(s) == benchgate.Head {
				return nil, e // a head that does not build fails the gate
			}
			fmt.Fprintf(stderr, "bench: %s does not build in base, not compared: %v\n", pkg, e)
		}
		fmt.Fprintf(stderr, "bench: built %d %s binaries in %s\n", len(bins[s]), label, time.Since(start).Round(time.Millisecond))
	}
	pairs, onlyBase, onlyHead := benchgate.Pairs(bins[benchgate.Base], bins[benchgate.Head])
	for _, p := range onlyBase {
		fmt.Fprintf(stderr, "bench: %s has tests in base only; not compared\n", p)
	}
	for _, p := range onlyHead {
		fmt.Fprintf(stderr, "bench: %s has tests in head only; not compared\n", p)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("no package with tests on both sides")
	}
	fmt.Fprintf(stderr, "bench: %d rounds × %d packages × 2 sides, -benchtime %s\n", g.cfg.Rounds, len(pairs), g.cfg.BenchTime)

	if g.out != "" {
		if err := os.MkdirAll(g.out, 0o755); err != nil {
			return nil, err
		}
	}
	c := benchgate.NewCollector()
	if err := g.runRounds(ctx, pairs, g.cfg, c, "base.txt", "head.txt"); err != nil {
		return nil, err
	}
	res, err := c.Compare(g.opt)
	if err != nil {
		return nil, fmt.Errorf("%w (does --bench %q match any benchmark?)", err, g.cfg.Bench)
	}
	if flagged := res.Flagged(); g.confirm > 0 && len(flagged) > 0 {
		if res, err = g.confirmRun(ctx, stderr, pairs, res, flagged); err != nil {
			return nil, err
		}
	}
	if g.out != "" {
		for name, w := range map[string]func(io.Writer) error{
			"gate.txt": res.WriteText, "gate.csv": res.WriteCSV, "gate.md": res.WriteMarkdown,
		} {
			if err := writeFileWith(filepath.Join(g.out, name), w); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(stderr, "bench: wrote %s\n", g.out)
	}
	return res, nil
}

// rawFiles creates the named files of --out for the raw output of each
// side; with no --out it returns nil writers. close closes them.
func (g gateRun) rawFiles(baseFile, headFile string) (raw [2]io.Writer, close func() error, err error) {
	var files []*os.File
	close = func() error {
		var first error
		for _, f := range files {
			if err := f.Close(); err != nil && first == nil {
				first = err
			}
		}
		files = nil
		return first
	}
	if g.out == "" {
		return raw, close, nil
	}
	for s, name := range [2]string{baseFile, headFile} {
		f, err := os.Create(filepath.Join(g.out, name))
		if err != nil {
			close()
			return raw, nil, err
		}
		raw[s] = f
		files = append(files, f)
	}
	return raw, close, nil
}

// runRounds runs cfg's interleaved rounds over pairs into c, copying the
// raw output of each side to the named files of --out when it is set.
func (g gateRun) runRounds(ctx context.Context, pairs []benchgate.Pair, cfg benchgate.RunConfig, c *benchgate.Collector, baseFile, headFile string) error {
	raw, closeRaw, err := g.rawFiles(baseFile, headFile)
	if err != nil {
		return err
	}
	if err := benchgate.RunInterleaved(ctx, pairs, cfg, c, raw); err != nil {
		closeRaw()
		return err
	}
	return closeRaw()
}

// confirmRun reruns only the flagged benchmarks, g.confirm rounds of each
// package's binaries with a -test.bench that selects them, and decides the
// flagged rows on those fresh samples (benchgate.Result.Confirm says why
// fresh rather than pooled). The raw output goes to confirm-base.txt and
// confirm-head.txt of --out.
func (g gateRun) confirmRun(ctx context.Context, stderr io.Writer, pairs []benchgate.Pair, first *benchgate.Result, flagged []benchgate.Row) (*benchgate.Result, error) {
	patterns := benchgate.ConfirmPatterns(flagged)
	fmt.Fprintf(stderr, "bench: %d time rows flagged; confirming with %d more rounds of only those benchmarks\n", len(flagged), g.confirm)
	raw, closeRaw, err := g.rawFiles("confirm-base.txt", "confirm-head.txt")
	if err != nil {
		return nil, err
	}
	defer closeRaw()
	c := benchgate.NewCollector()
	for _, p := range pairs {
		re, ok := patterns[p.Head.ImportPath]
		if !ok {
			continue
		}
		cfg := g.cfg
		cfg.Bench, cfg.Rounds = re, g.confirm
		fmt.Fprintf(stderr, "bench: confirming %s -test.bench %s\n", p.Head.ImportPath, re)
		if err := benchgate.RunInterleaved(ctx, []benchgate.Pair{p}, cfg, c, raw); err != nil {
			return nil, err
		}
	}
	if err := closeRaw(); err != nil {
		return nil, err
	}
	again, err := c.Compare(g.opt)
	if err != nil {
		return nil, fmt.Errorf("confirming run: %w", err)
	}
	return first.Confirm(again, g.confirm), nil
}
