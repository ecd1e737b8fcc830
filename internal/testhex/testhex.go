// Package testhex decodes the annotated hex dumps in which tests write byte
// layouts, one field per line with its meaning beside it:
//
//	0000000000000005   # baseOffset
//	0000 0031 | 00     # batchLength | first byte of partitionLeaderEpoch
//
// It imports nothing of the module, so that every package's tests can use
// it, codec's included.
package testhex

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Unhex decodes an annotated hex dump: on each line '#' starts a comment;
// white space and '|' (a column separator) are ignored. A dump that is not
// an even number of hex digits fails t.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := decode(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode is Unhex returning hex.DecodeString's error.
func decode(s string) ([]byte, error) {
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			clean.WriteString(strings.ReplaceAll(f, "|", ""))
		}
	}
	return hex.DecodeString(clean.String())
}
