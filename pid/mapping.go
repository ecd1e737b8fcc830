package pid

import (
	"encoding/binary"
	"errors"

	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Sentinel errors of the mapping functions and the Mapper. The hot paths
// return them bare (no allocation); classify with errors.Is.
var (
	// ErrUnmappable: bitfield under policy Reject met a source PID >= 2^31,
	// which the 31-bit low field cannot hold. The batch must not be appended
	// and the mirror partition moves to FAILED. On the wire it is
	// UNMAPPABLE_PRODUCER_ID (errors.Is matches kafkaerr.UnmappableProducerID).
	ErrUnmappable = kafkaerr.NewReason(kafkaerr.UnmappableProducerID, "pid: producer ID does not fit the bit-field layout (>= 2^31)")
	// ErrReserved: the bit-field arithmetic gave -1 (region 0xFFFFFFFF, low
	// PID 2^31-1), which means "no producer". A Mapper resolves it as a
	// collision with a salt; the pure functions report it.
	ErrReserved = errors.New("pid: mapping would produce -1 (NO_PRODUCER_ID)")
	// ErrNoFreeRegion: the random source gave no salt that leads to a free
	// region within MaxSaltDraws draws (a broken or hostile source).
	ErrNoFreeRegion = errors.New("pid: no free region found for a salt")
)

// Bit-field layout (docs/strategies.md, "bitfield"):
//
//	bit 63      bits 62..31                 bits 30..0
//	  1   |  region (32 bits)          |  source PID, low 31 bits
const (
	LowBits   = 31
	LowMask   = 1<<LowBits - 1 // 0x7FFFFFFF: the largest PID bitfield encodes under Reject
	signBit   = uint64(1) << 63
	minusOne  = -1
	mixConst1 = 0xff51afd7ed558ccd // murmur3 fmix64 constants
	mixConst2 = 0xc4ceb9fe1a85ec53
	golden64  = 0x9e3779b97f4a7c15
)

// MapNegate is the negate strategy: -(p+2) in two's-complement int64 with
// wrap-around, for every p. It is an involution (MapNegate(MapNegate(p)) ==
// p); its fixed points are -1 and MaxInt64 (-(MaxInt64+2) wraps back to
// MaxInt64); MinInt64 ↔ MaxInt64-1 and -2 ↔ 0. O(1), no allocation.
func MapNegate(p int64) int64 { return -(p + 2) }

// MapNegateSkip is the negate-skip strategy: -(p+2) for p >= 0, p itself for
// p < 0. It is idempotent. The wrap sends MaxInt64 to itself and MaxInt64-1
// to MinInt64, both then passed through. O(1), no allocation.
func MapNegateSkip(p int64) int64 {
	if p < 0 {
		return p
	}
	return -(p + 2)
}

// MapBitfield is the bitfield strategy for one PID of a cluster whose
// (possibly salted) region is region: negative p passes through; p < 2^31
// becomes 1|region|p; p >= 2^31 gives ErrUnmappable under Reject and keeps its
// low 31 bits under Alias. A result of -1 is not returned: ErrReserved is. On
// error the first result is p unchanged. O(1), no allocation.
func MapBitfield(region uint32, p int64, policy Policy) (int64, error) {
	if p < 0 {
		return p, nil
	}
	low := p
	if p > LowMask {
		if policy != Alias {
			return p, ErrUnmappable
		}
		low &= LowMask
	}
	m := Compose(region, low)
	if m == minusOne {
		return p, ErrReserved
	}
	return m, nil
}

// Compose builds 1|region|low, keeping the low 31 bits of low, with no other
// checks: it can return -1. O(1).
func Compose(region uint32, low int64) int64 {
	return int64(signBit | uint64(region)<<LowBits | uint64(low)&LowMask)
}

// Unbitfield is the inverse of the layout for the dump tool and the scenario
// oracle: the region field (the salted region when a salt was used) and the
// low 31 bits. ok is false for p >= 0 and for -1, which no mapping produces;
// any other negative value decodes, including a negative PID that merely
// passed through, so the caller decides what the region means. O(1).
func Unbitfield(p int64) (region uint32, low int64, ok bool) {
	if p >= 0 || p == minusOne {
		return 0, 0, false
	}
	return uint32(uint64(p) >> LowBits), p & LowMask, true
}

// FoldXOR is the bitfield strategy's region fold: uint32((msb XOR lsb) & 0xFFFFFFFF) of the
// big-endian 64-bit halves of the cluster UUID (Java
// Uuid.getMostSignificantBits / getLeastSignificantBits). Every pair of IDs
// (hi^d, lo^d) folds to the same region, which is how scenario 09 builds a
// clash. O(1), no allocation.
func FoldXOR(cluster [16]byte) uint32 {
	msb := binary.BigEndian.Uint64(cluster[:8])
	lsb := binary.BigEndian.Uint64(cluster[8:])
	return uint32(msb ^ lsb)
}

// FoldMix is the comparison fold: both halves pass through the murmur3
// 64-bit finalizer, so that structured pairs like (hi^d, lo^d) do not share
// a region; collisions between random IDs are as likely as with FoldXOR
// (2^-32 per pair). O(1), no allocation.
func FoldMix(cluster [16]byte) uint32 {
	msb := binary.BigEndian.Uint64(cluster[:8])
	lsb := binary.BigEndian.Uint64(cluster[8:])
	h := fmix64(msb*golden64 ^ fmix64(lsb))
	return uint32(h ^ h>>32)
}

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= mixConst1
	h ^= h >> 33
	h *= mixConst2
	h ^= h >> 33
	return h
}

// Region is the bitfield region of a cluster: FoldXOR.
func Region(cluster [16]byte) uint32 { return FoldXOR(cluster) }

// Map applies strategy s to p for a cluster whose region is region (used by
// Bitfield only): verbatim and barrier return p, negate MapNegate,
// negate-skip MapNegateSkip, bitfield MapBitfield. It resolves no
// collisions; a Mapper does. O(1), no allocation, no lock.
func (s Strategy) Map(region uint32, p int64, policy Policy) (int64, error) {
	switch s {
	case Negate:
		return MapNegate(p), nil
	case NegateSkip:
		return MapNegateSkip(p), nil
	case Bitfield:
		return MapBitfield(region, p, policy)
	}
	return p, nil
}
