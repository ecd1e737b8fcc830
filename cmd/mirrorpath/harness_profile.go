package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/mirrorpath/mirrorpath/internal/flamegraph"
)

func init() {
	register(command{
		name:    "profile",
		summary: "CPU and allocation profiles of benchmarks (pprof) with self-contained SVG flame graphs",
		harness: true,
		run:     runProfile,
	})
}

// profileDefaultBench is one mirrored append of a 16 KiB batch under the
// bit-field strategy: the path the harness exists to measure, in one
// configuration, so that the default run takes seconds, not minutes.
const profileDefaultBench = "BenchmarkAppend/strategy=bitfield/crc=patch/batch=16KiB/producers=1000$"

// runProfile is `mirrorpath profile`: go test -bench with -cpuprofile and
// -memprofile for one package, then cpu.svg and alloc.svg flame graphs and
// the top functions of each.
func runProfile(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	bench := fs.String("bench", profileDefaultBench, "benchmarks to profile (`RE`, as go test -bench)")
	pkg := fs.String("pkg", "./appendpath", "the one package (`P`) whose benchmarks run")
	out := fs.String("out", "", "output `DIR` (default results/tmp/profile under the module; git ignores results/tmp)")
	benchtime := fs.String("benchtime", "1s", "-benchtime (`D` or Nx, positive)")
	top := intFlag(fs, "top", 12, 0, 1000, "list the `N` functions with the most flat cost")
	dir := fs.String("dir", "", "module `DIR` (default: the module enclosing the current directory)")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath profile [--bench RE] [--pkg P] [--out DIR] [--benchtime D]"); !ok {
		return code
	}
	if strings.Contains(*pkg, "...") || len(splitList(*pkg)) != 1 {
		return usageError(fs, stderr, "--pkg takes exactly one package (go test writes one profile per run)")
	}
	if err := checkBenchtime(*benchtime); err != nil {
		return usageError(fs, stderr, err.Error())
	}
	root, err := moduleRoot(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "profile: %v\n", err)
		return 2
	}
	outDir := *out
	if outDir == "" {
		outDir = filepath.Join(root, "results", "tmp", "profile")
	}
	if outDir, err = filepath.Abs(outDir); err == nil {
		err = os.MkdirAll(outDir, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "profile: %v\n", err)
		return 1
	}
	cpuFile, memFile := filepath.Join(outDir, "cpu.pprof"), filepath.Join(outDir, "mem.pprof")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", *bench, "-benchtime", *benchtime, "-benchmem",
		"-cpuprofile", cpuFile, "-memprofile", memFile, "-o", filepath.Join(outDir, "bench.test"), *pkg)
	cmd.Dir = root
	var benchOut, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &benchOut, &errOut
	step := progress(stderr, "profile", fmt.Sprintf("go test -bench '%s' -cpuprofile -memprofile %s", *bench, *pkg), nil)
	err = cmd.Run()
	os.WriteFile(filepath.Join(outDir, "bench.txt"), benchOut.Bytes(), 0o644)
	if err != nil {
		step("FAILED")
		fmt.Fprintf(stderr, "profile: go test failed: %v\n%s%s", err, tailText(benchOut.String(), 20), tailText(errOut.String(), 20))
		return 1
	}
	if !strings.Contains(benchOut.String(), "\nBenchmark") && !strings.HasPrefix(benchOut.String(), "Benchmark") {
		step("no benchmarks")
		fmt.Fprintf(stderr, "profile: no benchmark in %s matches -bench '%s'\n", *pkg, *bench)
		return 1
	}
	step("done")

	code := 0
	for _, g := range []struct{ in, sample, svg, title string }{
		{cpuFile, "cpu", "cpu.svg", "CPU"},
		{memFile, "alloc_space", "alloc.svg", "allocated bytes"},
	} {
		if err := flameFile(g.in, g.sample, filepath.Join(outDir, g.svg),
			fmt.Sprintf("%s: %s of %s -bench '%s'", g.title, g.sample, *pkg, *bench), *top, stdout); err != nil {
			fmt.Fprintf(stderr, "profile: %s: %v\n", filepath.Base(g.in), err)
			code = 1
		}
	}
	fmt.Fprintf(stdout, "\nwrote %s: cpu.pprof mem.pprof (go tool pprof), cpu.svg alloc.svg (open in a browser), bench.txt\n", outDir)
	return code
}

// flameFile renders one pprof file as a flame graph and prints its top list.
func flameFile(in, sample, svgPath, title string, top int, stdout io.Writer) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	p, err := flamegraph.Parse(data, flamegraph.DefaultLimits)
	if err != nil {
		return err
	}
	idx, err := flamegraph.SampleIndex(p, sample)
	if err != nil {
		return err
	}
	unit := p.SampleType[idx].Unit
	root := flamegraph.Tree(p, idx)
	if err := writeFileWith(svgPath, func(w io.Writer) error {
		return flamegraph.WriteSVG(w, root, flamegraph.SVGOptions{Title: title, Unit: unit})
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s (total %s)\n", title, flamegraph.FormatValue(root.Value, unit))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "flat\tflat%\tcum\tcum%\tfunction")
	for _, e := range flamegraph.Top(p, idx, top) {
		fmt.Fprintf(tw, "%s\t%.1f%%\t%s\t%.1f%%\t%s\n", flamegraph.FormatValue(e.Flat, unit), pct(e.Flat, root.Value),
			flamegraph.FormatValue(e.Cum, unit), pct(e.Cum, root.Value), e.Name)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	return nil
}

func pct(v, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * float64(v) / float64(total)
}

// tailText returns the last n lines of s.
func tailText(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}
