package psm

import (
	"errors"
	"testing"
)

// The option names of docs/scenarios.md's has-producer-id and barrier-apply
// select these rules, and an unknown name is refused with ErrUnknownName.
func TestOptionNames(t *testing.T) {
	for _, c := range []struct {
		name string
		want HasProducerIDRule
	}{{"stock", Stock}, {"not-minus-one", NonNegativeOne}} {
		var r HasProducerIDRule
		if err := r.UnmarshalText([]byte(c.name)); err != nil || r != c.want || r.String() != c.name {
			t.Errorf("has-producer-id %q: %v (%q), %v", c.name, r, r.String(), err)
		}
	}
	for _, c := range []struct {
		name string
		want BarrierApply
	}{{"exact", Exact}, {"prototype", Prototype}} {
		var b BarrierApply
		if err := b.UnmarshalText([]byte(c.name)); err != nil || b != c.want || b.String() != c.name {
			t.Errorf("barrier-apply %q: %v (%q), %v", c.name, b, b.String(), err)
		}
	}
	var r HasProducerIDRule
	if err := r.UnmarshalText([]byte("any")); !errors.Is(err, ErrUnknownName) {
		t.Errorf("has-producer-id any: %v", err)
	}
	var b BarrierApply
	if err := b.UnmarshalText([]byte("any")); !errors.Is(err, ErrUnknownName) {
		t.Errorf("barrier-apply any: %v", err)
	}
}

// Each transaction version is Kafka's feature level (TransactionVersion#
// featureLevel, TV_UNKNOWN -1) and its name parses back; an unknown name is
// refused with ErrUnknownName.
func TestTxnVersionNames(t *testing.T) {
	for level, name := range map[int8]string{-1: "TV_UNKNOWN", 0: "TV0", 1: "TV1", 2: "TV2"} {
		want := []TxnVersion{TVUnknown, TV0, TV1, TV2}[level+1]
		var v TxnVersion
		if err := v.UnmarshalText([]byte(name)); err != nil || v != want || int8(v) != level || want.String() != name {
			t.Errorf("%s: %v (%q), %v", name, v, want.String(), err)
		}
	}
	v := TV2
	if err := v.UnmarshalText([]byte("TV3")); !errors.Is(err, ErrUnknownName) || v != TV2 {
		t.Errorf("TV3: %v, value %v", err, v)
	}
}
