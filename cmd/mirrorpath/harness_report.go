package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

func init() {
	register(command{
		name:    "report",
		summary: "rebuild report.md (and with --readme the README's marked sections) from a run directory's raw files",
		run:     runReport,
	})
}

// runReport is `mirrorpath report`: what `mirrorpath run` does after its
// measurements, from the files a run left (run.json, bench.txt,
// scenarios.jsonl), without measuring anything.
func runReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	from := fs.String("from", "", "run `DIR` (default results/run under the module, the committed run; a plain `run` writes results/tmp/run)")
	readme := fs.Bool("readme", false, "also rewrite the marked sections of README.md and results/scenarios.md under the module")
	dir := fs.String("dir", "", "module `DIR` (default: the module enclosing the current directory)")
	if code, ok := parseHarnessFlags(fs, args, stderr, "usage: mirrorpath report [--from DIR] [--readme]"); !ok {
		return code
	}
	root, err := moduleRoot(*dir)
	if err != nil {
		reportError(stderr, err)
		return 2
	}
	d := *from
	if d == "" {
		d = filepath.Join(root, committedRun)
	} else if d, err = filepath.Abs(d); err != nil {
		reportError(stderr, err)
		return 2
	}
	return writeReports(root, d, *readme, stdout, stderr)
}

// reportError prints err on one line with one "report:" prefix: the errors
// of package report carry it already.
func reportError(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "report: %s\n", strings.TrimPrefix(err.Error(), "report: "))
}
