package codec

import (
	"hash/crc32"
	"strconv"
	"testing"

	kcrc32 "github.com/klauspost/crc32"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

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

// BenchmarkCRC is the bare CRC over the covered bytes: the floor every parse
// and verify is compared with.
func BenchmarkCRC(b *testing.B) {
	for _, s := range batchSizes {
		bb := benchBatch(s.n)
		b.Run("batch="+s.name, func(b *testing.B) {
			b.SetBytes(int64(s.n))
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				_ = Checksum(bb[CRCStart:])
			}
			cputime.Report(b, start)
		})
	}
}

var kCastagnoli = kcrc32.MakeTable(kcrc32.Castagnoli)

// BenchmarkCRCPeers sets Checksum beside the CRC-32C of hash/crc32 (SSE4.2)
// and of github.com/klauspost/crc32 over the same unaligned bytes: `benchstat
// -col /impl` prints the ratios, of wall and of CPU time (cpu-ns/op).
func BenchmarkCRCPeers(b *testing.B) {
	for _, s := range batchSizes {
		bb := benchBatch(s.n)
		for _, impl := range []struct {
			name string
			f    func([]byte) uint32
		}{
			{"mirrorpath", Checksum},
			{"hashcrc32", func(p []byte) uint32 { return crc32.Checksum(p, stdCastagnoli) }},
			{"klauspost", func(p []byte) uint32 { return kcrc32.Checksum(p, kCastagnoli) }},
		} {
			b.Run("impl="+impl.name+"/batch="+s.name, func(b *testing.B) {
				b.SetBytes(int64(s.n))
				b.ReportAllocs()
				start := cputime.Process()
				for b.Loop() {
					sinkU32 += impl.f(bb[CRCStart:])
				}
				cputime.Report(b, start)
			})
		}
	}
}

// BenchmarkCRCKernel runs Checksum, ChecksumCopy and ChecksumCopyCold under
// every kernel the CPU supports, forced (sse42 is hash/crc32 and the
// three-stream fused loop). The destination is one hot buffer, where
// crccopycold's prefetches are wasted: its gain shows only into memory not
// in L1 (appendpath's BenchmarkLimitRingFused).
func BenchmarkCRCKernel(b *testing.B) {
	for _, op := range []string{"crc", "crccopy", "crccopycold"} {
		for _, s := range batchSizes {
			bb, dst := benchBatch(s.n), make([]byte, s.n)
			eachKernel(b, func(k foldKind) {
				b.Run("op="+op+"/kernel="+k.String()+"/batch="+s.name, func(b *testing.B) {
					defer setFold(k)()
					b.SetBytes(int64(s.n))
					b.ReportAllocs()
					start := cputime.Process()
					for b.Loop() {
						switch op {
						case "crc":
							sinkU32 += Checksum(bb[CRCStart:])
						case "crccopy":
							sinkU32 += ChecksumCopy(dst[CRCStart:], bb[CRCStart:])
						default:
							sinkU32 += ChecksumCopyCold(dst[CRCStart:], bb[CRCStart:])
						}
					}
					cputime.Report(b, start)
				})
			})
		}
	}
}

// BenchmarkChecksumCopyRing is ChecksumCopy and ChecksumCopyCold with the
// destination moving through a ring of three segments of max(256 KiB, 4n)
// bytes, as the append path's log does (appendpath's BenchmarkLimitRing):
// the case ChecksumCopyCold's prefetch for ownership is for. Against
// BenchmarkCRCKernel's hot buffer the two trade places.
func BenchmarkChecksumCopyRing(b *testing.B) {
	for _, op := range []string{"crccopy", "crccopycold"} {
		for _, s := range batchSizes {
			b.Run("op="+op+"/batch="+s.name, func(b *testing.B) {
				bb := benchBatch(s.n)
				ring := make([]byte, 3*max(256<<10, 4*s.n))
				for i := range ring {
					ring[i] = 1
				}
				b.SetBytes(int64(s.n))
				b.ReportAllocs()
				pos := 0
				start := cputime.Process()
				for b.Loop() {
					dst := ring[pos+CRCStart : pos+s.n]
					if op == "crccopy" {
						sinkU32 += ChecksumCopy(dst, bb[CRCStart:])
					} else {
						sinkU32 += ChecksumCopyCold(dst, bb[CRCStart:])
					}
					if pos += s.n; pos+s.n > len(ring) {
						pos = 0
					}
				}
				cputime.Report(b, start)
			})
		}
	}
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

var sinkU32 uint32

// BenchmarkPatchCRC isolates PatchCRC for trailing lengths of every nibble count.
func BenchmarkPatchCRC(b *testing.B) {
	old, nw := []byte{0, 0, 0, 0, 0, 0, 0, 5}, []byte{0x80, 0, 0, 42, 0, 0, 0, 5}
	for _, k := range []int{10, 1000, 16 * 1024, 1 << 20, 1<<31 - 1} {
		b.Run("trailing="+strconv.Itoa(k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkU32 = PatchCRC(sinkU32, old, nw, k)
			}
		})
	}
}

// BenchmarkCRCLengths runs Checksum around foldMin, foldMin256 and mixMin
// under every kernel the CPU supports: below them the CRC32 instruction's
// loop, from them the folding kernel, then its mixed rounds; the figures say
// where each starts to pay.
// kernel=hashcrc32 is hash/crc32 itself at each length, beside which sse42
// says whether Checksum's own loop (under 256 bytes) is worth keeping on a
// CPU without the folding instructions.
func BenchmarkCRCLengths(b *testing.B) {
	bb := benchBatch(4096 + CRCStart)
	for _, n := range []int{63, 64, 80, 100, 128, 192, 255, 256, 384, 768, 1024, 1664, 2496, 3327, 3328, 4096} {
		b.Run("kernel=hashcrc32/n="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			start := cputime.Process()
			for b.Loop() {
				sinkU32 += crc32.Checksum(bb[CRCStart:CRCStart+n], stdCastagnoli)
			}
			cputime.Report(b, start)
		})
		eachKernel(b, func(k foldKind) {
			b.Run("kernel="+k.String()+"/n="+strconv.Itoa(n), func(b *testing.B) {
				defer setFold(k)()
				b.SetBytes(int64(n))
				start := cputime.Process()
				for b.Loop() {
					sinkU32 += Checksum(bb[CRCStart : CRCStart+n])
				}
				cputime.Report(b, start)
			})
		})
	}
}
