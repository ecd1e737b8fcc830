package kafkatests

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeTotal holds the README's sentence "N of Kafka's M test methods
// ... apply" to the sum of results/kafka-tests.md's rows, which the suite
// tests of codec, appendpath and psm hold to their method lists.
func TestReadmeTotal(t *testing.T) {
	rows, err := os.ReadFile("../../results/kafka-tests.md")
	if err != nil {
		t.Fatal(err)
	}
	figure := regexp.MustCompile(`\| (\d+) of (\d+) \|`)
	apply, total, suites := 0, 0, 0
	for line := range strings.Lines(string(rows)) {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		m := figure.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("results/kafka-tests.md: row without an \"N of M\" cell: %s", strings.TrimSpace(line))
		}
		a, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		apply, total, suites = apply+a, total+n, suites+1
	}
	if suites != 6 {
		t.Errorf("results/kafka-tests.md has %d suite rows, want the 6 ported classes", suites)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d of Kafka's %d test methods", apply, total)
	if !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q (the sum of results/kafka-tests.md)", want)
	}
}
