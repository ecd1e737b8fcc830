package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// parseHarnessFlags parses args into fs for one of the harness commands. It
// returns ok=false with the exit status when the command must stop: 0 after
// -h (the flags are printed to stderr), 2 on a bad flag or a stray argument.
func parseHarnessFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usageLine string) (code int, ok bool) {
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usageLine)
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, false
		}
		return 2, false // flag has printed the error and the usage
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0))), false
	}
	return 0, true
}

// usageError prints msg and the flags, and returns exit status 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), msg)
	fs.Usage()
	return 2
}

// splitList splits a flag value on spaces and commas.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
