package codec

import (
	"bytes"
	"testing"
)

// walkBench16KiB is the peer benchmark's batch (bench/): 129 records, 10-byte
// keys, 106-byte values, 16,411 bytes.
func walkBench16KiB(tb testing.TB) Batch {
	recs := make([]Record, 129)
	for i := range recs {
		recs[i] = Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("key-000000"),
			Value: bytes.Repeat([]byte{byte(i)}, 106)}
	}
	raw, err := AppendBatch(nil, BatchHeader{BaseTimestamp: 1700000000000, ProducerID: 4242}, recs, CompressionNone)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// BenchmarkRecordWalk is the uncompressed record walk alone (no CRC): every
// record of the 16 KiB batch decoded, headers included.
func BenchmarkRecordWalk(b *testing.B) {
	bb := walkBench16KiB(b)
	b.Run("batch=16KiB", func(b *testing.B) {
		b.SetBytes(int64(len(bb)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := walkBatch(bb); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecompressWalk is OpenRecords plus the record walk for each codec
// over the 16 KiB batch, with a reused buffer.
func BenchmarkDecompressWalk(b *testing.B) {
	src := walkBench16KiB(b)
	var recs []Record
	it := src.Records()
	for {
		var r Record
		if it.Read(&r) != nil {
			break
		}
		recs = append(recs, r)
	}
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
		raw, err := AppendBatch(nil, src.Header(), recs, c)
		if err != nil {
			b.Fatal(err)
		}
		bb := Batch(raw)
		b.Run("codec="+c.String()+"/batch=16KiB", func(b *testing.B) {
			buf := make([]byte, 0, 64<<10)
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				it, out, err := bb.OpenRecords(buf, 1<<20)
				if err != nil {
					b.Fatal(err)
				}
				buf = out
				var r Record
				for it.Read(&r) == nil {
				}
			}
		})
	}
}
