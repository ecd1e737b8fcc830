package benchgate

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteMarkdown(t *testing.T) {
	base := benchText("example.com/p", "BenchmarkX/name=a|b", spread(1000, 10), 0) + benchText("example.com/p", "BenchmarkY", spread(1000, 10), 0)
	head := benchText("example.com/p", "BenchmarkX/name=a|b", spread(1500, 10), 1) + benchText("example.com/p", "BenchmarkY", spread(1000, 10), 0)
	r := compareOpt(t, DefaultOptions, base, head)
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"### Benchmark gate: FAIL (2 of 6 rows)\n",
		"p < 0.01",
		"#### Failing rows\n\n| package | benchmark | unit | base | head | delta | p | n | threshold | verdict | note |\n|---|",
		`| example.com/p | X/name=a\|b | sec/op | 1.000µ ± 1% | 1.500µ ± 1% | +50.00% |`,
		"| 10+10 | 5.0% | **FAIL** | +50.0% slower (p=",
		"| allocs/op | 0.000 ± 0% | 1.000 ± 0% | +∞% | ",
		"<details><summary>All 6 rows</summary>",
		"| example.com/p | Y | sec/op |",
		"</details>\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Every table line has the header's number of cells: a | inside a name
	// is escaped.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "|") {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 12 {
				t.Errorf("%d separators in %q", n, line)
			}
		}
	}
	r = compareOpt(t, DefaultOptions, benchText("p", "BenchmarkY", spread(1000, 10), 0), benchText("p", "BenchmarkY", spread(1000, 10), 0))
	b.Reset()
	r.WriteMarkdown(&b)
	if !strings.HasPrefix(b.String(), "### Benchmark gate: PASS\n") || strings.Contains(b.String(), "Failing rows") {
		t.Errorf("passing gate:\n%s", b.String())
	}
}
