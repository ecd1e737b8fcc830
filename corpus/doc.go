// Package corpus holds real Kafka record batches as test data, and the v2 header offsets its generator and tests share.
//
// Each good case is a Kafka segment file, <client>-<case>/00000000000000000000.log, holding back-to-back
// v2 record batches exactly as franz-go's in-process broker (kfake) stored them after franz-go (kgo) or
// sarama produced them, baseOffsets as the broker assigned them. malformed/ holds hand-made defective
// segments derived from the good ones, each named for its defect. MANIFEST.tsv lists every file with its
// client, codec, batch and record counts and size; README.md says what each case holds, how clients differ
// and how to regenerate:
//
//	go run ./corpus/gen && go run ./corpus/gen -malformed
//
// corpus_test.go checks the files with independent decoders only (its own framing loop, hash/crc32
// Castagnoli, kmsg.RecordBatch.ReadFrom, and the codec libraries directly), never with mirrorpath's codec
// package, whose differential tests read these files.
package corpus
