package main

import (
	"strings"
	"testing"
)

// TestCPUModelFrom: the report's CPU line names the model with its vendor,
// family and model in hex, from the first processor only, and the model name
// alone where the others are missing or malformed.
func TestCPUModelFrom(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n\n" +
			"processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: other\n",
			"AMD EPYC (AuthenticAMD family 0x1a model 0x2)"},
		{"vendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Processor\n",
			"Intel(R) Xeon(R) Processor (GenuineIntel family 0x6 model 0x8f)"},
		{"model name\t: Some CPU\nmodel\t\t: x\n", "Some CPU"},
		{"vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n", ""},
		{"", ""},
	} {
		if got := cpuModelFrom(strings.NewReader(c.in)); got != c.want {
			t.Errorf("cpuModelFrom(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
