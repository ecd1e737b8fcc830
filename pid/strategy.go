package pid

import (
	"errors"

	"github.com/mirrorpath/mirrorpath/internal/enum"
)

// ErrUnknownName reports a strategy, CRC fix, policy or fold name that is not
// one of the names this package prints.
var ErrUnknownName = errors.New("pid: unknown name")

// Strategy is how a mirrored batch's producer ID is treated on the way into
// the destination log (docs/strategies.md). The zero value is Verbatim. Each
// name is spelled the same in flags, benchmark names, scenario files and reports.
type Strategy uint8

const (
	Verbatim   Strategy = iota // stored as-is: the unprotected baseline
	Negate                     // -(p+2) for every PID: an involution
	NegateSkip                 // -(p+2) for p >= 0; negatives pass through
	Bitfield                   // 1 | region | low 31 bits; negatives pass through
	Barrier                    // stored as-is; a MIRROR_PID_RESET batch on STOPPING
	// Allocator: stored as-is; at failover the destination cluster advances
	// its PID allocator past the highest PID of all its partitions before
	// any of them becomes writable (Redpanda's shadow-link failover).
	Allocator
)

// strategies is the one list of the strategies' names, in table order
// (docs/strategies.md).
var strategies = enum.Table[Strategy]{Kind: "strategy", Err: ErrUnknownName,
	Names: []string{"verbatim", "negate", "negate-skip", "bitfield", "barrier", "allocator"}}

// Strategies lists every strategy in table order (docs/strategies.md).
func Strategies() []Strategy { return strategies.Values() }

// ParseStrategy returns the strategy spelled s; the error matches
// ErrUnknownName.
func ParseStrategy(s string) (Strategy, error) { return strategies.Parse(s) }

// String returns the strategy's name, or "strategy(N)" for a value out of range.
func (s Strategy) String() string { return strategies.String(s) }

// Rewrites reports whether the strategy changes the producerId of mirrored
// batches (and so needs a CRC fix): negate, negate-skip and bitfield.
func (s Strategy) Rewrites() bool { return s == Negate || s == NegateSkip || s == Bitfield }

// MarshalText implements encoding.TextMarshaler (flag.TextVar, JSON keys).
func (s Strategy) MarshalText() ([]byte, error) { return strategies.MarshalText(s) }

// UnmarshalText implements encoding.TextUnmarshaler with ParseStrategy.
func (s *Strategy) UnmarshalText(b []byte) error { return strategies.UnmarshalText(s, b) }

// CRCFix is how a rewriting strategy repairs the batch CRC after it changes
// producerId (bytes 43..50, inside the CRC range). The zero value is Full.
type CRCFix uint8

const (
	Full  CRCFix = iota // recompute CRC-32C over the whole batch: O(size)
	Patch               // patch the stored CRC from the old PID: O(1) in size
)

var crcFixes = enum.Table[CRCFix]{Kind: "crc-fix", Names: []string{"full", "patch"}, Err: ErrUnknownName}

// CRCFixes lists every CRC fix.
func CRCFixes() []CRCFix { return crcFixes.Values() }

// ParseCRCFix returns the fix spelled s ("full" or "patch").
func ParseCRCFix(s string) (CRCFix, error) { return crcFixes.Parse(s) }

func (f CRCFix) String() string { return crcFixes.String(f) }

func (f CRCFix) MarshalText() ([]byte, error) { return crcFixes.MarshalText(f) }

func (f *CRCFix) UnmarshalText(b []byte) error { return crcFixes.UnmarshalText(f, b) }

// Policy decides what bitfield does with a source PID that does not fit in
// 31 bits (p >= 2^31). The zero value is Reject.
type Policy uint8

const (
	// Reject refuses the PID with ErrUnmappable: the batch is not appended and
	// the mirror partition moves to FAILED.
	Reject Policy = iota
	// Alias keeps the low 31 bits, so that PIDs p and p+2^31 of one cluster
	// share a mapped PID. It exists only to demonstrate that conflation.
	Alias
)

var policies = enum.Table[Policy]{Kind: "policy", Names: []string{"reject", "alias"}, Err: ErrUnknownName}

// Policies lists every policy.
func Policies() []Policy { return policies.Values() }

// ParsePolicy returns the policy spelled s ("reject" or "alias").
func ParsePolicy(s string) (Policy, error) { return policies.Parse(s) }

func (p Policy) String() string { return policies.String(p) }

func (p Policy) MarshalText() ([]byte, error) { return policies.MarshalText(p) }

func (p *Policy) UnmarshalText(b []byte) error { return policies.UnmarshalText(p, b) }

// Fold selects the function that folds a 128-bit cluster ID to a 32-bit
// bitfield region. The zero value is XOR, the design's fold.
type Fold uint8

const (
	XOR Fold = iota // FoldXOR: uint32(msb ^ lsb), the design's fold
	Mix             // FoldMix: a 64-bit mixing fold, for comparison
)

var folds = enum.Table[Fold]{Kind: "fold", Names: []string{"xor", "mix"}, Err: ErrUnknownName}

// Folds lists every fold.
func Folds() []Fold { return folds.Values() }

// ParseFold returns the fold spelled s ("xor" or "mix").
func ParseFold(s string) (Fold, error) { return folds.Parse(s) }

func (f Fold) String() string { return folds.String(f) }

func (f Fold) MarshalText() ([]byte, error) { return folds.MarshalText(f) }

func (f *Fold) UnmarshalText(b []byte) error { return folds.UnmarshalText(f, b) }

// Region folds a cluster ID with f. An out-of-range Fold folds with XOR.
// O(1), no allocation.
func (f Fold) Region(cluster [16]byte) uint32 {
	if f == Mix {
		return FoldMix(cluster)
	}
	return FoldXOR(cluster)
}
