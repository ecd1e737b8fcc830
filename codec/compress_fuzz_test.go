package codec

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// refCompress is the plain model of Compress: each library's stream writer
// into a bytes.Buffer with the framing Kafka's producers use (xerial snappy
// with 32 KiB chunks, LZ4 frames of 64 KiB blocks), built independently of
// Compress's in-place appends.
func refCompress(t testing.TB, raw []byte, c Compression) []byte {
	var buf bytes.Buffer
	switch c {
	case CompressionGzip:
		w := gzip.NewWriter(&buf)
		w.Write(raw)
		w.Close()
	case CompressionSnappy:
		buf.Write([]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1})
		for len(raw) > 0 {
			chunk := raw[:min(len(raw), 32<<10)]
			raw = raw[len(chunk):]
			block := snappy.Encode(nil, chunk)
			buf.Write(be.AppendUint32(nil, uint32(len(block))))
			buf.Write(block)
		}
	case CompressionLZ4:
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			t.Fatal(err)
		}
		w.Write(raw)
		w.Close()
	case CompressionZstd:
		e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		return e.EncodeAll(raw, nil)
	}
	return buf.Bytes()
}

// FuzzCompress: for records built from any bytes and every codec, Compress
// appends to dst exactly what the plain model writes, leaves dst's prefix
// alone, and Decompress gives the records back.
func FuzzCompress(f *testing.F) {
	f.Add([]byte("hello"), uint8(3), uint16(40))
	f.Add(bytes.Repeat([]byte{7}, 5000), uint8(1), uint16(1))
	f.Add([]byte{}, uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, seed []byte, n uint8, size uint16) {
		recs := make([]Record, int(n)%64+1)
		for i := range recs {
			v := make([]byte, int(size)%2048)
			for j := range v {
				if len(seed) > 0 {
					v[j] = seed[(i*31+j)%len(seed)]
				}
			}
			recs[i] = Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: seed, Value: v}
		}
		var raw []byte
		for _, r := range recs {
			raw = AppendRecord(raw, r)
		}
		for _, c := range []Compression{CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd} {
			head, err := AppendBatch(nil, BatchHeader{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}, nil, CompressionNone)
			if err != nil {
				t.Fatal(err)
			}
			prefix := bytes.Clone(head)
			got, err := Compress(head, raw, c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:len(prefix)], prefix) {
				t.Fatalf("%v: Compress changed dst's bytes", c)
			}
			if want := refCompress(t, raw, c); !bytes.Equal(got[len(prefix):], want) {
				t.Fatalf("%v: Compress writes %d bytes, the model %d", c, len(got)-len(prefix), len(want))
			}
			b := Batch(got)
			be.PutUint32(b[OffRecordsCount:], uint32(len(recs)))
			be.PutUint16(b[OffAttributes:], uint16(c))
			be.PutUint32(b[OffBatchLength:], uint32(len(b)-LogOverhead))
			out, err := Decompress(nil, b, 1<<30)
			if err != nil || !bytes.Equal(out, raw) {
				t.Fatalf("%v: round trip: %v", c, err)
			}
		}
		if _, err := Compress(nil, raw, CompressionNone); err != ErrUnsupportedCodec {
			t.Fatalf("CompressionNone: %v", err)
		}
	})
}
