//go:build tools

// Package tools pins the modules that mirrorpath uses only from tests, benchmarks and
// generators, so that `go mod tidy` keeps them and a fresh machine downloads them.
package tools

import (
	_ "github.com/IBM/sarama"
	_ "github.com/google/uuid"
	_ "github.com/klauspost/compress/gzip"
	_ "github.com/klauspost/compress/s2"
	_ "github.com/klauspost/compress/snappy"
	_ "github.com/klauspost/compress/zstd"
	_ "github.com/klauspost/crc32"
	_ "github.com/pierrec/lz4/v4"
	_ "github.com/segmentio/kafka-go"
	_ "github.com/stretchr/testify/require"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "github.com/twmb/franz-go/pkg/kmsg"
	_ "golang.org/x/perf/benchfmt"
	_ "golang.org/x/perf/benchmath"
	_ "golang.org/x/perf/benchproc"
	_ "golang.org/x/perf/cmd/benchstat"
)
