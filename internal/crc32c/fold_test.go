package crc32c

import (
	"bytes"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// kernels are the folding kernels this machine runs, foldNone first.
func kernels() []foldKind {
	var ks []foldKind
	for _, k := range []foldKind{foldNone, fold256, fold512, fold512mix} {
		if foldSupported(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// eachKernel runs f with every kernel the machine supports forced.
func eachKernel(t testing.TB, f func(k foldKind)) {
	for _, k := range kernels() {
		restore := setFold(k)
		f(k)
		restore()
	}
}

var stdCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// TestFoldKernels runs every kernel the CPU supports, forced, against
// hash/crc32: every length up to past two 512-bit rounds plus every block and
// tail shape, at every source and destination alignment mod 64, then some
// long lengths; ChecksumCopy's copy and the bytes around it too.
func TestFoldKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const maxN = 3*256 + 64 + 63
	src := make([]byte, 1<<20+200)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	const guard = 64
	buf := make([]byte, len(src)+2*guard+64)
	check := func(k foldKind, n, so, do int) {
		s := src[so : so+n]
		want := crc32.Checksum(s, stdCastagnoli)
		if got := Checksum(s); got != want {
			t.Fatalf("%v: Checksum len %d at %d: %#x, want %#x", k, n, so, got, want)
		}
		for _, cf := range copyFuncs {
			for i := range buf[:n+2*guard+64] {
				buf[i] = 0xa5
			}
			d := buf[guard+do : guard+do+n]
			if got := cf.f(d, s); got != want {
				t.Fatalf("%v: %s len %d at %d→%d: %#x, want %#x", k, cf.name, n, so, do, got, want)
			}
			if !bytes.Equal(d, s) {
				t.Fatalf("%v: %s len %d: copy differs", k, cf.name, n)
			}
			for i, c := range buf[:n+2*guard+64] {
				if (i < guard+do || i >= guard+do+n) && c != 0xa5 {
					t.Fatalf("%v: %s len %d: byte %d outside dst written", k, cf.name, n, i)
				}
			}
		}
	}
	ran := ""
	eachKernel(t, func(k foldKind) {
		ran += " " + k.String()
		for n := 0; n <= maxN; n++ {
			check(k, n, n%64, (n*7)%64)
		}
		for so := range 64 {
			for _, n := range []int{foldMin - 1, foldMin, foldMin + 1, foldMin256 - 1, foldMin256, 1000, foldAlignMin - 1, foldAlignMin, foldAlignMin + 63, 4096 + 63} {
				check(k, n, so, 63-so)
			}
		}
		// Every length through a whole mixed round and a last round of
		// each number of steps, and the kernels' loops after it.
		for n := mixMin - 1; n <= mixMin+mixRound+300; n++ {
			check(k, n, n%64, (n*5)%64)
		}
		for _, n := range []int{16 << 10, mixCopyMax, mixCopyMax + 1, 1<<20 - 1, 1 << 20, 1<<20 + 129} {
			check(k, n, n%61, n%59)
		}
	})
	t.Log("kernels:" + ran)
}

// TestFoldAllocs: no kernel allocates.
func TestFoldAllocs(t *testing.T) {
	src, dst := make([]byte, 20000), make([]byte, 20000)
	eachKernel(t, func(k foldKind) {
		ChecksumCopy(dst, src) // the one-time tables
		if n := testing.AllocsPerRun(50, func() { Checksum(src); ChecksumCopy(dst, src); ChecksumCopyCold(dst, src) }); n != 0 {
			t.Fatalf("%v: %v allocs", k, n)
		}
	})
}

// FuzzChecksum holds Checksum, under every kernel the CPU supports, to
// hash/crc32 for any bytes, length and alignment.
func FuzzChecksum(f *testing.F) {
	f.Add([]byte("123456789"), uint8(0))
	f.Add(make([]byte, 1000), uint8(3))
	f.Add(bytes.Repeat([]byte{0xff, 0, 1}, 700), uint8(63))
	f.Add(bytes.Repeat([]byte{7, 0x80, 0xfe, 3, 9}, (mixRound+5*mixStep+300)/5), uint8(17)) // mixed rounds: one whole, one of five steps
	f.Fuzz(func(t *testing.T, msg []byte, off uint8) {
		s := msg[min(int(off%64), len(msg)):]
		want := crc32.Checksum(s, stdCastagnoli)
		eachKernel(t, func(k foldKind) {
			if got := Checksum(s); got != want {
				t.Fatalf("%v: %#x, want %#x (len %d)", k, got, want, len(s))
			}
		})
	})
}

// TestChecksumThreeStreams holds Checksum without a folding kernel (sse42:
// three CRC32 streams from crc3Min bytes on where the CPU has SSE4.2 and
// PCLMULQDQ) to hash/crc32 at every length through two fusedLong rounds and
// every round length after them, at two alignments.
func TestChecksumThreeStreams(t *testing.T) {
	defer setFold(foldNone)()
	r := rand.New(rand.NewPCG(9, 10))
	src := make([]byte, 2*3*fusedLong+3*fusedLong+64)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for _, so := range []int{0, 21} {
		for n := 0; n+so <= len(src); n++ {
			s := src[so : so+n]
			if got, want := Checksum(s), crc32.Checksum(s, stdCastagnoli); got != want {
				t.Fatalf("Checksum len %d at %d: %#x, want %#x", n, so, got, want)
			}
		}
	}
}
