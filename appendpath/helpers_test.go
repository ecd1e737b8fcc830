package appendpath

import (
	"bytes"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
)

// bspec describes a test batch, and mkBatch builds it: the one builder of
// internal/testlog, shared with the other package's tests.
type bspec = testlog.Spec

func mkBatch(t testing.TB, s bspec) []byte {
	t.Helper()
	return testlog.Batch(t, s)
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
