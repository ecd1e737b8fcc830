package benchgate

import (
	"os"
	"testing"
)

// TestRepositoryThresholds: .ci/bench-thresholds parses, and its rules for
// the gated BenchmarkAppend rows apply to those rows, as benchfmt names them
// (without the Benchmark prefix), and to no other row of BenchmarkAppend.
func TestRepositoryThresholds(t *testing.T) {
	f, err := os.Open("../../.ci/bench-thresholds")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	th, err := ParseThresholds(f, ".ci/bench-thresholds")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want float64
	}{
		{"Append/strategy=asis/crc=none/batch=100B/producers=1000", 0.40},
		{"Append/strategy=bitfield/crc=patch/batch=100B/producers=1000", 0.65},
		{"Append/strategy=asis/crc=none/batch=1MiB/producers=1000", 0.30},
		{"Append/strategy=bitfield/crc=patch/batch=1MiB/producers=1000", 0.25},
		{"Append/strategy=bitfield/crc=patch/batch=1MiB/producers=1000000", 0.05},
		{"Append/strategy=bitfield/crc=full/batch=1MiB/producers=1000", 0.05},
		{"Append/strategy=asis/crc=none/batch=100B/producers=1", 0.05},
		{"ParseVerify/batch=16KiB", 0.05},
		{"UpdateOne/impl=model", 0.20},
	} {
		if got := th.limit(c.name, 0.99); got != c.want {
			t.Errorf("%s: limit %v, want %v", c.name, got, c.want)
		}
	}
}
