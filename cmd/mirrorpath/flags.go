package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// parseFlags parses args into fs, whose help (-h) is usageLine and then the
// flags. ok is false when the command must stop: code 0 after -h (the help
// on stderr), 2 after a bad flag, reported on one line of stderr.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usageLine string) (code int, ok bool) {
	return parseFlagsHelp(fs, args, stderr, func() {
		fmt.Fprintln(stderr, usageLine)
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	})
}

// parseFlagsHelp is parseFlags with the help printed by help.
func parseFlagsHelp(fs *flag.FlagSet, args []string, stderr io.Writer, help func()) (code int, ok bool) {
	// flag's own report of an error is the error and the whole help:
	// silenced here, the error printed on one line below.
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = help
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		help()
		return 0, false
	}
	return usageError(fs, stderr, err.Error()), false
}

// parseHarnessFlags parses args into fs for one of the harness commands. It
// returns ok=false with the exit status when the command must stop: 0 after
// -h (the flags are printed to stderr), 2 on a bad flag or a stray argument.
func parseHarnessFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usageLine string) (code int, ok bool) {
	if code, ok := parseFlags(fs, args, stderr, usageLine); !ok {
		return code, false
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0))), false
	}
	return 0, true
}

// usageError prints msg on one line, naming the command and where its flags
// are listed, and returns exit status 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s (mirrorpath %s -h lists the flags)\n", fs.Name(), msg, fs.Name())
	return 2
}

// intFlag defines an int flag that accepts only [lo, hi]: a value outside
// is a flag error before the command runs, so that no size reaches an
// allocation unchecked. The help states the range.
func intFlag(fs *flag.FlagSet, name string, value, lo, hi int, usage string) *int {
	v := &boundedInt{v: int64(value), lo: int64(lo), hi: int64(hi)}
	fs.Var(v, name, fmt.Sprintf("%s (%d to %d)", usage, lo, hi))
	p := new(int)
	*p = value
	v.set = func(n int64) { *p = int(n) }
	return p
}

// int64Flag is intFlag for an int64.
func int64Flag(fs *flag.FlagSet, name string, value, lo, hi int64, usage string) *int64 {
	v := &boundedInt{v: value, lo: lo, hi: hi}
	fs.Var(v, name, fmt.Sprintf("%s (%d to %d)", usage, lo, hi))
	p := new(int64)
	*p = value
	v.set = func(n int64) { *p = n }
	return p
}

// durationFlag defines a duration flag that accepts only [lo, hi].
func durationFlag(fs *flag.FlagSet, name string, value, lo, hi time.Duration, usage string) *time.Duration {
	v := &boundedDuration{v: value, lo: lo, hi: hi}
	fs.Var(v, name, fmt.Sprintf("%s (%s to %s)", usage, lo, hi))
	return &v.v
}

// boundedInt is the flag.Value of intFlag and int64Flag.
type boundedInt struct {
	v, lo, hi int64
	set       func(int64)
}

func (b *boundedInt) String() string {
	if b == nil {
		return "0"
	}
	return strconv.FormatInt(b.v, 10)
}

func (b *boundedInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return fmt.Errorf("want an integer from %d to %d", b.lo, b.hi)
	}
	if err := inRange(n, b.lo, b.hi, strconv.FormatInt); err != nil {
		return err
	}
	b.v = n
	b.set(n)
	return nil
}

// boundedDuration is the flag.Value of durationFlag.
type boundedDuration struct{ v, lo, hi time.Duration }

func (b *boundedDuration) String() string {
	if b == nil {
		return "0s"
	}
	return b.v.String()
}

func (b *boundedDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration from %s to %s (e.g. 200ms, 5s)", b.lo, b.hi)
	}
	if err := inRange(d, b.lo, b.hi, func(d time.Duration, _ int) string { return d.String() }); err != nil {
		return err
	}
	b.v = d
	return nil
}

func inRange[T int64 | time.Duration](n, lo, hi T, format func(T, int) string) error {
	switch {
	case n < lo:
		return fmt.Errorf("below the least %s", format(lo, 10))
	case n > hi:
		return fmt.Errorf("above the limit %s", format(hi, 10))
	}
	return nil
}

// checkBenchtime checks a -benchtime value as go test reads it (testing's
// benchTimeFlag): a positive duration or a positive count of iterations Nx.
func checkBenchtime(s string) error {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if c, err := strconv.ParseInt(n, 10, 64); err != nil || c < 1 {
			return fmt.Errorf("--benchtime %q: want a positive count of iterations (100x) or a positive duration (100ms)", s)
		}
		return nil
	}
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return fmt.Errorf("--benchtime %q: want a positive duration (100ms) or a positive count of iterations (100x)", s)
	}
	return nil
}

// splitList splits a flag value on spaces and commas.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
}

// nameList joins the names of an enum's values with sep, for a flag's help:
// the names come from the enum's own list (pid.Strategies, say), not a copy.
func nameList[T fmt.Stringer](values []T, sep string) string {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = v.String()
	}
	return strings.Join(names, sep)
}
