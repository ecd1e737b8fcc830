package testhex

import (
	"bytes"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		dump string
		want []byte
		ok   bool
	}{
		{"", []byte{}, true},
		{"00 01\n\t02|03 # 04 is a comment\n  # a line of comment only\n0a", []byte{0, 1, 2, 3, 10}, true},
		{"0|0 ff", []byte{0, 0xff}, true},
		{"abc", nil, false},
		{"zz", nil, false},
	} {
		got, err := decode(c.dump)
		if (err == nil) != c.ok || (c.ok && !bytes.Equal(got, c.want)) {
			t.Errorf("decode(%q) = %x, %v; want %x (ok %v)", c.dump, got, err, c.want, c.ok)
		}
	}
}
