package storage

import (
	"errors"
	"testing"
)

// SyncNever, SyncAlways and SyncInterval are spelled never, always and
// interval and parse back; another name is refused with ErrUnknownName.
func TestSyncPolicyNames(t *testing.T) {
	for i, name := range []string{"never", "always", "interval"} {
		want := []SyncPolicy{SyncNever, SyncAlways, SyncInterval}[i]
		var s SyncPolicy
		if err := s.UnmarshalText([]byte(name)); err != nil || s != want || want.String() != name {
			t.Errorf("%q: %v (%q), %v", name, s, want.String(), err)
		}
	}
	s := SyncAlways
	if err := s.UnmarshalText([]byte("sometimes")); !errors.Is(err, ErrUnknownName) || s != SyncAlways {
		t.Errorf("sometimes: %v, value %v", err, s)
	}
}
