package storage

import (
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testlog"
)

// bspec describes a test batch, and mkBatch builds it: the one builder of
// internal/testlog, shared with the other package's tests.
type bspec = testlog.Spec

func mkBatch(t testing.TB, s bspec) []byte {
	t.Helper()
	return testlog.Batch(t, s)
}
