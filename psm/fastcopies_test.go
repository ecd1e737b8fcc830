package psm

import (
	"math"
	"testing"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// fastVerdict is what one copy of the fast-path check says of a batch: it
// hands the batch to the general path, or it takes it and answers err.
type fastVerdict struct {
	general bool
	err     error
}

// The fast-path check is written twice (store_fast.go): by hand in Add (an
// append's first batch) and in Store.Update. TestFastPathCopiesAgree asks
// each copy about the same cases, from the same state, and requires one
// verdict: which path takes the batch, and, on the fast path, the answer.
// Each case's want is written out, so a copy that drifts from the other,
// or both from the rule, fails here.
func TestFastPathCopiesAgree(t *testing.T) {
	const p = PartitionID(0)
	// The state every case starts from: pid 1 at epoch 2 caching
	// sequences 0..2; pid 2 with a transaction open at epoch 0; pid 3 at
	// epoch 0 with no batch (a marker made it); pid 4 at epoch 0 whose
	// last sequence is MaxInt32.
	setup := func(t *testing.T, verify bool) *Store {
		s := NewStore(Options{})
		for i, b := range []Batch{data(1, 2, 0, 1), data(1, 2, 1, 1), data(1, 2, 2, 1), txnData(2, 0, 0, 1),
			marker(3, 0, false, 0), data(4, 0, math.MaxInt32, 1)} {
			b.BaseOffset = int64(i) // offsets increase, as in a log
			if _, _, err := s.Update(p, Replication, &b); err != nil {
				t.Fatal(err)
			}
		}
		s.BeginAppend(p, Replication).Abort() // Update's own copy runs after a finished append
		if verify {
			if _, err := s.StartVerification(p, 9, 0, 0, TV0, 0); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	fast := func(err error) fastVerdict { return fastVerdict{err: err} }
	general := fastVerdict{general: true}
	cases := []struct {
		name   string
		origin Origin
		b      Batch
		verify bool // a verification entry in the partition (another producer's)
		want   fastVerdict
	}{
		{"client in sequence", Client, data(1, 2, 3, 1), false, fast(nil)},
		{"client sequence gap", Client, data(1, 2, 5, 1), false, fast(kafkaerr.OutOfOrderSequenceNumber)},
		{"client lower epoch", Client, data(1, 1, 3, 1), false, fast(kafkaerr.InvalidProducerEpoch)},
		{"client higher epoch at 0", Client, data(1, 3, 0, 1), false, fast(nil)},
		{"client higher epoch not at 0", Client, data(1, 3, 4, 1), false, fast(kafkaerr.OutOfOrderSequenceNumber)},
		{"client possible duplicate", Client, data(1, 2, 2, 1), false, general},
		// An empty window's unused last sequences read as 0: a batch ending
		// at 0 may be a duplicate, which the general path tells.
		{"client no batch yet, ending at 0", Client, data(3, 0, 0, 1), false, general},
		{"client no batch yet, at 0", Client, data(3, 0, 0, 2), false, fast(nil)},
		{"client no batch yet, not at 0", Client, data(3, 0, 17, 1), false, fast(kafkaerr.OutOfOrderSequenceNumber)},
		{"client wrap to 0", Client, data(4, 0, 0, 2), false, fast(nil)},
		{"client wrap to 1", Client, data(4, 0, 1, 1), false, fast(kafkaerr.OutOfOrderSequenceNumber)},
		{"client data in open transaction", Client, data(2, 0, 1, 1), false, fast(kafkaerr.InvalidTxnState)},
		{"replication sequence gap", Replication, data(1, 2, 9, 1), false, fast(nil)},
		{"replication lower epoch", Replication, data(1, 0, 9, 1), false, fast(nil)},
		{"replication repeat", Replication, data(1, 2, 2, 1), false, fast(nil)},
		{"replication data in open transaction", Replication, data(2, 0, 1, 1), false, fast(kafkaerr.InvalidTxnState)},
		{"coordinator", Coordinator, data(1, 2, 3, 1), false, general},
		{"transactional", Client, txnData(1, 2, 3, 1), false, general},
		{"control", Replication, marker(1, 2, false, 0), false, general},
		{"barrier", Replication, barrierBatch(), false, general},
		{"unknown producer", Client, data(7, 0, 0, 1), false, general},
		{"untracked producer", Client, data(-1, 0, 0, 1), false, general},
		{"verification entry in the partition", Client, data(1, 2, 3, 1), true, general},
	}
	copies := []struct {
		name  string
		check func(s *Store, origin Origin, b *Batch) fastVerdict
	}{
		{"Add", func(s *Store, origin Origin, b *Batch) fastVerdict {
			a := s.BeginAppend(p, origin)
			_, err := a.Add(b)
			if a.general {
				return general
			}
			return fast(err)
		}},
		{"Update", func(s *Store, origin Origin, b *Batch) fastVerdict {
			// Update's own copy never begins the appender; the general
			// way does (Begin sets its origin).
			a := &s.part(p).app
			a.origin = Origin(math.MaxUint8)
			_, _, err := s.Update(p, origin, b)
			if a.origin != Origin(math.MaxUint8) {
				return general
			}
			return fast(err)
		}},
	}
	for _, c := range cases {
		for _, cp := range copies {
			t.Run(c.name+"/"+cp.name, func(t *testing.T) {
				s := setup(t, c.verify)
				b := c.b
				b.BaseOffset = 100
				if got := cp.check(s, c.origin, &b); got != c.want {
					t.Fatalf("%+v from %v: %+v, want %+v", c.b, c.origin, got, c.want)
				}
			})
		}
	}
}
