// Package conform checks a Kafka-compatible broker's produce path against
// Kafka's producer-state rules, over the wire.
//
// Each Case drives raw requests (InitProducerId, Produce with batches built
// by codec.AppendBatch, AddPartitionsToTxn, EndTxn, ListOffsets, Fetch at
// both isolation levels) through franz-go's kgo/kmsg, on a topic of its own,
// and compares every answer with the reference model: psm.Model holds the
// producer state (sequence, epoch, the five cached batches, transactions,
// the verification guard, the LSO), and the package adds the log end offset
// and what each isolation level reads. A case names the rule it checks and
// the Kafka class that implements it; it stops at its first differing
// response (the broker's state and the model's are then not comparable).
//
// Dial asks the broker's ApiVersions (v3, falling back to v2, v1, v0) and
// every request goes at the highest version both the broker and the suite
// accept, the suite's being Kafka 3.6's (the transaction protocol before
// KIP-890's implicit partition addition and per-transaction epoch bump). A
// case whose requests the broker lacks at the versions it needs is
// unsupported, naming the request. Topics are made by CreateTopics or, on a
// broker without it, by Metadata auto-creation. Every request is bounded by
// the Target's timeout.
//
// StartKfake runs franz-go's in-process broker (pkg/kfake) on 127.0.0.1, and
// StartLibrdkafkaMock librdkafka's mock cluster (built from
// testdata/librdkafka-mock with the system C compiler); the verdicts against
// each are recorded in results/conform-kfake.md and
// results/conform-librdkafka-mock.md and asserted by this package's tests.
// docs/conform.md is the manual.
package conform
