package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mirrorpath/mirrorpath/internal/report"
)

func init() {
	register(command{
		name:    "report",
		summary: "rebuild report.md (and with --readme the README's marked sections) from a run directory's raw files",
		harness: true,
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

// writeReports loads the run directory dir, writes its report.md, prints
// the text report with the noise verdict and, with readme, rewrites the
// marked sections of README.md and results/scenarios.md under root.
func writeReports(root, dir string, readme bool, stdout, stderr io.Writer) int {
	rep, err := report.Load(dir)
	if err != nil {
		reportError(stderr, err)
		return 1
	}
	if err := rep.WriteReportFile(dir); err != nil {
		reportError(stderr, err)
		return 1
	}
	rep.WriteText(stdout)
	if n := rep.Noise(); n != nil && n.Noisy {
		fmt.Fprintf(stdout, "\n*** NOISY report: %d noise checks failed (above); ratios marked ‼ are not to be quoted ***\n", len(n.Reasons))
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", filepath.Join(dir, report.ReportFile))
	if !readme {
		return 0
	}
	from, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(from, "..") {
		fmt.Fprintf(stderr, "report: --readme needs the run directory inside the module (%s is not under %s)\n", dir, root)
		return 2
	}
	for _, doc := range report.GeneratedDocs {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(doc))); os.IsNotExist(err) {
			continue // a module without that document (another module's run)
		}
		done, err := rep.RewriteSections(root, doc, filepath.ToSlash(from))
		if err != nil {
			reportError(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "rewrote %s: sections %s\n", doc, strings.Join(done, ", "))
	}
	return 0
}
