package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchArgs(t *testing.T) {
	badThresholds := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(badThresholds, []byte("# limits\ndefault 5%\nBenchmarkX x%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "-h"}, 0, "-threshold PCT"},
		{[]string{"bench"}, 2, "--base is required"},
		{[]string{"bench", "--base", "x", "--count", "0"}, 2, `invalid value "0" for flag -count: below the least 1`},
		{[]string{"bench", "--base", "x", "--timeout", "-1s"}, 2, `invalid value "-1s" for flag -timeout: below the least 1s`},
		{[]string{"bench", "--base", "x", "--benchtime", "soon"}, 2, `--benchtime "soon": want a positive duration`},
		{[]string{"bench", "--base", "x", "--benchtime", "0x"}, 2, `--benchtime "0x": want a positive count`},
		{[]string{"bench", "--base", "x", "--benchtime", "-1s"}, 2, `--benchtime "-1s": want a positive duration`},
		{[]string{"bench", "--base", "x", "--alpha", "2"}, 2, "--alpha in (0,1)"},
		{[]string{"bench", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"bench", "--base", "x", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"bench", "--base", "no-such-ref-xyz", "--repo", t.TempDir()}, 1, "not in a git repository"},
		{[]string{"bench", "-h"}, 0, "-confirm N"},
		{[]string{"bench", "-h"}, 0, "-thresholds FILE"},
		{[]string{"bench", "-h"}, 0, "-markdown"},
		{[]string{"bench", "--base", "x", "--confirm", "-1"}, 2, `invalid value "-1" for flag -confirm: below the least 0`},
		{[]string{"bench", "--base", "x", "--thresholds", filepath.Join(t.TempDir(), "none")}, 2, "--thresholds: open "},
		{[]string{"bench", "--base", "x", "--thresholds", badThresholds}, 2, "bad.txt:3: \"x%\" is not a percentage"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
