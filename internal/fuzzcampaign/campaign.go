// Package fuzzcampaign runs every native Go fuzz target of a module in turn:
// discovery with `go test -list '^Fuzz'`, one `go test -fuzz` per target with
// -fuzzminimizetime capped (see DefaultMinimize), live progress parsed from
// the fuzzer's status lines, a flag on targets that barely fuzz (see
// DefaultMinRate), and new crashers — files that appear under
// testdata/fuzz/FuzzX/ — reported with the command that reproduces them.
package fuzzcampaign

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// ErrList marks a failure to list packages or fuzz targets.
var ErrList = errors.New("fuzzcampaign: listing fuzz targets failed")

// Target is one fuzz function of one package.
type Target struct {
	ImportPath string
	Dir        string // package directory
	Rel        string // package path relative to the module, "./codec"
	Name       string // FuzzX
}

// corpusDir is where go test writes the target's failing inputs.
func (t Target) corpusDir() string { return filepath.Join(t.Dir, "testdata", "fuzz", t.Name) }

// Discover lists the fuzz targets of the packages matched by patterns, in
// package then name order. Packages that fail to build are returned in
// broken with go's message, so the campaign can go on without them.
func Discover(ctx context.Context, modDir string, patterns []string) (targets []Target, broken map[string]string, err error) {
	listArgs := append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{.Dir}}"}, patterns...)
	out, err := run(ctx, modDir, "go", listArgs...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: go list: %v", ErrList, err)
	}
	dirs := map[string]string{}
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if ip, dir, ok := strings.Cut(line, "\t"); ok {
			dirs[ip] = dir
			pkgs = append(pkgs, ip)
		}
	}
	if len(pkgs) == 0 {
		return nil, nil, fmt.Errorf("%w: no package matches %s", ErrList, strings.Join(patterns, " "))
	}
	// One go test -list for all packages; it exits 1 if any fails to build.
	lc := exec.CommandContext(ctx, "go", append([]string{"test", "-list", "^Fuzz"}, pkgs...)...)
	lc.Dir = modDir
	listOut, _ := lc.CombinedOutput() // stderr interleaved: build errors precede their FAIL line
	names, broken := parseList(listOut)
	absMod, _ := filepath.Abs(modDir)
	for _, ip := range pkgs {
		for _, n := range names[ip] {
			rel, err := filepath.Rel(absMod, dirs[ip])
			if err != nil || strings.HasPrefix(rel, "..") {
				rel = ip
			} else {
				rel = "./" + filepath.ToSlash(rel)
			}
			targets = append(targets, Target{ImportPath: ip, Dir: dirs[ip], Rel: rel, Name: n})
		}
	}
	return targets, broken, nil
}

var (
	okLine   = regexp.MustCompile(`^ok\s+(\S+)`)
	noTests  = regexp.MustCompile(`^\?\s+(\S+)\s+\[no test files\]`)
	failLine = regexp.MustCompile(`^FAIL\s+(\S+)(?:\s+\[(.*)\])?`)
)

// parseList reads `go test -list '^Fuzz' pkgs...` output: each package's
// names come before its "ok <pkg>" line; a "FAIL <pkg> [build failed]" line
// closes a package that could not be listed.
func parseList(out []byte) (names map[string][]string, broken map[string]string) {
	names, broken = map[string][]string{}, map[string]string{}
	var pending, noise []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Fuzz") && !strings.ContainsAny(line, " \t"):
			pending = append(pending, line)
		case okLine.MatchString(line):
			pkg := okLine.FindStringSubmatch(line)[1]
			sort.Strings(pending)
			if len(pending) > 0 {
				names[pkg] = pending
			}
			pending, noise = nil, nil
		case noTests.MatchString(line):
			pending, noise = nil, nil
		case failLine.MatchString(line):
			m := failLine.FindStringSubmatch(line)
			why := m[2]
			if len(noise) > 0 {
				why = strings.TrimSpace(why + ": " + strings.Join(noise[:min(len(noise), 3)], " / "))
			}
			broken[m[1]] = why
			pending, noise = nil, nil
		default:
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				noise = append(noise, s)
			}
		}
	}
	return names, broken
}

// Progress is one status line of a running fuzzer:
// "fuzz: elapsed: 3s, execs: 12345 (4115/sec), new interesting: 3 (total: 20)".
type Progress struct {
	Elapsed        time.Duration
	Execs          int64
	PerSec         int64
	NewInteresting int64
	Corpus         int64
}

var progressLine = regexp.MustCompile(`^fuzz: elapsed: (\S+), execs: (\d+) \((\d+)/sec\), new interesting: (\d+) \(total: (\d+)\)`)

// parseProgress parses a fuzzer status line; ok is false for other lines
// (baseline coverage, test output).
func parseProgress(line string) (p Progress, ok bool) {
	m := progressLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return p, false
	}
	var err error
	if p.Elapsed, err = time.ParseDuration(m[1]); err != nil {
		return p, false
	}
	p.Execs, _ = strconv.ParseInt(m[2], 10, 64)
	p.PerSec, _ = strconv.ParseInt(m[3], 10, 64)
	p.NewInteresting, _ = strconv.ParseInt(m[4], 10, 64)
	p.Corpus, _ = strconv.ParseInt(m[5], 10, 64)
	return p, true
}

var baselineLine = regexp.MustCompile(`^fuzz: elapsed: (\S+), gathering baseline coverage: (\d+)/(\d+) completed`)

// The speed a target must keep, and why these numbers. Healthy targets of
// this module run 10k-30k execs/s on two shared cores; a target an order of
// magnitude below that, under 1,000/s, gets fewer than 60,000 inputs in a
// one-minute run, too few for coverage-guided mutation to get past the
// framing, length and CRC checks in front of the code it means to reach.
// Go prints a status line every 3 s with the rate since the previous line,
// so 3 s is the shortest stretch the fuzzer itself can report at 0 execs/s:
// a line at "0/sec" after the baseline coverage means every worker spent a
// whole reporting interval on one input (an oracle that does not return, or
// minimizing a large input), time in which nothing was explored.
const (
	DefaultMinRate  = 1000
	DefaultMaxStall = 3 * time.Second
)

// Limits are the speed below which a target is flagged in the summary.
type Limits struct {
	MinRate  int64         // execs/s over the whole fuzz time; 0 = no limit
	MaxStall time.Duration // flag a stretch at 0 execs/s this long or longer; 0 = no limit
}

// Speed is what a run's status lines say of its speed.
type Speed struct {
	Last Progress // the final status line
	// Stall is the longest stretch of consecutive status lines reporting
	// 0 execs/s after the baseline coverage phase, measured from the line
	// before the first of them (each line's rate covers the interval since
	// the previous line); StallFrom is where it began.
	Stall, StallFrom time.Duration

	prev       time.Duration // elapsed of the previous status line of either kind
	stallStart time.Duration
	inStall    bool
}

// add feeds one line of go test's output; it returns the line's Progress
// and true for an execs status line.
func (s *Speed) add(line string) (Progress, bool) {
	if m := baselineLine.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
		if d, err := time.ParseDuration(m[1]); err == nil {
			s.prev, s.inStall = d, false
		}
		return Progress{}, false
	}
	p, ok := parseProgress(line)
	if !ok {
		return p, false
	}
	s.Last = p
	if p.PerSec == 0 {
		if !s.inStall {
			s.inStall, s.stallStart = true, s.prev
		}
		if d := p.Elapsed - s.stallStart; d > s.Stall {
			s.Stall, s.StallFrom = d, s.stallStart
		}
	} else {
		s.inStall = false
	}
	s.prev = p.Elapsed
	return p, true
}

// rate is execs per second over the whole fuzz time, baseline included.
func (s Speed) rate() int64 {
	if s.Last.Elapsed <= 0 {
		return 0
	}
	return int64(float64(s.Last.Execs) / s.Last.Elapsed.Seconds())
}

// slow returns why the run is below lim, or nil.
func (s Speed) slow(lim Limits) []string {
	var why []string
	if lim.MinRate > 0 && s.rate() < lim.MinRate {
		why = append(why, fmt.Sprintf("%d execs/s overall, below %d", s.rate(), lim.MinRate))
	}
	if lim.MaxStall > 0 && s.Stall >= lim.MaxStall {
		why = append(why, fmt.Sprintf("%s at 0 execs/s from %s", s.Stall, s.StallFrom))
	}
	return why
}

// DefaultMinimize caps the minimization of every input at 1,000 calls of
// the fuzz function. Go minimizes each input that finds new coverage, not
// only crashers, and the worker doing so reports no execs meanwhile; its
// byte-subset pass makes about n²/2 calls for an n-byte input, so a time cap
// (Go's default is 60 s) is always used up by inputs of a few KiB and a
// target that keeps finding coverage stalls at 0 execs/s for the cap after
// every find. A count cap costs 1,000 executions, milliseconds for most
// targets; a crasher is then minimized less, and can be minimized further by
// fuzzing its target with a larger -fuzzminimizetime.
const DefaultMinimize = "1000x"

// ValidMinimize reports whether s is a -fuzzminimizetime value: a duration
// ("5s") or a count of executions ("1000x").
func ValidMinimize(s string) bool {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		_, err := strconv.ParseUint(n, 10, 63)
		return err == nil
	}
	d, err := time.ParseDuration(s)
	return err == nil && d >= 0
}

// Options configure each target's run.
type Options struct {
	FuzzTime time.Duration // -fuzztime per target
	Minimize string        // -fuzzminimizetime: a duration or "<N>x"; "" = DefaultMinimize
	Parallel int           // -parallel (fuzz workers); 0 = GOMAXPROCS
}

// Crasher is a failing input the run wrote under testdata/fuzz/FuzzX/.
type Crasher struct {
	Path  string // as written, absolute
	Repro string // go test -run 'FuzzX/<name>' ./pkg
}

// Result is the outcome of fuzzing one target.
type Result struct {
	Target   Target
	Wall     time.Duration
	Speed    Speed // the final status line, rate and stalls
	Failed   bool  // go test exited non-zero for a reason other than DeadlineRace
	Crashers []Crasher
	// DeadlineRace: go test exited non-zero only because Go's fuzz
	// coordinator reported its own -fuzztime deadline (golang/go#75804,
	// fixed in Go 1.27): no input failed and none was written.
	DeadlineRace bool
	Tail         string // last lines of output when Failed
}

// deadlineRace reports whether a failed run's output is only Go's fuzztime
// deadline race (golang/go#75804): the coordinator printed "context deadline
// exceeded" and wrote no failing input.
func deadlineRace(tail string, crashers int) bool {
	return crashers == 0 && strings.Contains(tail, "context deadline exceeded") &&
		!strings.Contains(tail, "Failing input written")
}

// Run fuzzes one target. onProgress, if set, is called for every status
// line. Run returns an error only when go cannot be started.
func Run(ctx context.Context, modDir string, t Target, opt Options, onProgress func(Progress)) (Result, error) {
	before := listFiles(t.corpusDir())
	minimize := opt.Minimize
	if minimize == "" {
		minimize = DefaultMinimize
	}
	args := []string{"test", "-run", "^$", "-fuzz", "^" + t.Name + "$",
		"-fuzztime", opt.FuzzTime.String(), "-fuzzminimizetime", minimize}
	if opt.Parallel > 0 {
		args = append(args, "-parallel", strconv.Itoa(opt.Parallel))
	}
	args = append(args, t.ImportPath)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = modDir
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	res := Result{Target: t}
	var tail []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if p, ok := res.Speed.add(line); ok {
				if onProgress != nil {
					onProgress(p)
				}
				continue
			}
			tail = append(tail, line)
			if len(tail) > 30 {
				tail = tail[1:]
			}
		}
		io.Copy(io.Discard, pr)
	}()
	err := cmd.Wait()
	pw.Close()
	<-done
	res.Wall = time.Since(start)
	if err != nil {
		res.Failed = true
		res.Tail = strings.Join(tail, "\n")
	}
	after := listFiles(t.corpusDir())
	for _, f := range after {
		if !slices.Contains(before, f) {
			res.Crashers = append(res.Crashers, Crasher{
				Path:  filepath.Join(t.corpusDir(), f),
				Repro: fmt.Sprintf("go test -run '%s/%s' %s", t.Name, f, t.Rel),
			})
		}
	}
	if res.Failed && deadlineRace(res.Tail, len(res.Crashers)) {
		res.Failed, res.DeadlineRace = false, true
	}
	return res, nil
}

func listFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Slow returns why a clean run is below lim; nil for a run that failed
// (its finding is what matters) or kept the speed.
func (r Result) Slow(lim Limits) []string {
	if r.Failed {
		return nil
	}
	return r.Speed.slow(lim)
}

// WriteSummary writes one row per target; below, a warning line for every
// target below lim (see Limits) and every new crasher with its
// reproduction command.
func WriteSummary(w io.Writer, results []Result, lim Limits) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "package\ttarget\tresult\tfuzz time\texecs\texecs/s\tnew interesting\tcorpus\tcrashers\tlongest 0/s\tspeed")
	for _, r := range results {
		verdict := "ok"
		switch {
		case r.Failed:
			verdict = "FAIL"
		case r.DeadlineRace:
			verdict = "ok (go#75804)"
		}
		last, speed := r.Speed.Last, "ok"
		if r.Failed {
			speed = "-"
		} else if len(r.Slow(lim)) > 0 {
			speed = "SLOW"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.Target.Rel, r.Target.Name, verdict,
			last.Elapsed, last.Execs, r.Speed.rate(), last.NewInteresting, last.Corpus, len(r.Crashers),
			r.Speed.Stall, speed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if why := r.Slow(lim); len(why) > 0 {
			fmt.Fprintf(w, "\nwarning: %s %s is slow: %s\n", r.Target.Rel, r.Target.Name, strings.Join(why, "; "))
		}
	}
	for _, r := range results {
		for _, c := range r.Crashers {
			fmt.Fprintf(w, "\nnew crasher %s\n  reproduce: %s\n", c.Path, c.Repro)
		}
		if r.Failed && len(r.Crashers) == 0 {
			fmt.Fprintf(w, "\n%s %s failed without a new crasher:\n%s\n", r.Target.Rel, r.Target.Name, indent(r.Tail))
		}
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func run(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.Bytes()...), fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
