package benchgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrBuild marks a failure to check out or build a revision's test binaries.
var ErrBuild = errors.New("benchgate: build failed")

// ErrRun marks a test binary that exited with an error while benchmarking.
var ErrRun = errors.New("benchgate: benchmark run failed")

// Tree is one revision's module on disk: either the caller's working tree
// or a git worktree checked out for the gate.
type Tree struct {
	Label  string // "base" / "head" and the ref, for messages
	ModDir string // directory holding go.mod
	repo   string // git top level that owns the worktree ("" when not a checkout)
	wtDir  string // worktree root to remove
}

// Checkout adds a detached git worktree of ref (any revision git
// rev-parse accepts) under a new temporary directory and returns the tree of
// the module at the same relative path as modDir has in its repository.
// Call Close to remove it.
func Checkout(ctx context.Context, modDir, ref, label string) (*Tree, error) {
	top, err := gitOut(ctx, modDir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not in a git repository: %v", ErrBuild, modDir, err)
	}
	absMod, err := filepath.Abs(modDir)
	if err != nil {
		return nil, err
	}
	absMod, _ = filepath.EvalSymlinks(absMod)
	top, _ = filepath.EvalSymlinks(top)
	rel, err := filepath.Rel(top, absMod)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "benchgate-"+label+"-")
	if err != nil {
		return nil, err
	}
	wt := filepath.Join(tmp, "src")
	if _, err := gitOut(ctx, top, "worktree", "add", "--detach", "--quiet", wt, ref); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("%w: git worktree add %s: %v", ErrBuild, ref, err)
	}
	return &Tree{Label: label + " " + ref, ModDir: filepath.Join(wt, rel), repo: top, wtDir: wt}, nil
}

// WorkingTree returns the tree of the module in modDir as it is on disk,
// uncommitted changes included.
func WorkingTree(modDir, label string) *Tree {
	return &Tree{Label: label + " (working tree)", ModDir: modDir}
}

// Close removes a checked-out worktree; it is a no-op for a working tree.
func (t *Tree) Close() error {
	if t.wtDir == "" {
		return nil
	}
	_, err := gitOut(context.Background(), t.repo, "worktree", "remove", "--force", t.wtDir)
	os.RemoveAll(filepath.Dir(t.wtDir))
	if err != nil {
		// The directory is gone either way; drop the stale administrative entry.
		gitOut(context.Background(), t.repo, "worktree", "prune")
	}
	return err
}

// Binary is one package's compiled test binary.
type Binary struct {
	ImportPath string
	Dir        string // package directory: the binary runs there, as go test does
	Path       string
}

// BuildTests compiles a test binary for every package matched by patterns
// (go list syntax, relative to the tree's module) that has test files, into
// binDir. Packages without tests are skipped. A package that does not
// compile does not stop the others: it is returned in broken with go's
// message (each matching ErrBuild). err is set only when the packages
// cannot be listed.
func (t *Tree) BuildTests(ctx context.Context, patterns []string, binDir string) (bins []Binary, broken map[string]error, err error) {
	args := append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}"}, patterns...)
	out, err := goOut(ctx, t.ModDir, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: go list: %v", ErrBuild, t.Label, err)
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return nil, nil, err
	}
	broken = map[string]error{}
	for i, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || (f[2] == "0" && f[3] == "0") {
			continue
		}
		b := Binary{ImportPath: f[0], Dir: f[1], Path: filepath.Join(binDir, fmt.Sprintf("%03d.test", i))}
		if _, err := goOut(ctx, t.ModDir, "test", "-c", "-o", b.Path, b.ImportPath); err != nil {
			broken[b.ImportPath] = fmt.Errorf("%w: %s: go test -c %s: %v", ErrBuild, t.Label, b.ImportPath, err)
			continue
		}
		bins = append(bins, b)
	}
	return bins, broken, nil
}

// RunConfig says what every interleaved round runs.
type RunConfig struct {
	Bench     string // -test.bench regexp
	BenchTime string // -test.benchtime, e.g. "200ms" or "1000x"
	Rounds    int    // samples per side per benchmark
	Timeout   time.Duration
	// Progress, if set, receives one line per round.
	Progress io.Writer
}

// Pair matches a base binary with the head binary of the same package.
type Pair struct{ Base, Head Binary }

// Pairs matches binaries by import path; unmatched packages are returned by name.
func Pairs(base, head []Binary) (pairs []Pair, onlyBase, onlyHead []string) {
	hm := map[string]Binary{}
	for _, h := range head {
		hm[h.ImportPath] = h
	}
	for _, b := range base {
		if h, ok := hm[b.ImportPath]; ok {
			pairs = append(pairs, Pair{b, h})
			delete(hm, b.ImportPath)
		} else {
			onlyBase = append(onlyBase, b.ImportPath)
		}
	}
	for _, h := range head {
		if _, ok := hm[h.ImportPath]; ok {
			onlyHead = append(onlyHead, h.ImportPath)
		}
	}
	return pairs, onlyBase, onlyHead
}

// order returns the side that runs first and second in round i: base, head,
// head, base, base, head, … so that each side leads in half of the rounds.
func order(i int) [2]Side {
	if i%2 == 0 {
		return [2]Side{Base, Head}
	}
	return [2]Side{Head, Base}
}

// Job is one run of a test binary in a round: the -test.bench pattern and
// -test.benchtime it runs with, and the side of a comparison it measures
// (Base where nothing is compared).
type Job struct {
	Bin       Binary
	Bench     string
	BenchTime string
	Side      Side
}

// Rounds runs n rounds of benchmarks. Round i (from 0) runs the jobs that
// plan(i) yields, one after another, each once (-test.count 1) with the
// timeout, and hands every job's output, or its error, to done; an error
// that done returns ends the run with it. A job is drawn from plan only
// when the one before it is done, so that plan can leave out what an
// earlier failure made pointless, and the code plan runs after its last
// job runs when the round ends.
//
// One sample of every configuration per round spreads the samples of each
// over the whole run, which keeps machine drift out of comparisons between
// configurations measured at different moments.
func Rounds(ctx context.Context, n int, timeout time.Duration, plan func(round int) iter.Seq[Job],
	done func(round int, j Job, out []byte, err error) error) error {
	for i := range n {
		for j := range plan(i) {
			out, err := j.Bin.runBench(ctx, j.Bench, j.BenchTime, timeout)
			if err := done(i, j, out, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunInterleaved runs cfg.Rounds rounds (Rounds); in each round every pair
// runs its base and head binary once, in the order given by order, and the
// output is added to c. The raw output of each side is also copied to
// raw[Base] and raw[Head] when those are non-nil.
func RunInterleaved(ctx context.Context, pairs []Pair, cfg RunConfig, c *Collector, raw [2]io.Writer) error {
	if cfg.Rounds < 1 {
		return fmt.Errorf("benchgate: rounds must be at least 1, got %d", cfg.Rounds)
	}
	start := time.Now()
	last := start // of the last progress line: one at least every 10 s
	plan := func(i int) iter.Seq[Job] {
		return func(yield func(Job) bool) {
			for _, p := range pairs {
				for _, s := range order(i) {
					bin := p.Base
					if s == Head {
						bin = p.Head
					}
					if !yield(Job{Bin: bin, Bench: cfg.Bench, BenchTime: cfg.BenchTime, Side: s}) {
						return
					}
				}
			}
			if cfg.Progress != nil {
				last = time.Now()
				fmt.Fprintf(cfg.Progress, "bench: round %d/%d done (%s)\n", i+1, cfg.Rounds, time.Since(start).Round(time.Second))
			}
		}
	}
	return Rounds(ctx, cfg.Rounds, cfg.Timeout, plan, func(i int, j Job, out []byte, err error) error {
		if err != nil {
			return err
		}
		if raw[j.Side] != nil {
			raw[j.Side].Write(out)
		}
		if err := c.Add(j.Side, bytes.NewReader(out), j.Side.String()); err != nil {
			return err
		}
		if cfg.Progress != nil && time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Fprintf(cfg.Progress, "bench:   round %d/%d: %s %s done (%s)\n",
				i+1, cfg.Rounds, j.Side, j.Bin.ImportPath, time.Since(start).Round(time.Second))
		}
		return nil
	})
}

// runBench runs the benchmarks matching bench once (-test.count 1, with
// -test.benchmem) in the package directory and returns the output. A zero
// benchTime or timeout keeps the testing package's default.
func (b Binary) runBench(ctx context.Context, bench, benchTime string, timeout time.Duration) ([]byte, error) {
	args := []string{"-test.run", "^$", "-test.bench", bench, "-test.count", "1", "-test.benchmem"}
	if benchTime != "" {
		args = append(args, "-test.benchtime", benchTime)
	}
	if timeout > 0 {
		args = append(args, "-test.timeout", timeout.String())
	}
	cmd := exec.CommandContext(ctx, b.Path, args...)
	cmd.Dir = b.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v\n%s%s", ErrRun, b.ImportPath, err, tail(out), tail(stderr.Bytes()))
	}
	return out, nil
}

func tail(b []byte) string {
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	return cmdOut(ctx, dir, "git", args...)
}

func goOut(ctx context.Context, dir string, args ...string) (string, error) {
	return cmdOut(ctx, dir, "go", args...)
}

func cmdOut(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%v: %s", err, strings.TrimSpace(tail(stderr.Bytes())))
	}
	return strings.TrimSpace(string(out)), nil
}
