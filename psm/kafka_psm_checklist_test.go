package psm

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// kafkaPSMNotApplicable lists the methods of Kafka's ProducerStateManagerTest
// that have no counterpart here, with the reason.
var kafkaPSMNotApplicable = map[string]string{
	"testFetchSnapshotEmptySnapShot": "fetchSnapshot hands a segment's snapshot file to tiered storage " +
		"(RemoteLogManager); there is no remote storage here",
	"testRemoveAndMarkSnapshotForDeletion": "renames a snapshot file with the .deleted suffix for the " +
		"asynchronous deletion of segments; storage.SnapshotDir deletes at once and writes no .deleted files",
	"testRemoveAndMarkSnapshotForDeletionAlreadyDeleted": "the same .deleted renaming, for a file " +
		"already gone; storage.SnapshotDir deletes at once and writes no .deleted files",
}

const (
	kafkaPSMList        = "testdata/kafka-producerstatemanagertest.txt"
	kafkaPSMAppendPath  = "../appendpath/kafka_psm_test.go"
	kafkaPSMDocs        = "../docs/kafka-tests.md"
	kafkaPSMResults     = "../results/kafka-tests.md"
	kafkaPSMSuiteHeader = "## ProducerStateManagerTest"
)

// readKafkaPSMList returns the Kafka method names, in file order.
func readKafkaPSMList(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(kafkaPSMList)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// appendPathKafkaPSMNames reads the names of appendpath's
// kafkaPSMAppendPathTests table: the first string of each element.
func appendPathKafkaPSMNames(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), kafkaPSMAppendPath, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "kafkaPSMAppendPathTests" || len(vs.Values) != 1 {
			return true
		}
		found = true
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			lit, ok := el.(*ast.CompositeLit).Elts[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Fatalf("%s: an entry of kafkaPSMAppendPathTests does not start with its name", kafkaPSMAppendPath)
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, s)
		}
		return false
	})
	if !found {
		t.Fatalf("%s: no kafkaPSMAppendPathTests table", kafkaPSMAppendPath)
	}
	return names
}

// TestKafkaPSMChecklist holds the port to Kafka's list: every method is
// ported (TestKafkaPSM, TestKafkaPSMAppendPath, or both) or not applicable,
// never both; every ported name is Kafka's; and the count "N of M apply" that
// docs/kafka-tests.md and results/kafka-tests.md state is this one.
func TestKafkaPSMChecklist(t *testing.T) {
	kafka := readKafkaPSMList(t)
	if len(kafka) == 0 {
		t.Fatal("empty list of Kafka methods")
	}
	ported := map[string]bool{} // in either table
	for _, kt := range kafkaPSMTests {
		if ported[kt.name] {
			t.Errorf("%s ported twice in psm", kt.name)
		}
		ported[kt.name] = true
	}
	// A method may be ported through the append path only, where its rule
	// is the Partition's (testSkipSnapshotIfOffsetUnchanged).
	viaAppendPath := appendPathKafkaPSMNames(t)
	seen := map[string]bool{}
	for _, name := range viaAppendPath {
		if seen[name] {
			t.Errorf("%s ported twice in appendpath", name)
		}
		seen[name] = true
		ported[name] = true
	}
	for name := range ported {
		if !slices.Contains(kafka, name) {
			t.Errorf("ported %s is not a method of Kafka's ProducerStateManagerTest", name)
		}
	}
	for name := range kafkaPSMNotApplicable {
		if !slices.Contains(kafka, name) {
			t.Errorf("not applicable %s is not a method of Kafka's ProducerStateManagerTest", name)
		}
	}
	n := 0
	for _, name := range kafka {
		_, na := kafkaPSMNotApplicable[name]
		switch {
		case ported[name] && na:
			t.Errorf("%s is both ported and not applicable", name)
		case !ported[name] && !na:
			t.Errorf("%s is neither ported nor listed as not applicable", name)
		case ported[name]:
			n++
		}
	}
	count := fmt.Sprintf("%d of %d", n, len(kafka))
	t.Logf("%s methods of Kafka's ProducerStateManagerTest apply; %d run through the append path", count, len(viaAppendPath))
	if doc := kafkaPSMDocSection(t); !strings.Contains(doc, count+" ") {
		t.Errorf("%s, section %q, does not say %q", kafkaPSMDocs, kafkaPSMSuiteHeader, count)
	}
	if row := kafkaPSMResultsRow(t); !strings.Contains(row, count+" ") {
		t.Errorf("%s: the ProducerStateManagerTest row %q does not say %q", kafkaPSMResults, row, count)
	}
	for name := range kafkaPSMNotApplicable {
		if doc := kafkaPSMDocSection(t); !strings.Contains(doc, "`"+name+"`") {
			t.Errorf("%s does not list not-applicable %s", kafkaPSMDocs, name)
		}
	}
}

// kafkaPSMDocSection is the ProducerStateManagerTest section of
// docs/kafka-tests.md, up to the next section of the same level.
func kafkaPSMDocSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(kafkaPSMDocs)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n"+kafkaPSMSuiteHeader+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", kafkaPSMDocs, kafkaPSMSuiteHeader)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	return sec
}

// kafkaPSMResultsRow is the table row of results/kafka-tests.md whose
// suite is ProducerStateManagerTest.
func kafkaPSMResultsRow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(kafkaPSMResults)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "| `ProducerStateManagerTest` ") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("%s has no ProducerStateManagerTest row", kafkaPSMResults)
	return ""
}
