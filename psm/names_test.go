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
