// Command mirrorpath holds two kinds of tools, listed apart by
// `mirrorpath -h`.
//
// The product tools work on the user's data and need nothing but this
// binary:
//
//   - dump: print Kafka .log segments and their index, time-index,
//     transaction-index and snapshot files, as kafka-dump-log does
//   - replay: run the user's own segments through the append path under
//     each strategy
//   - scenario: run scenario files through the simulator and its oracle
//   - conform: check a broker's produce path over the wire
//
// The harness tools measure and check mirrorpath itself; all but ratio
// and hostspeed work in its source tree, and run, bench, fuzz and profile build its
// tests with the go toolchain:
//
//   - run: the scenario catalog and the benchmark report (results/)
//   - bench: the CI benchmark gate, base against head
//   - fuzz: fuzz campaigns over every target
//   - profile: CPU and allocation profiles with flame graphs
//   - report: a run's report rebuilt from its raw files
//   - ratio: the ratio of two benchmarks' medians with an interval
//   - hostspeed: whether the machine runs the same code at one speed
//
// One file per tool (dump and its index, state and strict checks in
// dump_*.go); the harness tools' files are named harness_*.go, their
// shared helpers are in harness.go, and the flag helpers every tool uses
// are in flags.go.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one sub-command. run returns the process exit status:
// 0 success, 1 a finding (invalid input, unmet expectation, failed gate), 2 usage.
type command struct {
	name    string
	summary string
	harness bool // a harness tool (measures and checks mirrorpath), else a product tool
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

// register adds a sub-command; each lives in its own file and calls this from init.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("mirrorpath: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// usage prints the commands of cmds, the product tools and the harness
// tools apart, each group by name.
func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: mirrorpath <command> [arguments]")
	for _, group := range []struct {
		title   string
		harness bool
	}{
		{"Product tools (your logs, segments, scenario files, broker):", false},
		{"Harness tools (measure and check mirrorpath itself; all but ratio and hostspeed work in its source tree):", true},
	} {
		fmt.Fprintln(w)
		fmt.Fprintln(w, group.title)
		var names []string
		for n, c := range cmds {
			if c.harness == group.harness {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mirrorpath <command> -h' for a command's flags.")
}

func main() { os.Exit(mainArgs(os.Args[1:], os.Stdout, os.Stderr)) }

func mainArgs(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, commands)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mirrorpath: unknown command %q\n\n", args[0])
		usage(stderr, commands)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}
