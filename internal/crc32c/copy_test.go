package crc32c

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/cputime"
)

// copyFuncs are the fused passes every ChecksumCopy test and fuzz target
// holds to the reference: the two differ only in what the 512-bit kernel
// prefetches.
var copyFuncs = []struct {
	name string
	f    func(dst, src []byte) uint32
}{{"ChecksumCopy", ChecksumCopy}, {"ChecksumCopyCold", ChecksumCopyCold}}

// checksumCopyRef is ChecksumCopy's simple reference: two passes.
func checksumCopyRef(dst, src []byte) uint32 {
	c := Checksum(src)
	copy(dst, src)
	return c
}

// TestChecksumCopy holds the fused pass to the two-pass reference at every
// length up to a little past two long rounds, at every source and destination
// alignment mod 8, with the bytes around the destination left alone.
func TestChecksumCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 2*3*fusedLong+3*fusedStep*fusedSteps+64)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	const guard = 16
	buf := make([]byte, len(src)+2*guard+8)
	for _, cf := range copyFuncs {
		for n := 0; n <= 2*3*fusedLong+3*fusedStep*fusedSteps+40; n++ {
			so, do := n%8, (n/8)%8
			s := src[so : so+n]
			for i := range buf {
				buf[i] = 0xa5
			}
			d := buf[guard+do : guard+do+n]
			got := cf.f(d, s)
			if want := Checksum(s); got != want {
				t.Fatalf("%s len %d: crc %#x, want %#x", cf.name, n, got, want)
			}
			if !bytes.Equal(d, s) {
				t.Fatalf("%s len %d: copy differs", cf.name, n)
			}
			for i, c := range buf {
				if (i < guard+do || i >= guard+do+n) && c != 0xa5 {
					t.Fatalf("%s len %d: byte %d outside dst written", cf.name, n, i)
				}
			}
		}
	}
}

// TestChecksumCopyOverlap: overlapping slices give Checksum(src) of the bytes
// before the copy, and memmove's result.
func TestChecksumCopyOverlap(t *testing.T) {
	for _, cf := range copyFuncs {
		for _, shift := range []int{-9, -1, 1, 8, 100} {
			buf := make([]byte, 5000)
			for i := range buf {
				buf[i] = byte(i * 31)
			}
			want := bytes.Clone(buf)
			src, dst := buf[200:4200], buf[200+shift:4200+shift]
			wantCRC := checksumCopyRef(want[200+shift:4200+shift], want[200:4200])
			if got := cf.f(dst, src); got != wantCRC {
				t.Fatalf("%s shift %d: crc %#x, want %#x", cf.name, shift, got, wantCRC)
			}
			if !bytes.Equal(buf, want) {
				t.Fatalf("%s shift %d: buffer differs from checksum-then-memmove", cf.name, shift)
			}
		}
	}
}

// TestChecksumCopyShortDst: a destination shorter than the source panics
// before anything is written.
func TestChecksumCopyShortDst(t *testing.T) {
	for _, cf := range copyFuncs {
		t.Run(cf.name, func(t *testing.T) {
			dst := make([]byte, 10)
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
				if !bytes.Equal(dst, make([]byte, 10)) {
					t.Fatal("dst written")
				}
			}()
			cf.f(dst, make([]byte, 11))
		})
	}
}

func TestChecksumCopyAllocs(t *testing.T) {
	src, dst := make([]byte, 20000), make([]byte, 20000)
	for _, cf := range copyFuncs {
		cf.f(dst, src) // the one-time tables
		if n := testing.AllocsPerRun(100, func() { cf.f(dst, src) }); n != 0 {
			t.Fatalf("%s: %v allocs", cf.name, n)
		}
	}
}

// FuzzChecksumCopy: the fused passes, under every kernel the CPU supports,
// equals hash/crc32 then copy for any bytes, length and alignment of source
// and destination.
func FuzzChecksumCopy(f *testing.F) {
	f.Add([]byte("123456789"), uint8(0), uint8(0))
	f.Add(make([]byte, 3*fusedLong+3*fusedStep*fusedSteps+7), uint8(3), uint8(5))
	f.Add(bytes.Repeat([]byte{0xff, 0, 1}, 1500), uint8(1), uint8(63))
	f.Add(bytes.Repeat([]byte{7, 0x80, 0xfe, 3, 9}, (2*mixRound+3*mixStep+70)/5), uint8(40), uint8(9)) // mixed rounds: two whole, one of three steps
	f.Fuzz(func(t *testing.T, msg []byte, srcOff, dstOff uint8) {
		so := min(int(srcOff%64), len(msg))
		s := msg[so:]
		want := crc32.Checksum(s, stdCastagnoli)
		dst := make([]byte, len(s)+int(dstOff%64)+8)
		eachKernel(t, func(k foldKind) {
			for _, cf := range copyFuncs {
				for i := range dst {
					dst[i] = 0x5a
				}
				d := dst[dstOff%64:]
				if got := cf.f(d, s); got != want {
					t.Fatalf("%v %s: crc %#x, want %#x (len %d)", k, cf.name, got, want, len(s))
				}
				if !bytes.Equal(d[:len(s)], s) {
					t.Fatalf("%v %s: copy differs", k, cf.name)
				}
				for _, c := range d[len(s):] {
					if c != 0x5a {
						t.Fatalf("%v %s: wrote past len(src)", k, cf.name)
					}
				}
			}
		})
	})
}

// BenchmarkChecksumCopy: the fused pass against the two passes it replaces,
// into a hot destination, and against the CRC alone (crconly).
func BenchmarkChecksumCopy(b *testing.B) {
	for _, s := range batchSizes {
		src, dst := benchBatch(s.n), make([]byte, s.n)
		for _, impl := range []struct {
			name string
			f    func(dst, src []byte) uint32
		}{
			{"twopass", checksumCopyRef},
			{"fused", ChecksumCopy},
			{"crconly", func(_, src []byte) uint32 { return Checksum(src) }},
		} {
			b.Run("impl="+impl.name+"/batch="+s.name, func(b *testing.B) {
				b.SetBytes(int64(s.n))
				b.ReportAllocs()
				var sink uint32
				start := cputime.Process()
				for b.Loop() {
					sink += impl.f(dst, src)
				}
				cputime.Report(b, start)
				if sink == 1 {
					b.Log(strconv.Itoa(int(sink)))
				}
			})
		}
	}
}
