package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/hostspeed"
)

func TestHostspeedUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "--every"},
		{[]string{"--every", "2s", "--for", "1s"}, 2, "--every 2s is longer than --for 1s"},
		{[]string{"--for", "10ms"}, 2, "below the least 100ms"},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
	} {
		var out, errOut bytes.Buffer
		if code := mainArgs(append([]string{"hostspeed"}, tc.args...), &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("hostspeed %v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.want)
		}
	}
}

// The text output has a line per interval and the summary; the exit status
// is the verdict's (0 one speed, 1 not), whichever this machine gives.
func TestHostspeedText(t *testing.T) {
	var out, errOut bytes.Buffer
	code := mainArgs([]string{"hostspeed", "--for", "100ms", "--every", "20ms"}, &out, &errOut)
	text := out.String()
	oneSpeed := strings.Contains(text, "\none speed: ")
	if !oneSpeed && !strings.Contains(text, "\nNOT ONE SPEED: ") {
		t.Fatalf("no verdict (exit %d):\n%s%s", code, text, errOut.String())
	}
	if want := map[bool]int{true: 0, false: 1}[oneSpeed]; code != want {
		t.Errorf("exit %d with verdict one speed = %v", code, oneSpeed)
	}
	for _, want := range []string{"CPU ", "locked/limit", "\nlimit ", "\nlocked ", "\nchain "} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestHostspeedJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := mainArgs([]string{"hostspeed", "--for", "100ms", "--every", "20ms", "--json"}, &out, &errOut)
	var got struct {
		OneSpeed  bool    `json:"one_speed"`
		Tolerance float64 `json:"tolerance"`
		Loops     []struct {
			Loop      string  `json:"loop"`
			Fastest   float64 `json:"fastest_ns"`
			Intervals int     `json:"intervals"`
		} `json:"loops"`
		Intervals []struct {
			Limit float64 `json:"limit_ns"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out.String())
	}
	if want := map[bool]int{true: 0, false: 1}[got.OneSpeed]; code != want {
		t.Errorf("exit %d with one_speed %v", code, got.OneSpeed)
	}
	if got.Tolerance != hostspeed.Tolerance || len(got.Loops) != 3 || len(got.Intervals) == 0 {
		t.Fatalf("tolerance %v, %d loops, %d intervals", got.Tolerance, len(got.Loops), len(got.Intervals))
	}
	for i, l := range got.Loops {
		if l.Loop != hostspeed.Kernels[i] || !(l.Fastest > 0) || l.Intervals != len(got.Intervals) {
			t.Errorf("loop %d: %+v", i, l)
		}
	}
}

// The summary names both states and locked / limit in each when the limit
// ran at two speeds.
func TestHostspeedSummaryTwoSpeeds(t *testing.T) {
	s, err := hostspeed.Summarize([]hostspeed.Interval{
		{NsPerOp: [3]float64{7.5, 18, 0.6}},
		{NsPerOp: [3]float64{12.5, 20, 0.6}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	writeHostspeedSummary(&out, s)
	for _, want := range []string{
		"NOT ONE SPEED: the limit's intervals ran 7.50 to 12.50 ns (1.67×), the locked loop's 1.11×, the chain's 1.00×.",
		"The limit ran 7.50 ns in 1 intervals and 12.50 ns in 1; locked / limit was 2.40 in the first and 1.60 in the second",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}
