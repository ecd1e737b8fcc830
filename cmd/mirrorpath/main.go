// Command mirrorpath runs the mirrorpath harness: the scenario catalog and a
// benchmark comparison (run), the CI benchmark gate (bench), fuzz campaigns
// (fuzz), profiles (profile), the log dump tool (dump), replays of user
// segments (replay) and scenario files (scenario).
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

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: mirrorpath <command> [arguments]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'mirrorpath <command> -h' for a command's flags.")
}

func main() { os.Exit(mainArgs(os.Args[1:], os.Stdout, os.Stderr)) }

func mainArgs(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mirrorpath: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}
