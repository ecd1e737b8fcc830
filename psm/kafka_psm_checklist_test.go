package psm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/kafkatests"
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

// kafkaPSMAppendPath declares kafkaPSMAppendPathTests, the methods whose
// rule is the Partition's and so are ported through the append path.
const kafkaPSMAppendPath = "../appendpath/kafka_psm_test.go"

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
// never both; every ported name is Kafka's; and the count "N of M apply" and
// the commit that docs/kafka-tests.md and results/kafka-tests.md state are
// these.
func TestKafkaPSMChecklist(t *testing.T) {
	var inPSM []string
	for _, kt := range kafkaPSMTests {
		inPSM = append(inPSM, kt.name)
	}
	// A method may be ported through the append path only, where its rule
	// is the Partition's (testSkipSnapshotIfOffsetUnchanged).
	viaAppendPath := appendPathKafkaPSMNames(t)
	apply, total := kafkatests.Check(t, kafkatests.Suite{
		Class: "ProducerStateManagerTest",
		List:  "testdata/kafka-producerstatemanagertest.txt",
		Ported: map[string][]string{
			"psm kafkaPSMTests":                  inPSM,
			"appendpath kafkaPSMAppendPathTests": viaAppendPath,
		},
		NotApplicable: kafkaPSMNotApplicable,
		Sections:      []string{"../docs/kafka-tests.md"},
		Rows:          []string{"../results/kafka-tests.md"},
	})
	t.Logf("%d of %d methods of Kafka's ProducerStateManagerTest apply; %d run through the append path",
		apply, total, len(viaAppendPath))
}
