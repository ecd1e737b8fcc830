//go:build e2e

package corpus_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRegenerate runs the generator (both modes) into a scratch directory and checks that it reproduces the
// committed corpus: the manifest byte for byte, and every segment except the fields that cannot repeat
// (an idempotent producer's random id, a marker's wall-clock timestamps, and the CRCs over them). It starts
// the in-process broker on 127.0.0.1 and builds the generator: an end-to-end test (-tags e2e).
func TestRegenerate(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"run", "./gen", "-dir", dir}, {"run", "./gen", "-dir", dir, "-malformed"}} {
		out, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	want, err := os.ReadFile("MANIFEST.tsv")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("regenerated MANIFEST.tsv differs from the committed one")
	}
	good, _ := filepath.Glob(filepath.Join("*", segmentName))
	bad, _ := filepath.Glob(filepath.Join("malformed", "*.log"))
	for _, p := range append(good, bad...) {
		committed, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Errorf("%s not regenerated: %v", p, err)
			continue
		}
		// Only idempotent (non-transactional) producers get a random id; transactional ids hash to a fixed one.
		random := strings.HasSuffix(filepath.Dir(p), "-idempotent") || strings.HasSuffix(filepath.Dir(p), "-interleaved")
		if err := sameBatches(committed, fresh, random); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
