package appendpath

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/pid"
)

// clashOf returns a cluster ID other than id with the same FoldXOR region
// (both halves XORed with the same word).
func clashOf(id [16]byte) [16]byte {
	var o [16]byte
	binary.BigEndian.PutUint64(o[:8], binary.BigEndian.Uint64(id[:8])^0x5a5a)
	binary.BigEndian.PutUint64(o[8:], binary.BigEndian.Uint64(id[8:])^0x5a5a)
	return o
}

// One batch of fuseMin bytes or more under the O(1) CRC fix has its mapping
// predicted and its CRC change computed before the copy (predict); the log
// must hold what RewriteBatch writes, whether the mapping is the predicted
// one (a PID seen before, a PID seen first, the pure strategies) or not (the
// predicted bitfield slot held by another cluster's PID, resolved with a
// salt): the source batch with the mapped PID and a CRC recomputed over it.
func TestAppendMirroredPredictedRewrite(t *testing.T) {
	other := clashOf(srcA)
	if pid.Region(other) != pid.Region(srcA) || other == srcA {
		t.Fatal("clashOf: not a second cluster of the same region")
	}
	for _, s := range []pid.Strategy{pid.Negate, pid.NegateSkip, pid.Bitfield} {
		t.Run(s.String(), func(t *testing.T) {
			m := pid.NewMapper(pid.Config{Strategy: s, Registry: pid.NewRegistry(nil, nil),
				Rand: rand.NewPCG(7, 7)})
			p := mustOpen(t, Config{State: Mirroring, Strategy: s, CRCFix: pid.Patch, Mapper: m,
				PSMOptions: nonNegOne})
			var off int64
			appendOne := func(producer int64) int64 {
				t.Helper()
				src := testlog.WithOffsets(mkBatch(t, bspec{PID: producer, Seq: 0, Records: 20, Value: 88}), off, 3)
				if len(src) < fuseMin {
					t.Fatalf("batch of %d bytes: the one-batch fused path needs %d", len(src), fuseMin)
				}
				in := bytes.Clone(src)
				if _, err := p.AppendMirrored(in, srcA); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(in, src) {
					t.Fatal("caller's batch was modified")
				}
				all := readAll(t, p)
				got := codec.Batch(all[len(all)-1])
				want := codec.Batch(bytes.Clone(src))
				want.SetProducerIDRecompute(got.ProducerID())
				if !bytes.Equal(got, want) {
					t.Fatalf("PID %d: the log's batch is not the source's with PID %d and its CRC", producer, got.ProducerID())
				}
				off += 20
				return got.ProducerID()
			}
			region := pid.Region(srcA)
			mappedOf := func(producer int64) int64 {
				switch s {
				case pid.Negate:
					return pid.MapNegate(producer)
				case pid.NegateSkip:
					return pid.MapNegateSkip(producer)
				}
				return pid.Compose(region, producer)
			}
			for _, producer := range []int64{5, 5, 6} { // seen first, seen before, first again
				if got := appendOne(producer); got != mappedOf(producer) {
					t.Fatalf("PID %d mapped to %#x, want %#x", producer, got, mappedOf(producer))
				}
			}
			if s != pid.Bitfield {
				return
			}
			// The other cluster takes PID 7's slot of srcA's region; srcA's
			// fast path stays armed (its last call is srcA's), so 7 is
			// predicted to that slot and mapped elsewhere.
			if _, err := m.Map(other, 7); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Map(srcA, 6); err != nil {
				t.Fatal(err)
			}
			if pred, ok := m.Predict(srcA, 7); !ok || pred != pid.Compose(region, 7) {
				t.Fatalf("Predict(srcA, 7) = %#x, %v: the fast path's slot", pred, ok)
			}
			got := appendOne(7)
			if got == pid.Compose(region, 7) {
				t.Fatal("PID 7 took the slot the other cluster holds")
			}
			if cl, op, ok := m.Origin(got); !ok || cl != srcA || op != 7 {
				t.Fatalf("origin of %#x: %x/%d/%v", got, cl, op, ok)
			}
			if m.Stats().Collisions != 1 {
				t.Fatalf("%d collisions, want 1", m.Stats().Collisions)
			}
		})
	}
}
