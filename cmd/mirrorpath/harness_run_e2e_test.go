//go:build e2e

package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeModule writes a throwaway module with benchmarks named as in
// docs/measuring.md, so that `run` can be tested end to end without the real
// packages. The costs are loops whose length the name parts set.
func fakeModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/fake\n\ngo 1.22\n",
		"appendpath/a_test.go": `package appendpath

import "testing"

var sink uint64

func spin(n int) {
	h := uint64(1)
	for i := 0; i < n; i++ {
		h = h*31 + uint64(i)
	}
	sink = h
}

func BenchmarkLimit(b *testing.B) {
	for _, n := range []struct{ name string; size int }{{"1KiB", 1024}, {"16KiB", 16384}} {
		b.Run("batch="+n.name, func(b *testing.B) {
			b.SetBytes(int64(n.size))
			for b.Loop() {
				spin(n.size / 16)
			}
		})
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, st := range []struct{ name string; extra int }{{"asis", 0}, {"negate", 20}, {"bitfield", 40}} {
		for _, n := range []struct{ name string; size int }{{"1KiB", 1024}, {"16KiB", 16384}} {
			for _, p := range []string{"1", "1000"} {
				b.Run("strategy="+st.name+"/crc=patch/batch="+n.name+"/producers="+p, func(b *testing.B) {
					b.SetBytes(int64(n.size))
					b.ReportAllocs()
					for b.Loop() {
						spin(n.size/8 + st.extra)
					}
				})
			}
		}
	}
}
`,
		"psm/p_test.go": `package psm

import "testing"

var sink uint64

func BenchmarkUpdate(b *testing.B) {
	for _, impl := range []string{"store", "model"} {
		for _, p := range []string{"1", "1000"} {
			b.Run("impl="+impl+"/producers="+p, func(b *testing.B) {
				n := 50
				if impl == "model" {
					n = 200
				}
				for b.Loop() {
					for i := 0; i < n; i++ {
						sink += uint64(i)
					}
				}
			})
		}
	}
}
`,
		"codec/broken_test.go": "package codec\n\nfunc BenchmarkX(b *testing.B) {}\n", // does not compile
		"scenarios/01.scn":     "# fake\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func wellFormed(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		if _, err := d.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

func TestRunEndToEnd(t *testing.T) {
	dir := fakeModule(t)
	var gotFiles []string
	catalog := func(files []string, w io.Writer) error {
		gotFiles = files
		io.WriteString(w, `{"file":"01.scn","strategy":"verbatim","violations":[{"code":"M4","step":5}],"expectations":[{"held":true}]}`+"\n")
		io.WriteString(w, `{"file":"01.scn","strategy":"barrier","violations":[],"expectations":[{"held":true}]}`+"\n")
		return nil
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := runWith(catalog, []string{"--dir", dir, "--out", out, "--benchtime", "200x", "--count", "2",
		"--pkg", "./appendpath ./psm ./pid ./codec"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if len(gotFiles) != 1 || !strings.HasSuffix(gotFiles[0], "01.scn") {
		t.Errorf("scenario catalog run with %q", gotFiles)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 01.scn | M4 | ok |",
		"### Append time per batch: strategy / asis",
		"| negate · patch · producers=1000 |",
		"### As-is append / physical limit",
		"### Producer-state update: store / model",
		"./pid: no such directory in the module",
		"./codec: does not build",
		"![Append throughput by batch size (producers=1000)](append-throughput.svg)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range []string{"append-throughput.svg", "strategy-over-asis.svg", "psm-update.svg"} {
		wellFormed(t, filepath.Join(out, f))
	}
	raw, _ := os.ReadFile(filepath.Join(out, "bench.txt"))
	// Quick mode: the 6 producers=1000 configurations (not producers=1) × 2 rounds.
	if n := strings.Count(string(raw), "BenchmarkAppend/"); n != 12 || strings.Contains(string(raw), "batch=1KiB/producers=1-") {
		t.Errorf("bench.txt holds %d Append lines", n)
	}
	if n := strings.Count(string(raw), "BenchmarkLimit/"); n != 4 {
		t.Errorf("bench.txt holds %d Limit lines", n)
	}
	if !strings.Contains(stdout.String(), "Scenario verdicts") || !strings.Contains(stdout.String(), "wrote ") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	// 10 results a round: Append and Update at producers=1000 (6 and 2), Limit (2).
	if !strings.Contains(stderr.String(), "benchmarks, round 2/2: 20 results") {
		t.Errorf("no progress on stderr:\n%s", stderr.String())
	}
	if t.Failed() {
		t.Logf("report.md:\n%s\nstderr:\n%s", md, stderr.String())
	}
}
