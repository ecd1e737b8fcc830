package conform

import (
	"bufio"
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const resultsFile = "../results/conform-kfake.md"

func startKfake(t *testing.T) (*Kfake, *Target) {
	t.Helper()
	k, err := StartKfake()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	tg, err := k.Dial(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return k, tg
}

var (
	verdictRow  = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([^|]+?) \\|")
	versionLine = regexp.MustCompile("^kfake version: `([^`]+)`")
)

// recorded reads the kfake version and the verdict of every case from
// results/conform-kfake.md.
func recorded(t *testing.T) (string, map[string]string) {
	t.Helper()
	return recordedIn(t, resultsFile, versionLine)
}

// recordedIn reads the version that versionLine matches and the verdict of
// every case from the "## Verdicts" table of resultsFile.
func recordedIn(t *testing.T, resultsFile string, versionLine *regexp.Regexp) (string, map[string]string) {
	t.Helper()
	f, err := os.Open(resultsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	version, rows, inVerdicts := "", map[string]string{}, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := versionLine.FindStringSubmatch(sc.Text()); m != nil {
			version = m[1]
		}
		if strings.HasPrefix(sc.Text(), "## ") {
			inVerdicts = sc.Text() == "## Verdicts"
		}
		if m := verdictRow.FindStringSubmatch(sc.Text()); m != nil && inVerdicts {
			if _, dup := rows[m[1]]; dup {
				t.Fatalf("%s: case %s listed twice", resultsFile, m[1])
			}
			rows[m[1]] = m[2]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return version, rows
}

// goModVersion is the version go.mod requires of module (a test binary's
// build information lists no dependencies).
func goModVersion(t *testing.T, module string) string {
	t.Helper()
	src, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "require" {
			f = f[1:]
		}
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	t.Fatalf("go.mod does not require %s", module)
	return ""
}

// TestKfakeVerdicts runs the suite against kfake and requires exactly the
// verdicts recorded in results/conform-kfake.md, with the kfake version
// named there: a fix or a regression on either side changes a row.
func TestKfakeVerdicts(t *testing.T) {
	version, want := recorded(t)
	if got := goModVersion(t, KfakeModule); got != version {
		t.Errorf("%s records kfake %q, go.mod requires %q: rerun and update it", resultsFile, version, got)
	}
	_, tg := startKfake(t)
	res, err := Run(context.Background(), tg, "t-", nil)
	if err != nil {
		t.Fatal(err)
	}
	matchRecorded(t, resultsFile, want, res)
}

// matchRecorded requires res to hold exactly the verdicts want.
func matchRecorded(t *testing.T, resultsFile string, want map[string]string, res []Result) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range res {
		seen[r.Case] = true
		w, ok := want[r.Case]
		switch {
		case !ok:
			t.Errorf("case %s (%s) is not in %s", r.Case, r.Summary(), resultsFile)
		case w != r.Summary():
			t.Errorf("case %s: recorded %q, now %q", r.Case, w, r.Summary())
		}
		if r.Verdict == Diverges && (r.Diff == nil || r.Diff.Response == "") {
			t.Errorf("case %s diverges without the differing response", r.Case)
		}
	}
	for c := range want {
		if !seen[c] {
			t.Errorf("%s lists case %s, which the suite does not have", resultsFile, c)
		}
	}
}

// TestCasesNameTheirRule: every case says which rule and which Kafka class.
func TestCasesNameTheirRule(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Cases() {
		if c.Rule == "" || c.Class == "" || c.run == nil {
			t.Errorf("case %q lacks its rule, class or body", c.Name)
		}
		if names[c.Name] {
			t.Errorf("case %q twice", c.Name)
		}
		names[c.Name] = true
	}
}

// TestDivergenceDetected makes kfake answer one produce wrongly and expects
// the case that reads that answer to diverge, with the request and the
// response each one line naming the API, the version, the batch's producer
// fields and the error.
func TestDivergenceDetected(t *testing.T) {
	k, tg := startKfake(t)
	var produces int
	k.Cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.Cluster.KeepControl()
		produces++
		if produces != 2 { // the retry of the cached batch
			return nil, nil, false
		}
		pr := req.(*kmsg.ProduceRequest)
		resp := pr.ResponseKind().(*kmsg.ProduceResponse)
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = pr.Topics[0].Topic
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.ErrorCode = kerr.DuplicateSequenceNumber.Code
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	c := Case{Name: "injected", Rule: "r", Class: "c", run: func(c *caseRun) {
		p := c.initProducer("InitProducerId", "")
		c.data("produce", p, false, 1)
		c.send("retry", batch{pid: p.pid, epoch: p.epoch, seq: 0, values: []string{"x"}})
	}}
	r, err := RunCase(context.Background(), tg, "d-", c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Diverges || r.Diff.Step != "retry" || !strings.Contains(r.Diff.Broker, "DUPLICATE_SEQUENCE_NUMBER") ||
		r.Diff.Kafka != "base offset 0" || r.Diff.Response != "Produce v9 response d-injected/0: DUPLICATE_SEQUENCE_NUMBER base_offset=0" ||
		!strings.HasPrefix(r.Diff.Request, "Produce v9 acks=-1 transactional_id=null d-injected/0: batches=[offsets 0..0 producer_id=") {
		t.Fatalf("got %+v %+v", r, r.Diff)
	}
}

// TestCheckDetectsWrongReadCommitted: a fetch that shows aborted records to
// read_committed is a divergence of the check step.
func TestCheckDetectsWrongReadCommitted(t *testing.T) {
	k, tg := startKfake(t)
	k.Cluster.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.Cluster.KeepControl()
		fr := req.(*kmsg.FetchRequest)
		if fr.IsolationLevel != 1 {
			return nil, nil, false
		}
		// Answer read_committed as read_uncommitted would: no aborted list.
		fr.IsolationLevel = 0
		return nil, nil, false
	})
	c := Case{Name: "abort", Rule: "r", Class: "c", run: func(c *caseRun) {
		tp := c.initProducer("InitProducerId", "t")
		c.begin("AddPartitionsToTxn", tp)
		c.data("txn", tp, true, 1)
		c.end("EndTxn abort", tp, false)
		c.check("after abort")
	}}
	r, err := RunCase(context.Background(), tg, "f-", c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Diverges || !strings.Contains(r.Diff.Step, "Fetch read_committed") {
		t.Fatalf("got %+v %+v", r, r.Diff)
	}
}

// TestUnreachable: a closed loopback port is a connection error, in time.
func TestUnreachable(t *testing.T) {
	start := time.Now()
	_, err := Dial(context.Background(), "127.0.0.1:1", time.Second)
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err %v, want ErrConnect", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestDocListsEveryCase: docs/conform.md has a row for every case.
func TestDocListsEveryCase(t *testing.T) {
	doc, err := os.ReadFile("../docs/conform.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases() {
		var needs []string
		for _, n := range c.Needs {
			needs = append(needs, n.String())
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(c.Name) + "` \\| .* \\| " + regexp.QuoteMeta(strings.Join(needs, ", ")) + " \\|$")
		if !row.Match(doc) {
			t.Errorf("docs/conform.md has no row for case %s ending in its needs %q", c.Name, strings.Join(needs, ", "))
		}
	}
}

// TestDocVerdictTable: the case × broker tables of docs/conform.md and the
// README hold the verdicts recorded for kfake and for librdkafka's mock, case
// by case.
func TestDocVerdictTable(t *testing.T) {
	_, kfake := recorded(t)
	_, mock := recordedIn(t, mockResultsFile, regexp.MustCompile("^librdkafka version: `([^`]+)`"))
	for _, d := range []struct{ file, section string }{
		{"../docs/conform.md", "Verdicts by broker"},
		{"../README.md", "Try it on a broker"},
	} {
		doc, err := os.ReadFile(d.file)
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(doc), "\n## "+d.section+"\n")
		if !ok {
			t.Fatalf("%s has no section %s", d.file, d.section)
		}
		section, _, _ = strings.Cut(section, "\n## ")
		row := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([^|]+?) \\| ([^|]+?) \\|$")
		seen := 0
		for _, line := range strings.Split(section, "\n") {
			m := row.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			seen++
			if m[2] != kfake[m[1]] || m[3] != mock[m[1]] {
				t.Errorf("%s: case %s: table says %q / %q, results say %q / %q", d.file, m[1], m[2], m[3], kfake[m[1]], mock[m[1]])
			}
		}
		if seen != len(Cases()) {
			t.Errorf("%s: the table has %d rows, the suite %d cases", d.file, seen, len(Cases()))
		}
	}
}

// TestBrokerGoneMidRun: a broker that stops during the run is a connection
// error, returned in time, not a panic or a divergence.
func TestBrokerGoneMidRun(t *testing.T) {
	k, err := StartKfake()
	if err != nil {
		t.Fatal(err)
	}
	tg, err := k.Dial(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	k.Close()
	start := time.Now()
	res, err := Run(context.Background(), tg, "g-", nil)
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err %v, results %+v; want ErrConnect", err, res)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}
