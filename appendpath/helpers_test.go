package appendpath

import (
	"bytes"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
)

// bspec describes a test batch (testlog.Spec).
type bspec struct {
	pid      int64
	epoch    int16
	seq      int32
	records  int
	txn      bool
	value    int   // value bytes per record (default 16)
	ts       int64 // base timestamp (default 1700000000000)
	base     int64 // base offset
	leaderEp int32
}

func mkBatch(t testing.TB, s bspec) []byte {
	t.Helper()
	return testlog.Batch(t, testlog.Spec{PID: s.pid, Epoch: s.epoch, Seq: s.seq, Records: s.records, Txn: s.txn,
		Value: s.value, TS: s.ts, Base: s.base, LeaderEp: s.leaderEp})
}

func mkMarker(pid int64, epoch int16, coordEpoch int32, abort bool) []byte {
	return codec.AppendEndTxnMarker(nil, pid, epoch, coordEpoch, abort, 1700000000500)
}

// chunk concatenates batches.
func chunk(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// testNow is the clock of test partitions: just after the test batches'
// timestamps, so no producer expires on a snapshot load.
func testNow() time.Time { return time.UnixMilli(1700000001000) }

func mustOpen(t testing.TB, cfg Config) *Partition {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = testNow
	}
	p, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll returns every batch of p as copies.
func readAll(t testing.TB, p *Partition) [][]byte {
	t.Helper()
	var out [][]byte
	for b, err := range p.Batches(p.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.Clone(b))
	}
	return out
}
