// Package enum is the one shape of the module's named enums: a small integer
// type whose values are the indexes of one list of names. The list is the
// only place a name is written; String, parsing and encoding.TextMarshaler /
// TextUnmarshaler (so flag.TextVar, JSON keys and scenario options) all read
// it.
//
//	type Fold uint8
//	var folds = enum.Table[Fold]{Kind: "fold", Names: []string{"xor", "mix"}, Err: ErrUnknownName}
//	func (f Fold) String() string                { return folds.String(f) }
//	func (f Fold) MarshalText() ([]byte, error)  { return folds.MarshalText(f) }
//	func (f *Fold) UnmarshalText(b []byte) error { return folds.UnmarshalText(f, b) }
package enum

import (
	"fmt"
	"strings"
)

// Table is the list of an enum's names, indexed by value: Names[v] spells
// value v. Kind names the enum in messages ("strategy"); Err is the sentinel
// a parse error wraps. A Table is immutable and safe for concurrent use.
type Table[T ~uint8] struct {
	Kind  string
	Names []string
	Err   error
}

// Values returns every value in order, in a new slice.
func (t Table[T]) Values() []T {
	vs := make([]T, len(t.Names))
	for i := range vs {
		vs[i] = T(i)
	}
	return vs
}

// String returns v's name, or "kind(N)" for a value out of range.
func (t Table[T]) String(v T) string {
	if int(v) < len(t.Names) {
		return t.Names[v]
	}
	return fmt.Sprintf("%s(%d)", t.Kind, v)
}

// Parse returns the value spelled s; the error wraps t.Err and lists the
// names.
func (t Table[T]) Parse(s string) (T, error) {
	for i, n := range t.Names {
		if s == n {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q (want one of %s)", t.Err, t.Kind, s, strings.Join(t.Names, ", "))
}

// MarshalText is encoding.TextMarshaler for v: its name, or an error wrapping
// t.Err for a value out of range.
func (t Table[T]) MarshalText(v T) ([]byte, error) {
	if int(v) < len(t.Names) {
		return []byte(t.Names[v]), nil
	}
	return nil, fmt.Errorf("%w: %s value %d", t.Err, t.Kind, v)
}

// UnmarshalText is encoding.TextUnmarshaler for *v, with Parse; *v is
// unchanged on error.
func (t Table[T]) UnmarshalText(v *T, b []byte) error {
	x, err := t.Parse(string(b))
	if err == nil {
		*v = x
	}
	return err
}
