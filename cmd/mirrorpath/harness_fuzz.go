package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/fuzzcampaign"
)

func init() {
	register(command{
		name:    "fuzz",
		summary: "fuzz campaign over every target in turn, with execs/s and crasher reproduction commands",
		harness: true,
		run:     runFuzz,
	})
}

// longTargets are the targets that find what a short run does not (the
// scenario fuzzer, the store against the model, STOPPING and recovery):
// --long-time gives them longer.
const longTargets = `^(FuzzScenario|FuzzStoreMatchesModel|FuzzStop|FuzzRecover)$`

// runFuzz is `mirrorpath fuzz`: exit 0 when every target ran clean, 1 when a
// target failed or wrote a crasher or a package did not build, 2 on a usage
// error, 3 when --fail-slow is set, nothing failed and a target was flagged
// slow (below --min-rate execs/s, or --max-stall or longer at 0 execs/s).
// A slow target is a warning line in the summary and exit 0 by default: the
// rate depends on the machine and its load, a finding does not, so only a
// caller that knows its machine (a quiet runner) should fail on it.
func runFuzz(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "export":
			return runFuzzExport(args[1:], stdout, stderr)
		case "coverage":
			return runFuzzCoverage(args[1:], stdout, stderr)
		}
	}
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fuzzTime := durationFlag(fs, "time", 20*time.Second, time.Second, 24*time.Hour, "fuzzing time per target (`D`)")
	long := fs.String("long", longTargets, "targets (`RE` on the name) that get --long-time")
	longTime := durationFlag(fs, "long-time", 0, 0, 24*time.Hour, "fuzzing time of the --long targets when longer than --time (`D`; 0: --time)")
	sel := addTargetFlags(fs)
	minimize := fs.String("minimize", fuzzcampaign.DefaultMinimize, "-fuzzminimizetime cap: executions (`Nx`) or a duration")
	parallel := intFlag(fs, "parallel", 0, 0, 1024, "fuzz workers per target (`N`; 0: GOMAXPROCS)")
	minRate := int64Flag(fs, "min-rate", fuzzcampaign.DefaultMinRate, 0, 1e12, "flag targets below `N` execs/s overall (0: never)")
	maxStall := durationFlag(fs, "max-stall", fuzzcampaign.DefaultMaxStall, 0, 24*time.Hour, "flag targets with a stretch of `D` or more at 0 execs/s after baseline coverage (0: never)")
	failSlow := fs.Bool("fail-slow", false, "exit 3 when a target is flagged slow and none failed")
	if code, ok := parseHarnessFlags(fs, args, stderr,
		"usage: mirrorpath fuzz [--time D] [--long RE --long-time D] [--target RE] [--pkg ./...] [--minimize Nx|D] [--min-rate N] [--max-stall D] [--fail-slow]\n"+
			"       mirrorpath fuzz export --out DIR [--encoding go-fuzz-headers|v2] [--target RE] [--pkg ./...] [--dir DIR]\n"+
			"       mirrorpath fuzz coverage [--out DIR] [--cache] [--target RE] [--pkg ./...] [--dir DIR]"); !ok {
		return code
	}
	switch {
	case !fuzzcampaign.ValidMinimize(*minimize):
		return usageError(fs, stderr, "--minimize takes a count of executions (1000x) or a duration (5s)")
	}
	longRE, err := regexp.Compile(*long)
	if err != nil {
		return usageError(fs, stderr, "--long: "+err.Error())
	}
	ctx := context.Background()
	fmt.Fprintf(stderr, "fuzz: discovering targets in %v\n", splitList(*sel.pkg))
	root, targets, broken, code := sel.selectTargets(fs, stderr)
	if code != 0 {
		return code
	}
	opt := fuzzcampaign.Options{FuzzTime: *fuzzTime, Minimize: *minimize, Parallel: *parallel}
	timeOf := func(t fuzzcampaign.Target) time.Duration {
		if longRE.MatchString(t.Name) {
			return max(*fuzzTime, *longTime)
		}
		return *fuzzTime
	}
	var total time.Duration
	for _, t := range targets {
		total += timeOf(t)
	}
	fmt.Fprintf(stderr, "fuzz: %d targets × %s, --long ones %s (about %s plus builds)\n", len(targets), *fuzzTime,
		max(*fuzzTime, *longTime), total)
	lim := fuzzcampaign.Limits{MinRate: *minRate, MaxStall: *maxStall}
	var results []fuzzcampaign.Result
	failed := broken > 0
	for i, t := range targets {
		label := fmt.Sprintf("[%d/%d] %s %s", i+1, len(targets), t.Rel, t.Name)
		fmt.Fprintf(stderr, "fuzz: %s ...\n", label)
		o := opt
		o.FuzzTime = timeOf(t)
		res, err := fuzzcampaign.Run(ctx, root, t, o, func(p fuzzcampaign.Progress) {
			fmt.Fprintf(stderr, "fuzz:   %s: %s, %d execs (%d/s), %d new interesting (corpus %d)\n",
				label, p.Elapsed, p.Execs, p.PerSec, p.NewInteresting, p.Corpus)
		})
		if err != nil {
			fmt.Fprintf(stderr, "fuzz: %s: %v\n", label, err)
			return 1
		}
		verdict := "ok"
		if res.Failed {
			verdict = fmt.Sprintf("FAIL, %d new crashers", len(res.Crashers))
			failed = true
		}
		if why := res.Slow(lim); len(why) > 0 {
			verdict += ", slow: " + strings.Join(why, "; ")
		}
		fmt.Fprintf(stderr, "fuzz: %s: %s (%s)\n", label, verdict, res.Wall.Round(100*time.Millisecond))
		results = append(results, res)
	}
	fuzzcampaign.WriteSummary(stdout, results, lim)
	if failed {
		return 1
	}
	for _, r := range results {
		if *failSlow && len(r.Slow(lim)) > 0 {
			return 3
		}
	}
	return 0
}
