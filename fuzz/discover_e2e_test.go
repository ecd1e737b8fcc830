//go:build e2e

package fuzz

import (
	"context"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/fuzzcampaign"
)

// TestDiscovered: the discovery `mirrorpath fuzz`, .ci/run's fuzz smoke and
// the ClusterFuzzLite build share (go test -list '^Fuzz', over ./... there) finds
// this package's targets, under the archive names build.sh gives them.
func TestDiscovered(t *testing.T) {
	targets, broken, err := fuzzcampaign.Discover(context.Background(), "..", []string{"./fuzz"})
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 0 {
		t.Fatalf("packages that do not build: %v", broken)
	}
	var names []string
	for _, tg := range targets {
		if tg.Rel == "./fuzz" {
			names = append(names, tg.ArchiveName())
		}
	}
	for _, want := range []string{"fuzz_FuzzMirrorPipeline", "fuzz_FuzzMirrorOverWire"} {
		if !slices.Contains(names, want) {
			t.Errorf("discovery lists %v in ./fuzz, not %s", names, want)
		}
	}
}
