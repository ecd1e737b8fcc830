package psm

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShardUnexpiredIsSound: whenever a shard's timestamp bounds say nothing
// can have expired, no timestamp within the bounds is expired by
// Store.isExpired's own (wrapping) arithmetic, extremes included.
func TestShardUnexpiredIsSound(t *testing.T) {
	s := NewStore(Options{})
	edges := []int64{math.MinInt64, math.MinInt64 + 1, -DefaultExpirationMs - 1, -DefaultExpirationMs, -1, 0, 1,
		DefaultExpirationMs - 1, DefaultExpirationMs, math.MaxInt64 - 1, math.MaxInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return edges[rng.IntN(len(edges))]
		case 1:
			return edges[rng.IntN(len(edges))] + rng.Int64N(3*DefaultExpirationMs) - DefaultExpirationMs
		}
		return int64(rng.Uint64())
	}
	skipped := 0
	for range 200000 {
		a, b, now := pick(), pick(), pick()
		sh := shard{tsMin: min(a, b), tsMax: max(a, b)}
		if !sh.unexpired(now, DefaultExpirationMs) {
			continue
		}
		skipped++
		probes := []int64{sh.tsMin, sh.tsMax, sh.tsMin + (sh.tsMax-sh.tsMin)/2, now, now - 1, now + 1,
			now - DefaultExpirationMs, now - DefaultExpirationMs + 1}
		for range 4 {
			probes = append(probes, pick())
		}
		for _, ts := range probes {
			if ts >= sh.tsMin && ts <= sh.tsMax && s.isExpired(-1, ts, now) {
				t.Fatalf("bounds [%d, %d] at now %d skip the shard, but lastTS %d is expired", sh.tsMin, sh.tsMax, now, ts)
			}
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d of the cases were skippable: the test checks little", skipped)
	}
}

// TestSortRefsMatchesComparisonSort: the radix sort of AppendSnapshot orders
// distinct PIDs like cmp.Compare, negatives and extremes included, whatever
// bytes they share, and keeps each PID's position.
func TestSortRefsMatchesComparisonSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tmp []snapRef
	for _, n := range []int{0, 1, 255, 256, 257, 1000, 5000} {
		for _, spread := range []int64{0, 1 << 8, 1 << 20, -1} {
			seen := map[int64]bool{}
			var refs []snapRef
			for len(refs) < n {
				pid := int64(rng.Uint64())
				if spread > 0 {
					pid = rng.Int64N(spread) - spread/2
				}
				if n%2 == 1 && len(refs) < 3 {
					pid = []int64{math.MinInt64, math.MaxInt64, -1}[len(refs)]
				}
				if spread > 0 && int64(n) > spread {
					pid = int64(len(refs)) * 3 // too few values in the spread for n distinct PIDs
				}
				if !seen[pid] {
					seen[pid] = true
					refs = append(refs, snapRef{pid: pid, pos: pid*7 + 1})
				}
			}
			want := slices.Clone(refs)
			slices.SortFunc(want, func(a, b snapRef) int { return cmp.Compare(a.pid, b.pid) })
			var got []snapRef
			got, tmp = sortRefs(refs, tmp)
			if !slices.Equal(got, want) {
				t.Fatalf("n=%d spread=%d: radix order differs from comparison order", n, spread)
			}
			if n > 0 && len(tmp) > 0 && &got[0] == &tmp[0] {
				t.Fatal("sorted slice and scratch share a buffer")
			}
		}
	}
}

// The Store's one-compare tracking rule is Options.tracks for both rules.
func TestTrackBelowIsTracks(t *testing.T) {
	for _, rule := range []HasProducerIDRule{Stock, NonNegativeOne} {
		s := NewStore(Options{HasProducerID: rule})
		for _, pid := range []int64{math.MinInt64, -3, -2, -1, 0, 1, 1 << 40, math.MaxInt64} {
			if got, want := uint64(pid) < s.trackBelow, s.opts.tracks(pid); got != want {
				t.Errorf("rule %d pid %d: %v, want %v", rule, pid, got, want)
			}
		}
	}
}
