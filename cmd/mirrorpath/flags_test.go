package main

import (
	"bytes"
	"flag"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzFlagBounds: a bounded flag accepts a value exactly when it parses and
// lies in its range, and then holds it; a refusal is one line naming the
// flag. checkBenchtime accepts exactly what go test's -benchtime does when
// positive: a duration or Nx.
func FuzzFlagBounds(f *testing.F) {
	for _, s := range []string{"1", "0", "-1", "1073741824", "1073741825", "9223372036854775807", "0x10", "1e3",
		"-1s", "0s", "1ns", "200ms", "1h", "1h0m1s", "soon", "100x", "0x", "-5x", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		n := intFlag(fs, "n", 5, 1, 1<<30, "a size")
		d := durationFlag(fs, "d", time.Second, 0, time.Hour, "a time")
		errN := fs.Parse([]string{"-n", s})
		v, perr := strconv.ParseInt(s, 0, 64)
		if ok := perr == nil && v >= 1 && v <= 1<<30; ok != (errN == nil) || (ok && int64(*n) != v) || (!ok && *n != 5) {
			t.Fatalf("-n %q: error %v, value %d", s, errN, *n)
		}
		errD := fs.Parse([]string{"-d", s})
		dv, derr := time.ParseDuration(s)
		if ok := derr == nil && dv >= 0 && dv <= time.Hour; ok != (errD == nil) || (ok && *d != dv) || (!ok && *d != time.Second) {
			t.Fatalf("-d %q: error %v, value %s", s, errD, *d)
		}
		for _, err := range []error{errN, errD} {
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("error on more than one line: %q", err)
			}
		}
		bt := checkBenchtime(s)
		count, cerr := strconv.ParseInt(strings.TrimSuffix(s, "x"), 10, 64)
		want := strings.HasSuffix(s, "x") && cerr == nil && count >= 1 || !strings.HasSuffix(s, "x") && derr == nil && dv > 0
		if want != (bt == nil) {
			t.Fatalf("checkBenchtime(%q) = %v", s, bt)
		}
	})
}

// FuzzFileCommandFlags: replay, dump and scenario run given any flags and
// a missing file never panic, exit 0 (only for -h), 1 (the missing file)
// or 2 (a bad flag), and report a failure on one line of stderr.
func FuzzFileCommandFlags(f *testing.F) {
	for _, s := range []string{"--chunk 9223372036854775807", "--chunk=0", "--max-input -1", "--min-time -1s",
		"--count 1000", "--strategy allocator --crc full", "--max-batch 61", "--max-decompressed 1073741825",
		"--check --strict --json --deep", "--chunk 1 --count 1 --min-time 0s", "-h", "--json --strategy barrier"} {
		for cmd := range uint8(3) {
			f.Add(cmd, s)
		}
	}
	missing := filepath.Join(f.TempDir(), "missing.log")
	f.Fuzz(func(t *testing.T, cmd uint8, flags string) {
		words := strings.Fields(flags)
		for _, w := range words {
			if !strings.HasPrefix(w, "-") || w == "--" || w == "-" {
				return // a positional word could name a real file
			}
		}
		if len(words) > 0 && !strings.Contains(words[len(words)-1], "=") {
			// the last flag may take the missing file as its value
			words = append(words, "--")
		}
		args := append([]string{[]string{"replay", "dump", "scenario"}[cmd%3]}, words...)
		if args[0] == "scenario" {
			args = append([]string{"scenario", "run"}, words...)
		}
		args = append(args, missing)
		var out, errb bytes.Buffer
		code := mainArgs(args, &out, &errb)
		switch {
		case code == 0 && !slicesHasHelp(words):
			t.Fatalf("%q: exit 0", args)
		case code != 0 && code != 1 && code != 2:
			t.Fatalf("%q: exit %d", args, code)
		case code != 0 && strings.Count(errb.String(), "\n") != 1:
			t.Fatalf("%q: exit %d, stderr %q: want one line", args, code, errb.String())
		}
	})
}

func slicesHasHelp(words []string) bool {
	for _, w := range words {
		if w == "-h" || w == "--h" || w == "-help" || w == "--help" || strings.HasPrefix(w, "-h=") || strings.HasPrefix(w, "--help=") {
			return true
		}
	}
	return false
}
