package psm

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestConcurrentPartitions drives one shared Store from many goroutines, each
// owning two partitions, while a private Model per goroutine replays the same
// operations; every partition must stay equal to its model. Run with -race:
// partitions share only the directory and the guard counter.
func TestConcurrentPartitions(t *testing.T) {
	const workers = 16
	for _, opts := range []Options{{ExpirationMs: 50}, {ExpirationMs: 20, BarrierApply: Prototype, HasProducerID: NonNegativeOne}} {
		store := NewStore(opts)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 99))
				src := make([]byte, 3000)
				for i := range src {
					src[i] = byte(rng.Uint32())
				}
				// Partitions are created in a scattered order to exercise directory growth.
				base := PartitionID((w*7)%workers)*2 + 1
				d := &diff{t: t, model: NewModel(opts), store: store, sharedGuards: true, base: base, src: src, now: 1000}
				d.run()
			})
		}
		wg.Wait()
	}
}
