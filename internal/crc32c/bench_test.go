package crc32c

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

// crcStart is where a Kafka batch's CRC starts: the benchmarks run over the
// bytes a batch of each size covers, as codec's ComputeCRC does.
const crcStart = 21

// benchBatch returns n bytes of a fixed pattern, the size of a batch whose
// covered bytes the benchmarks checksum (b[crcStart:]).
func benchBatch(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
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
				_ = Checksum(bb[crcStart:])
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
					sinkU32 += impl.f(bb[crcStart:])
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
							sinkU32 += Checksum(bb[crcStart:])
						case "crccopy":
							sinkU32 += ChecksumCopy(dst[crcStart:], bb[crcStart:])
						default:
							sinkU32 += ChecksumCopyCold(dst[crcStart:], bb[crcStart:])
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
					dst := ring[pos+crcStart : pos+s.n]
					if op == "crccopy" {
						sinkU32 += ChecksumCopy(dst, bb[crcStart:])
					} else {
						sinkU32 += ChecksumCopyCold(dst, bb[crcStart:])
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

var sinkU32 uint32

// BenchmarkPatchCRC isolates Patch for trailing lengths of every nibble count.
func BenchmarkPatchCRC(b *testing.B) {
	old, nw := []byte{0, 0, 0, 0, 0, 0, 0, 5}, []byte{0x80, 0, 0, 42, 0, 0, 0, 5}
	for _, k := range []int{10, 1000, 16 * 1024, 1 << 20, 1<<31 - 1} {
		b.Run("trailing="+strconv.Itoa(k), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkU32 = Patch(sinkU32, old, nw, k)
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
	bb := benchBatch(4096 + crcStart)
	for _, n := range []int{63, 64, 80, 100, 128, 192, 255, 256, 384, 768, 1024, 1664, 2496, 3327, 3328, 4096} {
		b.Run("kernel=hashcrc32/n="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			start := cputime.Process()
			for b.Loop() {
				sinkU32 += crc32.Checksum(bb[crcStart:crcStart+n], stdCastagnoli)
			}
			cputime.Report(b, start)
		})
		eachKernel(b, func(k foldKind) {
			b.Run("kernel="+k.String()+"/n="+strconv.Itoa(n), func(b *testing.B) {
				defer setFold(k)()
				b.SetBytes(int64(n))
				start := cputime.Process()
				for b.Loop() {
					sinkU32 += Checksum(bb[crcStart : crcStart+n])
				}
				cputime.Report(b, start)
			})
		})
	}
}
