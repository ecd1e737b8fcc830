package scenario

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCatalog runs every file of the public catalog under every strategy and
// requires each expect line to hold and the output to be deterministic.
func TestCatalog(t *testing.T) { runFiles(t, "../scenarios/*.scn") }

// TestOracleChecks runs the files that show the oracle finds each code it
// can (testdata/oracle).
func TestOracleChecks(t *testing.T) { runFiles(t, "testdata/oracle/*.scn") }

func runFiles(t *testing.T, pattern string) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(filepath.Base(file), src)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Expects()) == 0 {
				t.Fatal("catalog file without expect lines")
			}
			results, err := Run(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				for _, e := range r.Expectations {
					if !e.Held {
						t.Errorf("line %d: under %s want %v, got %v; violations %+v; client errors %+v",
							e.Line, r.Strategy, e.Want, e.Got, r.Violations, r.ClientErrors)
					}
				}
			}
			var a, b bytes.Buffer
			if err := WriteJSON(&a, results); err != nil {
				t.Fatal(err)
			}
			again, err := Run(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			WriteJSON(&b, again)
			if a.String() != b.String() {
				t.Errorf("two runs differ:\n%s\n%s", a.String(), b.String())
			}
		})
	}
}
