package conform

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

const mockResultsFile = "../results/conform-librdkafka-mock.md"

// startLibrdkafkaMock builds and starts librdkafka's mock cluster. It skips
// the test when the C compiler or librdkafka-dev is absent, unless CI=true:
// CI installs both (.ci/run), so there their absence fails.
func startLibrdkafkaMock(t *testing.T) *LibrdkafkaMock {
	t.Helper()
	m, err := StartLibrdkafkaMock(t.TempDir(), 30*time.Second)
	if errors.Is(err, ErrNoLibrdkafka) && os.Getenv("CI") != "true" {
		t.Skipf("%v (apt-get install librdkafka-dev gcc; CI=true makes this a failure)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestLibrdkafkaMockVerdicts runs the suite against librdkafka's mock
// cluster and requires exactly the verdicts recorded in
// results/conform-librdkafka-mock.md, for the librdkafka version named
// there.
func TestLibrdkafkaMockVerdicts(t *testing.T) {
	version, want := recordedIn(t, mockResultsFile, regexp.MustCompile("^librdkafka version: `([^`]+)`"))
	m := startLibrdkafkaMock(t)
	if m.Version != version {
		t.Errorf("%s records librdkafka %q, the library here is %q: rerun and update it", mockResultsFile, version, m.Version)
	}
	tg, err := m.Dial(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	// The mock refuses ApiVersions v3 and answers v2.
	if tg.APIVersion != 2 || len(tg.Fallbacks) != 1 || !strings.Contains(tg.Fallbacks[0], "UNSUPPORTED_VERSION") {
		t.Errorf("ApiVersions answered at v%d after %q, want v2 after v3's UNSUPPORTED_VERSION", tg.APIVersion, tg.Fallbacks)
	}
	res, err := Run(context.Background(), tg, "m-", nil)
	if err != nil {
		t.Fatal(err)
	}
	matchRecorded(t, mockResultsFile, want, res)
	// No CreateTopics, no DeleteTopics: every topic was made by Metadata
	// and stays.
	if len(tg.Left) != len(res) {
		t.Errorf("%d topics left, want %d (the mock has no DeleteTopics)", len(tg.Left), len(res))
	}
}
