package codec

import (
	"errors"
	"testing"
)

// Each codec has Kafka's id (CompressionType#id, attribute bits 0-2) and
// name (CompressionType#name) and the name parses back; ids 5-7 are unknown
// and print as unknown(n), and an unknown name is refused with
// ErrUnknownName.
func TestCompressionNames(t *testing.T) {
	for id, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		c := Attributes(id).Compression()
		if !c.Valid() || c.String() != name {
			t.Errorf("codec %d: %q (valid %v), want %q", id, c, c.Valid(), name)
		}
		var p Compression
		if err := p.UnmarshalText([]byte(name)); err != nil || p != c {
			t.Errorf("%q parses to %v, %v", name, p, err)
		}
	}
	if c := Attributes(5).Compression(); c.Valid() || c.String() != "unknown(5)" {
		t.Errorf("codec 5: %q (valid %v)", c, c.Valid())
	}
	c := CompressionZstd
	if err := c.UnmarshalText([]byte("brotli")); !errors.Is(err, ErrUnknownName) || c != CompressionZstd {
		t.Errorf("brotli: %v, value %v", err, c)
	}
}
