package codec_test

import (
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/kafkatests"
)

// The methods of Kafka's record test classes that are not ported, each with
// the reason. Every other method of the lists in testdata/ has a Go test
// TestKafka<class>_<method>; TestKafkaSuites holds the two together.
var (
	defaultRecordBatchNotApplicable = map[string]string{
		"testSizeInBytes": "DefaultRecordBatch.sizeInBytes estimates a batch's size before it is written; " +
			"codec has no such estimate: AppendBatch writes into the caller's slice and computes batchLength " +
			"from what it wrote.",
		"testSetNoTimestampTypeNotAllowed": "Kafka's TimestampType has a third value, NO_TIMESTAMP_TYPE, " +
			"that setMaxTimestamp must refuse; codec's timestamp type is the attribute bit, which has no " +
			"third value to refuse.",
		"testZstdJniForSkipKeyValueIterator": "counts the read() calls into zstd-jni's native stream " +
			"(one JNI call each) and checks that its allocating skip() is never called; codec decodes zstd " +
			"in Go (klauspost/compress) with no native calls, and the allocation side is held by " +
			"testBufferReuseInSkipKeyValueIterator.",
	}
	defaultRecordNotApplicable        = map[string]string{}
	endTransactionMarkerNotApplicable = map[string]string{}
	controlRecordTypeNotApplicable    = map[string]string{}
)

// TestKafkaSuites: every method of the Kafka record test classes read is
// ported or listed as not applicable with a reason, and docs/kafka-tests.md
// and results/kafka-tests.md state the figures computed here.
func TestKafkaSuites(t *testing.T) {
	for _, s := range []struct {
		class, prefix string
		na            map[string]string
	}{
		{"DefaultRecordBatchTest", "TestKafkaDefaultRecordBatch_", defaultRecordBatchNotApplicable},
		{"DefaultRecordTest", "TestKafkaDefaultRecord_", defaultRecordNotApplicable},
		{"EndTransactionMarkerTest", "TestKafkaEndTransactionMarker_", endTransactionMarkerNotApplicable},
		{"ControlRecordTypeTest", "TestKafkaControlRecordType_", controlRecordTypeNotApplicable},
	} {
		t.Run(s.class, func(t *testing.T) {
			apply, total := kafkatests.Check(t, kafkatests.Suite{
				Class:         s.class,
				List:          "testdata/kafka-" + strings.ToLower(s.class) + ".txt",
				Prefix:        s.prefix,
				NotApplicable: s.na,
				Sections:      []string{"../docs/kafka-tests.md"},
				Rows:          []string{"../results/kafka-tests.md"},
			})
			t.Logf("%s: %d of %d methods apply", s.class, apply, total)
		})
	}
}
