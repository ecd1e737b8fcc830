package psm

import (
	"math"
	"math/rand/v2"
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
				t.Fatalf("bounds [%d, %d] at now %d skip the shard, but lastTs %d is expired", sh.tsMin, sh.tsMax, now, ts)
			}
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d of the cases were skippable: the test checks little", skipped)
	}
}
