package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/mirrorpath/mirrorpath/internal/fuzzcampaign"
)

// targetFlags are the flags every fuzz subcommand selects its targets by.
type targetFlags struct{ target, pkg, dir *string }

func addTargetFlags(fs *flag.FlagSet) targetFlags {
	return targetFlags{
		target: fs.String("target", ".", "only targets whose name matches `RE`"),
		pkg:    fs.String("pkg", "./...", "packages (`PATTERNS`, space or comma separated)"),
		dir:    fs.String("dir", "", "module `DIR` (default: the module enclosing the current directory)"),
	}
}

// selectTargets discovers the fuzz targets of the packages in --pkg whose
// name matches --target, for the fuzz subcommands; broken counts the
// packages that do not build (reported, their targets skipped). code is
// non-zero when the command must stop with it.
func (f targetFlags) selectTargets(fs *flag.FlagSet, stderr io.Writer) (root string, targets []fuzzcampaign.Target, broken int, code int) {
	dir, pkg, target := *f.dir, *f.pkg, *f.target
	re, err := regexp.Compile(target)
	if err != nil {
		return "", nil, 0, usageError(fs, stderr, "--target: "+err.Error())
	}
	root, err = moduleRoot(dir)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return "", nil, 0, 2
	}
	all, failed, err := fuzzcampaign.Discover(context.Background(), root, splitList(pkg))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return "", nil, 0, 1
	}
	for p, why := range failed {
		fmt.Fprintf(stderr, "%s: %s does not build, its targets are skipped: %s\n", fs.Name(), p, why)
	}
	for _, t := range all {
		if re.MatchString(t.Name) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintf(stderr, "%s: no fuzz target matches --target %q (%d targets found)\n", fs.Name(), target, len(all))
		return "", nil, 0, 1
	}
	return root, targets, len(failed), 0
}

// checkOutDir checks, before any work, that an output directory can be
// made at path: path is a directory or does not exist, and its nearest
// existing ancestor is a directory. It creates nothing.
func checkOutDir(path string) error {
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		switch {
		case err == nil && st.IsDir():
			return nil
		case err == nil:
			return fmt.Errorf("%s: not a directory", p)
		case !errors.Is(err, fs.ErrNotExist):
			return err
		case filepath.Dir(p) == p:
			return err
		}
	}
}

// reportFailed prints the packages whose seed run failed, sorted; it
// returns whether there were any.
func reportFailed(stderr io.Writer, name string, failed map[string]error) bool {
	var pkgs []string
	for p := range failed {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		fmt.Fprintf(stderr, "%s: %s: %v\n", name, p, failed[p])
	}
	return len(pkgs) > 0
}

// runFuzzExport is `mirrorpath fuzz export`: the seed archives OSS-Fuzz and
// ClusterFuzzLite read, <pkg>_<FuzzX>_seed_corpus.zip per target, with every
// f.Add seed and testdata/fuzz file encoded for the libFuzzer harness.
// Exit 1 when a package's seeds could not be run (the archives hold what
// was captured), 2 on a usage error.
func runFuzzExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzz export", flag.ContinueOnError)
	out := fs.String("out", "", "write the seed archives into `DIR` (required; $OUT in a ClusterFuzzLite build)")
	enc := fs.String("encoding", string(fuzzcampaign.GoFuzzHeaders), "libFuzzer harness the archives are for: `E` = go-fuzz-headers (compile_native_go_fuzzer) or v2 (compile_native_go_fuzzer_v2)")
	sel := addTargetFlags(fs)
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath fuzz export --out DIR [--encoding go-fuzz-headers|v2] [--target RE] [--pkg ./...] [--dir DIR]"); !ok {
		return code
	}
	if *out == "" {
		return usageError(fs, stderr, "--out is required")
	}
	if err := checkOutDir(*out); err != nil {
		return usageError(fs, stderr, "--out: "+err.Error())
	}
	if _, err := fuzzcampaign.EncodeLibFuzzer(nil, fuzzcampaign.Encoding(*enc)); err != nil {
		return usageError(fs, stderr, "--encoding: "+err.Error())
	}
	root, targets, _, code := sel.selectTargets(fs, stderr)
	if code != 0 {
		return code
	}
	fmt.Fprintf(stderr, "fuzz export: running the seeds of %d targets\n", len(targets))
	res, failed, err := fuzzcampaign.Export(context.Background(), root, targets, fuzzcampaign.Encoding(*enc), *out)
	if err != nil {
		fmt.Fprintf(stderr, "fuzz export: %v\n", err)
		return 1
	}
	for _, e := range res {
		if e.Path == "" {
			fmt.Fprintf(stdout, "%s %s: no seed, no archive\n", e.Target.Rel, e.Target.Name)
		} else {
			fmt.Fprintf(stdout, "%s %s: %d seeds → %s\n", e.Target.Rel, e.Target.Name, e.Seeds, e.Path)
		}
		for _, s := range e.Skipped {
			fmt.Fprintf(stdout, "  left out %s\n", s)
		}
	}
	if reportFailed(stderr, "fuzz export", failed) {
		return 1
	}
	return 0
}

// runFuzzCoverage is `mirrorpath fuzz coverage`: the coverage of the module
// reached by every target's seeds (and, with --cache, the corpus the fuzzer
// grew), as go tool cover's HTML report and per-function table.
func runFuzzCoverage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fuzz coverage", flag.ContinueOnError)
	out := fs.String("out", "results/tmp/fuzz-coverage", "write coverage.out, coverage.html and coverage.txt into `DIR`")
	cache := fs.Bool("cache", false, "also run the corpus go test -fuzz grew in $(go env GOCACHE)/fuzz")
	sel := addTargetFlags(fs)
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath fuzz coverage [--out DIR] [--cache] [--target RE] [--pkg ./...] [--dir DIR]"); !ok {
		return code
	}
	if err := checkOutDir(*out); err != nil {
		return usageError(fs, stderr, "--out: "+err.Error())
	}
	root, targets, _, code := sel.selectTargets(fs, stderr)
	if code != 0 {
		return code
	}
	fmt.Fprintf(stderr, "fuzz coverage: running the corpus of %d targets under -coverprofile\n", len(targets))
	res, err := fuzzcampaign.Coverage(context.Background(), root, targets, fuzzcampaign.CoverageOptions{OutDir: *out, Cache: *cache})
	if err != nil {
		fmt.Fprintf(stderr, "fuzz coverage: %v\n", err)
		return 1
	}
	if *cache {
		for _, t := range targets {
			fmt.Fprintf(stdout, "%s %s: %d corpus entries from the fuzz cache\n", t.Rel, t.Name, res.CacheSeeds[t.Name])
		}
	}
	fmt.Fprintf(stdout, "coverage of the module by the fuzz corpus: %s of statements\n  %s\n  %s\n  %s\n", res.Total, res.HTML, res.Func, res.Profile)
	if reportFailed(stderr, "fuzz coverage", res.Failed) {
		return 1
	}
	return 0
}
