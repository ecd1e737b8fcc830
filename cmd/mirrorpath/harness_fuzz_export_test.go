package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFuzzExportCoverageArgs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fuzz", "export", "-h"}, 0, "-encoding E"},
		{[]string{"fuzz", "export"}, 2, "--out is required"},
		{[]string{"fuzz", "export", "--out", "x", "--encoding", "raw"}, 2, `unknown libFuzzer encoding "raw"`},
		{[]string{"fuzz", "export", "--out", "x", "--target", "("}, 2, "--target: error parsing regexp"},
		{[]string{"fuzz", "export", "--out", "x", "--dir", t.TempDir()}, 2, "holds no go.mod"},
		{[]string{"fuzz", "export", "--out", "x", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"fuzz", "coverage", "-h"}, 0, "-cache"},
		{[]string{"fuzz", "coverage", "--dir", t.TempDir()}, 2, "holds no go.mod"},
		{[]string{"fuzz", "-h"}, 0, "mirrorpath fuzz export --out DIR"},
		// A file where the output directory goes fails before any target
		// is discovered (--dir names no module: discovery would fail too).
		{[]string{"fuzz", "export", "--out", file, "--dir", t.TempDir()}, 2, file + ": not a directory"},
		{[]string{"fuzz", "coverage", "--out", file, "--dir", t.TempDir()}, 2, file + ": not a directory"},
		{[]string{"fuzz", "coverage", "--out", filepath.Join(file, "sub"), "--dir", t.TempDir()}, 2, "not a directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := mainArgs(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
