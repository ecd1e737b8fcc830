package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportErrorOnePrefix: an error of report is one line with one
// "report:" prefix.
func TestReportErrorOnePrefix(t *testing.T) {
	var out, errb bytes.Buffer
	code := mainArgs([]string{"report", "--from", filepath.Join(t.TempDir(), "none")}, &out, &errb)
	if code != 1 || !strings.HasPrefix(errb.String(), "report: ") || strings.Contains(errb.String(), "report: report:") ||
		strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 1 and one line with one report: prefix", code, errb.String())
	}
}
