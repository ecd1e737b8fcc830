// Package lib declares one name per rule of the exported-API check.
package lib

import "errors"

// Mode is named by user; ModeB only through the enum.
type Mode int

// Mode's values.
const (
	ModeA Mode = iota
	ModeB
)

// Offsets: user names OffA; OffB is a row of the same table.
const (
	OffA = 0
	OffB = 8
)

// ErrBad is returned by Do; ErrOffenderUnreturned by nothing.
var (
	ErrBad                = errors.New("lib: bad")
	ErrOffenderUnreturned = errors.New("lib: never returned")
)

// Result is reached through Do's result, never named by user.
type Result struct{ N int }

// Do is named by user.
func Do(m Mode) (Result, error) {
	if m == ModeA {
		return Result{}, ErrBad
	}
	return Result{N: OffB}, nil
}

// OffenderUnused has no user.
func OffenderUnused() {}

// OffenderUnusedType has no user.
type OffenderUnusedType struct{}

// OffenderOnlyOwnTests is named by lib's own external test only.
func OffenderOnlyOwnTests() {}

// OnlyOtherTests is named by user's test only.
func OnlyOtherTests() {}

// Documented is listed in design.md.
func Documented() {}

// Name is named by user.
type Name string

// String is reached through fmt.Stringer.
func (n Name) String() string { return string(n) }

// OffenderMethod has no user.
func (n Name) OffenderMethod() {}

// Walker is named by user; Walk is its contract.
type Walker interface{ Walk() }

// Dog implements Walker: Walk is reached through it.
type Dog struct{}

// Walk implements Walker.
func (Dog) Walk() {}

// NewDog is named by user.
func NewDog() Dog { return Dog{} }
