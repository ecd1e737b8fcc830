package pid

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// clusterWithRegion returns a cluster ID whose FoldXOR is region: msb as
// given, lsb chosen so that the low 32 bits of msb^lsb are region.
func clusterWithRegion(msb uint64, region uint32) [16]byte {
	var id [16]byte
	binary.BigEndian.PutUint64(id[:8], msb)
	binary.BigEndian.PutUint64(id[8:], msb^uint64(region)^0xabcd_0000_0000_0000)
	return id
}

// clash returns a second cluster ID (hi^d, lo^d) that shares id's FoldXOR
// region, as scenario 09 builds one.
func clash(id [16]byte, d uint64) [16]byte {
	var o [16]byte
	binary.BigEndian.PutUint64(o[:8], binary.BigEndian.Uint64(id[:8])^d)
	binary.BigEndian.PutUint64(o[8:], binary.BigEndian.Uint64(id[8:])^d)
	return o
}

// seqSource returns the given values in order, then repeats the last one.
type seqSource struct {
	vals []uint64
	i    int
}

func (s *seqSource) Uint64() uint64 {
	v := s.vals[min(s.i, len(s.vals)-1)]
	s.i++
	return v
}

var _ rand.Source = (*seqSource)(nil)

// flakyWriter fails while fail is set.
type flakyWriter struct {
	fail bool
	buf  []byte
}

var errDisk = errors.New("disk full")

func (w *flakyWriter) Write(b []byte) (int, error) {
	if w.fail {
		return 0, errDisk
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

// makeBatch builds a v2 batch of exactly size bytes (size >= HeaderSize)
// whose records section is pseudo-random filler. The header is valid and the
// CRC right; the records are not decodable, which Rewrite never looks at.
func makeBatch(tb testing.TB, size int, pid int64) codec.Batch {
	tb.Helper()
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(uint64(size), 7))
	for i := codec.HeaderSize; i < size; i++ {
		b[i] = byte(r.Uint32())
	}
	be := binary.BigEndian
	be.PutUint64(b[codec.OffBaseOffset:], 100)
	be.PutUint32(b[codec.OffBatchLength:], uint32(size-codec.LogOverhead))
	be.PutUint32(b[codec.OffPartitionLeaderEpoch:], 3)
	b[codec.OffMagic] = codec.MagicV2
	be.PutUint32(b[codec.OffLastOffsetDelta:], 9)
	be.PutUint64(b[codec.OffBaseTimestamp:], 1_700_000_000_000)
	be.PutUint64(b[codec.OffMaxTimestamp:], 1_700_000_000_009)
	be.PutUint64(b[codec.OffProducerID:], uint64(pid))
	be.PutUint16(b[codec.OffProducerEpoch:], 4)
	be.PutUint32(b[codec.OffBaseSequence:], 0)
	be.PutUint32(b[codec.OffRecordsCount:], 10)
	bt, err := codec.ParseBatch(b)
	if err != nil {
		tb.Fatal(err)
	}
	bt.UpdateCRC()
	return bt
}

// bitString prints m as the seed does: sign|region|low.
func bitString(m int64) string {
	const digits = "01"
	u := uint64(m)
	out := make([]byte, 0, 66)
	for i := 63; i >= 0; i-- {
		out = append(out, digits[u>>uint(i)&1])
		if i == 63 || i == 31 {
			out = append(out, '|')
		}
	}
	return string(out)
}
