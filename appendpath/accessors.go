package appendpath

import (
	"errors"
	"iter"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
)

// Read returns a copy of whole batches starting with the one that holds
// offset, at most maxBytes of them but at least one batch. At or past the
// log end offset it returns nil; below the log start kafkaerr.OffsetOutOfRange.
// Allocates the result.
func (p *Partition) Read(offset int64, maxBytes int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Read(offset, maxBytes)
}

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Start()
}

// LogEndOffset is the offset the next batch gets.
func (p *Partition) LogEndOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.End()
}

// SyncedOffset is the durable log end: every offset below it survives a
// crash. Equal to LogEndOffset for a memory log.
func (p *Partition) SyncedOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Synced()
}

// HighWatermark is the replicated offset (the log end offset unless
// Config.ManualHighWatermark).
func (p *Partition) HighWatermark() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hw
}

// SetHighWatermark moves the high watermark (clamped to the log end offset)
// and lets producer state drop completed transactions below it.
func (p *Partition) SetHighWatermark(hw int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hw = min(max(hw, p.log.Start()), p.log.End())
	p.psm.OnHighWatermark(p.id, p.hw)
}

// LastStableOffset is the first offset of the earliest open or unreplicated
// transaction when below the high watermark, else the high watermark;
// never below the log start (ProducerStateManager#firstUndecidedOffset,
// UnifiedLog#lastStableOffset).
func (p *Partition) LastStableOffset() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lso()
}

// HasLateTransaction reports a transaction open longer than
// transaction.max.timeout.ms plus Kafka's buffer at the partition's clock
// (UnifiedLog#hasLateTransaction, the broker's hanging-transaction metric;
// psm.Manager.HasLateTransaction).
func (p *Partition) HasLateTransaction() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.HasLateTransaction(p.id, p.now().UnixMilli())
}

func (p *Partition) lso() int64 {
	return max(p.psm.LastStableOffset(p.id, p.hw), p.log.Start())
}

// LeaderEpoch is the epoch stamped on CLIENT and COORDINATOR batches.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.leaderEpoch
}

// AbortedTxns appends the .txnindex entries overlapping [from, to) to dst
// (what a READ_COMMITTED fetch returns with its data).
func (p *Partition) AbortedTxns(dst []storage.AbortedTxn, from, to int64) []storage.AbortedTxn {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.AbortedTxns(dst, from, to)
}

// OpenTxns appends the open transactions, by first offset, to dst.
func (p *Partition) OpenTxns(dst []psm.TxnInfo) []psm.TxnInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.OpenTxns(dst, p.id)
}

// Producers returns a copy of every producer entry, in no particular order.
func (p *Partition) Producers() []psm.ProducerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []psm.ProducerInfo
	for e := range p.psm.Producers(p.id) {
		out = append(out, e)
	}
	return out
}

// Producer returns a copy of one producer entry.
func (p *Partition) Producer(pid int64) (psm.ProducerInfo, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.Producer(p.id, pid)
}

// ProducerCount is the number of producer entries.
func (p *Partition) ProducerCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.ProducerCount(p.id)
}

// Snapshot returns producer state in Kafka's snapshot file format (entries
// sorted by PID), for comparing two partitions.
func (p *Partition) Snapshot() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.psm.AppendSnapshot(nil, p.id)
}

// Batches iterates the batches whose base offset is at least from, with a
// framing error at the end if any. Each batch aliases the log (memory) or a
// per-segment buffer (file) and is valid only until the next iteration. The
// partition's lock is held during the iteration: the loop body must not call
// other methods of p.
func (p *Partition) Batches(from int64) iter.Seq2[codec.Batch, error] {
	return func(yield func(codec.Batch, error) bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		stop := errors.New("stop")
		err := p.log.ForEach(from, func(b codec.Batch) error {
			if !yield(b, nil) {
				return stop
			}
			return nil
		})
		if err != nil && err != stop {
			yield(nil, err)
		}
	}
}

// Sync flushes the log to stable storage.
func (p *Partition) Sync() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Sync()
}
