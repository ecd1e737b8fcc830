// Package bench holds the cross-package peer benchmarks: the same work done
// by mirrorpath's codec and by the Go Kafka clients (franz-go kmsg, IBM
// sarama, segmentio kafka-go), so that results/codec.md can give ratios
// measured in one run. It has no API; everything is in *_test.go files.
//
// Run:
//
//	go test ./bench -run '^$' -bench RecordWalk -benchtime=200ms -count 5
package bench
