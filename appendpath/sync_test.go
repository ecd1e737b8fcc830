package appendpath

import (
	"sync"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

func TestSyncPolicies(t *testing.T) {
	clock := time.UnixMilli(1700000001000)
	now := func() time.Time { return clock }
	for _, c := range []struct {
		policy storage.SyncPolicy
		want   []int64 // SyncedOffset after each of 4 appends (1 s apart for interval)
	}{
		{storage.SyncNever, []int64{0, 0, 0, 0}},
		{storage.SyncAlways, []int64{1, 2, 3, 4}},
		{storage.SyncInterval, []int64{0, 2, 2, 4}}, // interval 1.5 s: syncs at t=2 s and t=4 s
	} {
		t.Run(c.policy.String(), func(t *testing.T) {
			clock = time.UnixMilli(1700000001000)
			fs := vfs.NewMemFS()
			p := mustOpen(t, Config{Dir: "/l", FS: fs, Sync: c.policy, SyncInterval: 1500 * time.Millisecond, Now: now})
			for i, want := range c.want {
				clock = clock.Add(time.Second)
				if _, err := p.AppendClient(mkBatch(t, bspec{PID: 1, Seq: int32(i)})); err != nil {
					t.Fatal(err)
				}
				if got := p.SyncedOffset(); got != want {
					t.Fatalf("after append %d: synced %d, want %d", i, got, want)
				}
			}
			if err := p.Sync(); err != nil || p.SyncedOffset() != 4 {
				t.Fatalf("Sync: %v, synced %d", err, p.SyncedOffset())
			}
		})
	}
}

// TestConcurrentAppendsAndReads: appenders and readers on one partition (run
// with -race); every batch lands exactly once, in some order.
func TestConcurrentAppendsAndReads(t *testing.T) {
	p := mustOpen(t, Config{SegmentBytes: 2000})
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := p.AppendClient(mkBatch(t, bspec{PID: int64(w), Seq: int32(i)})); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	rg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Read(0, 1<<20); err != nil {
				t.Error(err)
				return
			}
			p.LastStableOffset()
			p.Producers()
		}
	})
	wg.Wait()
	close(stop)
	rg.Wait()
	if p.LogEndOffset() != writers*each || len(readAll(t, p)) != writers*each || p.ProducerCount() != writers {
		t.Fatalf("LEO %d, producers %d", p.LogEndOffset(), p.ProducerCount())
	}
}
