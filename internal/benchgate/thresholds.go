package benchgate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ErrThresholds marks a malformed thresholds file; the message names the
// file and line.
var ErrThresholds = errors.New("benchgate: bad thresholds file")

// Thresholds are per-benchmark slowdown limits, read by ParseThresholds
// from a small text file, one rule per line:
//
//	# comment
//	default 5%
//	^BenchmarkAppend/strategy=asis 10%
//	/impl=model 20
//
// A rule is a Go regexp and a percentage (the % sign is optional). The
// regexp is matched, unanchored, against the benchmark's full name as go
// test prints it, with the Benchmark prefix and without the -GOMAXPROCS
// suffix ("BenchmarkAppend/batch=1KiB"); the first matching rule wins.
// "default PCT" sets the limit of every benchmark no rule matches; without
// it the caller's Options.Threshold applies. Limits apply to time units;
// allocs/op fails on any increase whatever the file says.
type Thresholds struct {
	Rules      []ThresholdRule
	Default    float64 // fraction; valid when HasDefault
	HasDefault bool
}

// ThresholdRule is one line of a thresholds file.
type ThresholdRule struct {
	Pattern *regexp.Regexp
	Limit   float64 // fraction: 0.05 = 5%
	Line    int
}

// ParseThresholds reads a thresholds file; name labels errors ("FILE:LINE: ...").
func ParseThresholds(r io.Reader, name string) (*Thresholds, error) {
	t := &Thresholds{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: %s:%d: want \"PATTERN PCT\" or \"default PCT\", got %d fields in %q", ErrThresholds, name, n, len(f), line)
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil || pct < 0 || pct != pct {
			return nil, fmt.Errorf("%w: %s:%d: %q is not a percentage >= 0", ErrThresholds, name, n, f[1])
		}
		if f[0] == "default" {
			if t.HasDefault {
				return nil, fmt.Errorf("%w: %s:%d: a second default", ErrThresholds, name, n)
			}
			t.Default, t.HasDefault = pct/100, true
			continue
		}
		re, err := regexp.Compile(f[0])
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrThresholds, name, n, err)
		}
		t.Rules = append(t.Rules, ThresholdRule{Pattern: re, Limit: pct / 100, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrThresholds, name, err)
	}
	return t, nil
}

// limit returns the slowdown limit (a fraction) of the benchmark named as
// in a Row (without the Benchmark prefix), falling back to def.
func (t *Thresholds) limit(name string, def float64) float64 {
	if t == nil {
		return def
	}
	full := "Benchmark" + name
	for _, r := range t.Rules {
		if r.Pattern.MatchString(full) {
			return r.Limit
		}
	}
	if t.HasDefault {
		return t.Default
	}
	return def
}

// limitFor is the slowdown limit of one row under opt.
func (opt Options) limitFor(name string) float64 {
	return opt.PerBenchmark.limit(name, opt.Threshold)
}
