package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestHelpListsToolsApart: `mirrorpath -h` lists the product tools and the
// harness tools under their own headings, every registered command once.
func TestHelpListsToolsApart(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := mainArgs([]string{"-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := stderr.String()
	_, rest, ok := strings.Cut(help, "\nProduct tools")
	product, harness, ok2 := strings.Cut(rest, "\nHarness tools")
	if !ok || !ok2 {
		t.Fatalf("no Product tools section before a Harness tools section:\n%s", help)
	}
	listed := func(section string) []string {
		var names []string
		for _, l := range strings.Split(section, "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(l, "  ") {
				names = append(names, f[0])
			}
		}
		return names
	}
	if got, want := listed(product), []string{"conform", "dump", "replay", "scenario"}; !slices.Equal(got, want) {
		t.Errorf("product tools %v, want %v", got, want)
	}
	if got, want := listed(harness), []string{"bench", "fuzz", "hostspeed", "profile", "ratio", "report", "run"}; !slices.Equal(got, want) {
		t.Errorf("harness tools %v, want %v", got, want)
	}
	if n := len(listed(product)) + len(listed(harness)); n != len(commands) {
		t.Errorf("help lists %d commands, %d registered", n, len(commands))
	}
}
