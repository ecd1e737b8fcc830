package scenario

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateCatalog = flag.Bool("update-catalog", false, "rewrite testdata/catalog/*.golden from the current output")

// TestCatalogGolden pins the whole verdict on every catalog file, beyond the
// codes its expect lines name: the matrix `mirrorpath scenario run` prints,
// then every violation (strategy, code, step, cluster and partition) and
// every client error, in order. The oracle's prose (Violation.Detail) is
// left out so that rewording it does not touch the goldens. Regenerate with
//
//	go test ./scenario -run TestCatalogGolden -update-catalog
//
// and review the diff.
func TestCatalogGolden(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*.scn")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog files: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(name, src)
			if err != nil {
				t.Fatal(err)
			}
			results, err := Run(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenOf(t, results)
			path := filepath.Join("testdata", "catalog", strings.TrimSuffix(name, ".scn")+".golden")
			if *updateCatalog {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (new catalog file? run with -update-catalog and review)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the output (run with -update-catalog and review the diff):\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}

func goldenOf(t *testing.T, results []Result) []byte {
	var b bytes.Buffer
	if err := WriteText(&b, results); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		for _, v := range r.Violations {
			fmt.Fprintf(&b, "%s: %s at step %d on %s %s\n", r.Strategy, v.Code, v.Step, v.Cluster, v.Partition)
		}
		for _, e := range r.ClientErrors {
			fmt.Fprintf(&b, "%s: step %d client %s: %s\n", r.Strategy, e.Step, e.Producer, e.Error)
		}
	}
	return b.Bytes()
}
