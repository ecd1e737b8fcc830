package codec

import "testing"

// batchSizes are the shapes of docs/measuring.md: about 100 B, 1 KiB, 16 KiB, 1 MiB.
var batchSizes = []struct {
	name string
	n    int
}{{"100B", 100}, {"1KiB", 1024}, {"16KiB", 16 * 1024}, {"1MiB", 1 << 20}}

// benchBatch returns a batch of n bytes whose header is valid and whose CRC matches.
func benchBatch(n int) Batch {
	b := make([]byte, n)
	for i := HeaderSize; i < n; i++ {
		b[i] = byte(i * 7)
	}
	be.PutUint32(b[OffBatchLength:], uint32(n-LogOverhead))
	b[OffMagic] = MagicV2
	be.PutUint64(b[OffProducerID:], 5)
	be.PutUint32(b[OffRecordsCount:], 1)
	bb := Batch(b)
	bb.UpdateCRC()
	return bb
}

// BenchmarkParseVerify is ParseBatch plus VerifyCRC: what every append pays.
func BenchmarkParseVerify(b *testing.B) {
	for _, s := range batchSizes {
		bb := benchBatch(s.n)
		b.Run("batch="+s.name, func(b *testing.B) {
			b.SetBytes(int64(s.n))
			b.ReportAllocs()
			for b.Loop() {
				p, err := ParseBatch(bb)
				if err != nil || p.VerifyCRC() != nil {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkRewritePID compares the two CRC fixes after a producerId rewrite.
func BenchmarkRewritePID(b *testing.B) {
	for _, fix := range []string{"patch", "full"} {
		for _, s := range batchSizes {
			bb := benchBatch(s.n)
			b.Run("crc="+fix+"/batch="+s.name, func(b *testing.B) {
				b.SetBytes(int64(s.n))
				b.ReportAllocs()
				pid := int64(0)
				for b.Loop() {
					pid++
					if fix == "patch" {
						bb.SetProducerID(pid)
					} else {
						bb.SetProducerIDRecompute(pid)
					}
				}
			})
		}
	}
}
