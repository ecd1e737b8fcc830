package pid

import (
	"bytes"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Rewrite under Patch carries a bad CRC over as bad (the CRC is patched for
// the changed field, not recomputed); under Full it recomputes, so the CRC
// becomes good. On a good CRC both give the same bytes.
func TestRewritePatchKeepsBadCRCBad(t *testing.T) {
	good, err := codec.AppendBatch(nil, codec.BatchHeader{ProducerID: 5, ProducerEpoch: 0, BaseSequence: 0},
		[]codec.Record{{Value: []byte("v")}}, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	p, f := bytes.Clone(good), bytes.Clone(good)
	Rewrite(codec.Batch(p), -77, Patch)
	Rewrite(codec.Batch(f), -77, Full)
	if !bytes.Equal(p, f) || codec.Batch(p).VerifyCRC() != nil || codec.Batch(p).ProducerID() != -77 {
		t.Fatal("Patch and Full disagree on a batch with a good CRC")
	}
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1 // a value byte: the CRC no longer matches
	p, f = bytes.Clone(bad), bytes.Clone(bad)
	Rewrite(codec.Batch(p), -77, Patch)
	Rewrite(codec.Batch(f), -77, Full)
	if codec.Batch(p).VerifyCRC() == nil {
		t.Error("Patch made a bad CRC good")
	}
	if codec.Batch(f).VerifyCRC() != nil {
		t.Error("Full left the CRC bad")
	}
}
