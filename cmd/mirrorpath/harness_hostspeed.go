package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/hostspeed"
)

func init() {
	register(command{
		name:    "hostspeed",
		summary: "whether this machine runs the same code at one speed for a minute (run it before trusting a noisy report)",
		harness: true,
		run:     runHostspeed,
	})
}

const hostspeedUsage = "usage: mirrorpath hostspeed [--for D] [--every D] [--json]"

// runHostspeed is `mirrorpath hostspeed`: three small loops (the 100-byte
// limit, the same inside a mutex, a dependent multiply-add chain) in turn
// for --for, each loop's CPU time per operation printed for every --every
// of wall time, then each loop's spread and the verdict. Exit 0 when every
// loop kept one speed (within hostspeed.Tolerance of its fastest interval),
// 1 when one did not: with nothing else running, the host changed how fast
// this core runs some code (docs/measuring.md, "The host's two speeds"), and
// ratios of codes it slows unequally (the locked limit over the limit) will
// not be steady here.
func runHostspeed(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hostspeed", flag.ContinueOnError)
	dur := durationFlag(fs, "for", time.Minute, 100*time.Millisecond, time.Hour, "how long to sample (`D`)")
	every := durationFlag(fs, "every", 500*time.Millisecond, 10*time.Millisecond, time.Minute, "the wall time of one interval (`D`); each interval runs at least one slice of every loop")
	asJSON := fs.Bool("json", false, "print one JSON object (the intervals and the summary) instead of text")
	if code, ok := parseHarnessFlags(fs, args, stderr, hostspeedUsage); !ok {
		return code
	}
	if *every > *dur {
		return usageError(fs, stderr, fmt.Sprintf("--every %v is longer than --for %v", *every, *dur))
	}
	runtime.LockOSThread() // one thread for the loops: what moves is the core, not the thread's placement
	defer runtime.UnlockOSThread()

	cpu := cpuModel()
	var each func(hostspeed.Interval)
	if !*asJSON {
		fmt.Fprintf(stdout, "CPU %s; loops in slices of 2 ms of process CPU time, ns/op of CPU time per %v:\n", orUnknown(cpu), *every)
		fmt.Fprintf(stdout, "%8s %9s %9s %9s %14s\n", "at", "limit", "locked", "chain", "locked/limit")
		each = func(iv hostspeed.Interval) {
			fmt.Fprintf(stdout, "%7.1fs %9.2f %9.2f %9.3f %14.2f\n", iv.At.Seconds(), iv.NsPerOp[0], iv.NsPerOp[1], iv.NsPerOp[2], iv.NsPerOp[1]/iv.NsPerOp[0])
		}
	}
	ivs := hostspeed.Sample(*dur, *every, each)
	sum, err := hostspeed.Summarize(ivs)
	if err != nil {
		fmt.Fprintf(stderr, "hostspeed: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := writeHostspeedJSON(stdout, cpu, *every, ivs, sum); err != nil {
			fmt.Fprintf(stderr, "hostspeed: %v\n", err)
			return 1
		}
	} else {
		writeHostspeedSummary(stdout, sum)
	}
	if !sum.OneSpeed {
		return 1
	}
	return 0
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// writeHostspeedSummary prints each loop's spread and the verdict.
func writeHostspeedSummary(w io.Writer, s hostspeed.Summary) {
	fmt.Fprintf(w, "\n%-7s %9s %9s %9s %9s  %s\n", "loop", "fastest", "median", "slowest", "slowest/", fmt.Sprintf("intervals over %.2f × fastest", hostspeed.Tolerance))
	for _, sp := range s.Spreads {
		fmt.Fprintf(w, "%-7s %9.3f %9.3f %9.3f %9.2f  %d of %d\n", sp.Kernel, sp.Fastest, sp.Median, sp.Slowest, sp.Ratio, sp.Slow, sp.Intervals)
	}
	if s.OneSpeed {
		fmt.Fprintf(w, "\none speed: every loop stayed within %.2f × its fastest interval\n", hostspeed.Tolerance)
		return
	}
	lim := s.Spreads[0]
	fmt.Fprintf(w, "\nNOT ONE SPEED: the limit's intervals ran %.2f to %.2f ns (%.2f×), the locked loop's %.2f×, the chain's %.2f×.\n",
		lim.Fastest, lim.Slowest, lim.Ratio, s.Spreads[1].Ratio, s.Spreads[2].Ratio)
	if lim.Slow > 0 && lim.Slow < lim.Intervals {
		fmt.Fprintf(w, "The limit ran %.2f ns in %d intervals and %.2f ns in %d; locked / limit was %.2f in the first and %.2f in the second:\n",
			lim.FastMean, lim.Intervals-lim.Slow, lim.SlowMean, lim.Slow, s.LockedOverLimit[0], s.LockedOverLimit[1])
		fmt.Fprintln(w, "a ratio of two codes the host slows unequally follows the share of its rounds run slow (docs/measuring.md, \"The host's two speeds\").")
	}
}

// writeHostspeedJSON prints the sample and its summary as one object.
func writeHostspeedJSON(w io.Writer, cpu string, every time.Duration, ivs []hostspeed.Interval, s hostspeed.Summary) error {
	type interval struct {
		AtSeconds float64 `json:"at_s"`
		Limit     float64 `json:"limit_ns"`
		Locked    float64 `json:"locked_ns"`
		Chain     float64 `json:"chain_ns"`
	}
	type spread struct {
		Loop      string  `json:"loop"`
		Fastest   float64 `json:"fastest_ns"`
		Median    float64 `json:"median_ns"`
		Slowest   float64 `json:"slowest_ns"`
		Ratio     float64 `json:"slowest_over_fastest"`
		Slow      int     `json:"slow_intervals"`
		Intervals int     `json:"intervals"`
	}
	out := struct {
		CPU        string     `json:"cpu"`
		Every      string     `json:"every"`
		Tolerance  float64    `json:"tolerance"`
		OneSpeed   bool       `json:"one_speed"`
		LockedFast float64    `json:"locked_over_limit_fast,omitempty"`
		LockedSlow float64    `json:"locked_over_limit_slow,omitempty"`
		Spreads    []spread   `json:"loops"`
		Intervals  []interval `json:"intervals"`
	}{CPU: cpu, Every: every.String(), Tolerance: hostspeed.Tolerance, OneSpeed: s.OneSpeed, LockedFast: s.LockedOverLimit[0], LockedSlow: s.LockedOverLimit[1]}
	for _, sp := range s.Spreads {
		out.Spreads = append(out.Spreads, spread{sp.Kernel, sp.Fastest, sp.Median, sp.Slowest, sp.Ratio, sp.Slow, sp.Intervals})
	}
	for _, iv := range ivs {
		out.Intervals = append(out.Intervals, interval{iv.At.Seconds(), iv.NsPerOp[0], iv.NsPerOp[1], iv.NsPerOp[2]})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
