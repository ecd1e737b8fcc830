package invariants

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestSwitches checks the constants against the build settings the test
// binary records: -race and the tags.
func TestSwitches(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build info in the test binary")
	}
	race, tagged := false, false
	for _, s := range bi.Settings {
		switch s.Key {
		case "-race":
			race = s.Value == "true"
		case "-tags":
			for _, tag := range strings.Split(s.Value, ",") {
				tagged = tagged || tag == "invariants"
			}
		}
	}
	if RaceEnabled != race {
		t.Errorf("RaceEnabled = %v, build setting -race = %v", RaceEnabled, race)
	}
	if Enabled != (race || tagged) {
		t.Errorf("Enabled = %v, want -race (%v) || -tags invariants (%v)", Enabled, race, tagged)
	}
}
