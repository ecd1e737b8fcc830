// Package enum is the one shape of the module's named enums: a small integer
// type whose values are the indexes of one list of names (offset by the
// table's First). The list is the only place a name is written; String,
// parsing and encoding.TextMarshaler / TextUnmarshaler (so flag.TextVar, JSON
// keys and scenario options) all read it.
//
//	type Fold uint8
//	var folds = enum.Table[Fold]{Kind: "fold", Names: []string{"xor", "mix"}, Err: ErrUnknownName}
//	func (f Fold) String() string                { return folds.String(f) }
//	func (f Fold) MarshalText() ([]byte, error)  { return folds.MarshalText(f) }
//	func (f *Fold) UnmarshalText(b []byte) error { return folds.UnmarshalText(f, b) }
package enum

import (
	"fmt"
	"strconv"
	"strings"
)

// Value is the integer kinds an enum may have: a wire field's width
// (Kafka's control type is an int16, a transaction version an int8) or a
// plain uint8.
type Value interface {
	~uint8 | ~int8 | ~int16
}

// Table is the list of an enum's names: Names[i] spells value First+i.
// Kind names the enum in messages ("strategy"); Err is the sentinel a parse
// error wraps. Unknown, when set, spells a value out of range as
// Unknown(N) (Kafka's UNKNOWN(N)); it is Kind(N) otherwise. A Table is
// immutable and safe for concurrent use.
type Table[T Value] struct {
	Kind    string
	Names   []string
	First   T
	Unknown string
	Err     error
}

// index is v's index in Names, or -1 when v is out of range.
func (t Table[T]) index(v T) int {
	if i := int(v) - int(t.First); i >= 0 && i < len(t.Names) {
		return i
	}
	return -1
}

// Values returns every value in order, in a new slice.
func (t Table[T]) Values() []T {
	vs := make([]T, len(t.Names))
	for i := range vs {
		vs[i] = T(int(t.First) + i)
	}
	return vs
}

// Valid reports whether v has a name. O(1).
func (t Table[T]) Valid(v T) bool { return t.index(v) >= 0 }

// String returns v's name, or Unknown(N) (Kind(N) without Unknown) for a
// value out of range. O(1); no allocation for a value in range.
func (t Table[T]) String(v T) string {
	if i := t.index(v); i >= 0 {
		return t.Names[i]
	}
	return t.unknown(v)
}

func (t Table[T]) unknown(v T) string {
	u := t.Unknown
	if u == "" {
		u = t.Kind
	}
	return u + "(" + strconv.Itoa(int(v)) + ")"
}

// Parse returns the value spelled s; the error wraps t.Err and lists the
// names.
func (t Table[T]) Parse(s string) (T, error) {
	for i, n := range t.Names {
		if s == n {
			return T(int(t.First) + i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q (want one of %s)", t.Err, t.Kind, s, strings.Join(t.Names, ", "))
}

// MarshalText is encoding.TextMarshaler for v: its name, or an error wrapping
// t.Err for a value out of range.
func (t Table[T]) MarshalText(v T) ([]byte, error) {
	if i := t.index(v); i >= 0 {
		return []byte(t.Names[i]), nil
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
