package appendpath

import "testing"

// A transaction completed above a replicated partition's high watermark
// stays unreplicated through a reload of producer state: it bounds the LSO
// until the high watermark passes its marker, as it did before the reload.
// Kafka reloads on truncation (ProducerStateManager#truncateAndReload) and
// then hands producer state the high watermark, not the log end
// (UnifiedLog#updateHighWatermarkMetadata → onHighWatermarkUpdated).
func TestReloadKeepsTxnsAboveHighWatermark(t *testing.T) {
	for _, reload := range []struct {
		name string
		do   func(*Partition) error
	}{
		{"Rebuild", (*Partition).Rebuild},
		{"Truncate", func(p *Partition) error { return p.Truncate(3) }},
	} {
		t.Run(reload.name, func(t *testing.T) {
			p := mustOpen(t, Config{ManualHighWatermark: true})
			kpReplica(t, p, bspec{PID: 1, Epoch: 5, Txn: true, Base: 0}, nil)
			kpReplicaBytes(t, p, testlogWithBase(mkMarker(1, 5, 0, false), 1))
			kpReplica(t, p, bspec{PID: 2, Epoch: 0, Base: 2}, nil)
			kpReplica(t, p, bspec{PID: 3, Epoch: 0, Base: 3}, nil)
			p.SetHighWatermark(1) // the COMMIT at 1 is not below it
			if lso := p.LastStableOffset(); lso != 0 {
				t.Fatalf("before the reload: LSO %d, want 0", lso)
			}
			if err := reload.do(p); err != nil {
				t.Fatal(err)
			}
			if hw, lso := p.HighWatermark(), p.LastStableOffset(); hw != 1 || lso != 0 {
				t.Fatalf("after %s: high watermark %d, LSO %d; want 1 and 0", reload.name, hw, lso)
			}
			p.SetHighWatermark(2)
			if lso := p.LastStableOffset(); lso != 2 {
				t.Fatalf("high watermark past the COMMIT: LSO %d, want 2", lso)
			}
		})
	}
}
