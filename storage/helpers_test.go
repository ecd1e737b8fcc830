package storage

import (
	"testing"

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
