package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
	"github.com/mirrorpath/mirrorpath/internal/report"
)

// TestMergeRoundsPairs: two packages print their rounds one after the
// other; merged, round i of both comes before round i+1 of either, so the
// report pairs their configurations by round, and a round slowed as a whole
// (both sides of a ratio twice as slow) cancels in the ratio.
func TestMergeRoundsPairs(t *testing.T) {
	out := func(pkg string, names ...string) pkgOutput {
		var b bytes.Buffer
		b.WriteString("goos: linux\ngoarch: amd64\npkg: " + pkg + "\n")
		for r := range 6 {
			slow := time.Duration(1)
			if r%3 == 2 {
				slow = 2 // the machine ran this round at half speed
			}
			var figs []cputime.Figure
			for i, name := range names {
				per := time.Duration(100*(i+1)+r) * slow // name i costs (i+1)x the first's
				figs = append(figs, cputime.Figure{Name: name, N: 1000, CPU: 1000 * per, Wall: 1000 * per})
			}
			cputime.WriteRound(&b, 2, figs, false)
		}
		b.WriteString("PASS\n")
		return pkgOutput{pkg, b.Bytes()}
	}
	merged, none := mergeRounds([]pkgOutput{
		out("example.com/a", "Append/strategy=asis/crc=none/batch=1KiB/producers=1000", "Append/strategy=bitfield/crc=patch/batch=1KiB/producers=1000"),
		{"example.com/empty", []byte("testing: warning: no tests to run\nPASS\n")},
		out("example.com/b", "Update/impl=store/producers=1000", "Update/impl=model/producers=1000"),
	}, "a CPU")
	if !slices.Equal(none, []string{"example.com/empty"}) {
		t.Errorf("packages without results %q, want example.com/empty", none)
	}
	lines := strings.Split(strings.TrimSpace(string(merged)), "\n")
	if !strings.HasPrefix(lines[0], "goos: ") || lines[2] != "cpu: a CPU" || lines[3] != "pkg: example.com/a" || lines[6] != "pkg: example.com/b" || len(lines) != 3+6*6 {
		t.Fatalf("merged output starts %q (%d lines)", lines[:min(len(lines), 10)], len(lines))
	}
	fig, err := report.ParseBench(bytes.NewReader(merged), "bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	keys := fig.Configs()
	if len(keys) != 4 {
		t.Fatalf("%d configurations, want 4", len(keys))
	}
	for _, pair := range [][2]int{{1, 0}, {3, 2}} {
		r := fig.Ratio(keys[pair[0]], keys[pair[1]], "sec/op", 0.95)
		if !r.Paired || r.HalfWidth() > 0.02 {
			t.Errorf("%s / %s = %+v: want paired by round, the half-speed rounds cancelled (within ±2%%)", keys[pair[0]].Full, keys[pair[1]].Full, r)
		}
	}
}
