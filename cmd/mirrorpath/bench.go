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
	count := fs.Int("count", 10, "interleaved rounds = samples per side (`N`, at least 10 for a meaningful gate)")
	benchtime := fs.String("benchtime", "100ms", "per-run -benchtime (`D` or Nx)")
	threshold := fs.Float64("threshold", 5, "slowdown in `PCT` that fails when significant")
	alpha := fs.Float64("alpha", benchgate.DefaultOptions.Alpha, "p-value below which a difference is significant")
	pkg := fs.String("pkg", "./...", "packages (`PATTERNS`, space or comma separated)")
	out := fs.String("out", "", "write base.txt, head.txt, gate.txt and gate.csv into `DIR`")
	repo := fs.String("repo", ".", "module directory (`DIR`) of the repository to gate")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after `D`")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath bench --base REF [--head REF] [--bench RE] [--count N] [--threshold PCT] [--pkg ./...] [--out DIR]"); !ok {
		return code
	}
	switch {
	case *base == "":
		return usageError(fs, stderr, "--base is required")
	case *count < 1:
		return usageError(fs, stderr, "--count must be at least 1")
	case *threshold < 0 || *alpha <= 0 || *alpha >= 1:
		return usageError(fs, stderr, "--threshold must be >= 0 and --alpha in (0,1)")
	}
	if *count < 10 {
		fmt.Fprintf(stderr, "bench: warning: --count %d < 10: the gate needs at least 10 samples per side (docs/measuring.md) (with fewer than 5, no p-value can fall below 0.01)\n", *count)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	g := gateRun{
		repo: *repo, base: *base, head: *head, patterns: splitList(*pkg),
		cfg: benchgate.RunConfig{Bench: *bench, BenchTime: *benchtime, Rounds: *count, Progress: stderr},
		opt: benchgate.Options{Alpha: *alpha, Threshold: *threshold / 100},
		out: *out,
	}
	res, err := g.do(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	res.WriteText(stdout)
	if res.Failed() {
		return 1
	}
	return 0
}

type gateRun struct {
	repo, base, head string
	patterns         []string
	cfg              benchgate.RunConfig
	opt              benchgate.Options
	out              string
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

	var raw [2]io.Writer
	var files []*os.File
	if g.out != "" {
		if err := os.MkdirAll(g.out, 0o755); err != nil {
			return nil, err
		}
		for s, name := range [2]string{"base.txt", "head.txt"} {
			f, err := os.Create(filepath.Join(g.out, name))
			if err != nil {
				return nil, err
			}
			defer f.Close()
			raw[s] = f
			files = append(files, f)
		}
	}
	c := benchgate.NewCollector()
	if err := benchgate.RunInterleaved(ctx, pairs, g.cfg, c, raw); err != nil {
		return nil, err
	}
	res, err := c.Compare(g.opt)
	if err != nil {
		return nil, fmt.Errorf("%w (does --bench %q match any benchmark?)", err, g.cfg.Bench)
	}
	if g.out != "" {
		if err := writeFileWith(filepath.Join(g.out, "gate.txt"), res.WriteText); err != nil {
			return nil, err
		}
		if err := writeFileWith(filepath.Join(g.out, "gate.csv"), res.WriteCSV); err != nil {
			return nil, err
		}
		for _, f := range files {
			if err := f.Close(); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(stderr, "bench: wrote %s\n", g.out)
	}
	return res, nil
}
