package report

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/pid"
)

// sortKeys orders configurations by strategy (catalog order), CRC, producers
// and batch size.
func sortKeys(ks []Key) []Key {
	out := append([]Key(nil), ks...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Strategy != b.Strategy {
			return strategyRank(a.Strategy) < strategyRank(b.Strategy)
		}
		if a.CRC != b.CRC {
			return a.CRC < b.CRC
		}
		if a.Producers != b.Producers {
			return sizeLess(a.Producers, b.Producers)
		}
		return sizeLess(a.Batch, b.Batch)
	})
	return out
}

// strategyRank orders benchmark strategies as docs/strategies.md's table
// (pid.Strategies), after the as-is baseline; unknown names go last.
func strategyRank(s string) int {
	if s == "asis" {
		return 0
	}
	st, err := pid.ParseStrategy(s)
	if err != nil {
		return len(pid.Strategies()) + 1
	}
	return 1 + int(st)
}

// parseSize reads a size or count such as "100B", "16KiB", "1MiB", "1000",
// "1M" or "1e6". ok is false for anything else ("small").
func parseSize(s string) (float64, bool) {
	mult := 1.0
	num := s
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"B", 1}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v * mult, true
}

// sizeLess orders sizes numerically, unparsable ones after, by text.
func sizeLess(a, b string) bool {
	x, okA := parseSize(a)
	y, okB := parseSize(b)
	switch {
	case okA && okB && x != y:
		return x < y
	case okA != okB:
		return okA
	}
	return a < b
}

func sortBatches(s []string) []string {
	sort.SliceStable(s, func(i, j int) bool { return sizeLess(s[i], s[j]) })
	return s
}
