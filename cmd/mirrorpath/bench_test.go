package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestBenchArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "-h"}, 0, "-threshold PCT"},
		{[]string{"bench"}, 2, "--base is required"},
		{[]string{"bench", "--base", "x", "--count", "0"}, 2, "--count must be at least 1"},
		{[]string{"bench", "--base", "x", "--alpha", "2"}, 2, "--alpha in (0,1)"},
		{[]string{"bench", "--nope"}, 2, "flag provided but not defined"},
		{[]string{"bench", "--base", "x", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"bench", "--base", "no-such-ref-xyz", "--repo", t.TempDir()}, 1, "not in a git repository"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
