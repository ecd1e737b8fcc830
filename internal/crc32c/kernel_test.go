package crc32c

import "testing"

// TestCRCKernel: the name follows the dispatch variables, one of the names
// the doc comment lists.
func TestCRCKernel(t *testing.T) {
	want := "hash/crc32"
	switch {
	case foldKernel == fold512mix:
		want = "fold512mix+sse42"
	case foldKernel == fold512:
		want = "fold512+sse42"
	case foldKernel == fold256:
		want = "fold256+sse42"
	case crcAsm:
		want = "sse42"
	}
	if got := Kernel(); got != want {
		t.Fatalf("Kernel() = %q, want %q (foldKernel %v, crcAsm %v)", got, want, foldKernel, crcAsm)
	}
}
