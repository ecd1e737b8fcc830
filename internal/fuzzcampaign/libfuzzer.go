package fuzzcampaign

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrUnencodable marks a seed that the chosen libFuzzer harness cannot be
// given: no input would make it call the fuzz function with these values.
var ErrUnencodable = errors.New("fuzzcampaign: seed has no libFuzzer encoding")

// Encoding says how a libFuzzer build of a native Go fuzz target turns its
// raw input bytes into the fuzz function's arguments. OSS-Fuzz and
// ClusterFuzzLite seed a fuzzer from <fuzzer>_seed_corpus.zip, whose entries
// are such raw inputs; they ignore f.Add and never read testdata/fuzz, so
// the seeds must be encoded the way the harness decodes them.
type Encoding string

const (
	// GoFuzzHeaders is the harness of OSS-Fuzz's compile_native_go_fuzzer
	// (github.com/AdamKorcz/go-118-fuzz-build/testing, which decodes with
	// go-fuzz-headers' ConsumeFuzzer), used by .clusterfuzzlite/build.sh.
	// Arguments are read in order: []byte and string as a 4-byte big-endian
	// length and the bytes; int, int64, uint, uint64 as 8 bytes, int16 and
	// uint16 as 2, each followed by a byte whose parity picks the byte
	// order (odd: big-endian); int32, uint32 as 4 big-endian bytes; int8,
	// uint8 as 1; float32/float64 as their bits like uint32/uint64 plus the
	// order byte; bool as one byte, even for true.
	GoFuzzHeaders Encoding = "go-fuzz-headers"
	// V2 is the harness of compile_native_go_fuzzer_v2 (go-118-fuzz-build's
	// input.Source): the fixed-size arguments first, in order, big-endian
	// (bool: one byte, odd for true); then one weight byte per []byte or
	// string argument; then their bytes, each but the last taking
	// floor(left*weight/sum(weights)) of the remaining bytes and the last
	// the rest.
	V2 Encoding = "v2"
)

// encodings lists the supported encodings, default first.
var encodings = []Encoding{GoFuzzHeaders, V2}

// EncodeLibFuzzer returns the raw libFuzzer input that makes a harness of
// encoding enc call the fuzz function with vals, or an error matching
// ErrUnencodable.
func EncodeLibFuzzer(vals []any, enc Encoding) ([]byte, error) {
	switch enc {
	case GoFuzzHeaders:
		return encodeConsumer(vals)
	case V2:
		return encodeV2(vals)
	}
	return nil, fmt.Errorf("fuzzcampaign: unknown libFuzzer encoding %q (want one of %v)", enc, encodings)
}

// fixedBytes is the big-endian encoding of a fixed-size value, and ok
// false for []byte and string.
func fixedBytes(v any) (b []byte, ok bool) {
	var u uint64
	size := 0
	switch x := v.(type) {
	case int:
		u, size = uint64(x), 8
	case int64:
		u, size = uint64(x), 8
	case uint:
		u, size = uint64(x), 8
	case uint64:
		u, size = x, 8
	case int32:
		u, size = uint64(uint32(x)), 4
	case uint32:
		u, size = uint64(x), 4
	case int16:
		u, size = uint64(uint16(x)), 2
	case uint16:
		u, size = uint64(x), 2
	case int8:
		u, size = uint64(uint8(x)), 1
	case uint8:
		u, size = uint64(x), 1
	case float32:
		u, size = uint64(math.Float32bits(x)), 4
	case float64:
		u, size = math.Float64bits(x), 8
	default:
		return nil, false
	}
	b = make([]byte, 8)
	binary.BigEndian.PutUint64(b, u)
	return b[8-size:], true
}

func encodeConsumer(vals []any) ([]byte, error) {
	// Each value's bytes; a []byte's length field depends on how many bytes
	// follow it, so the pieces are laid out first and joined at the end.
	pieces := make([][]byte, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case []byte, string:
			continue // below, once the bytes after it are known
		case bool:
			if x {
				pieces[i] = []byte{0}
			} else {
				pieces[i] = []byte{1}
			}
		default:
			b, ok := fixedBytes(v)
			if !ok {
				return nil, fmt.Errorf("%w: %T is not a fuzz argument type", ErrUnencodable, v)
			}
			switch v.(type) {
			case int, int64, uint, uint64, int16, uint16, float32, float64:
				b = append(b, 1) // odd: big-endian
			}
			pieces[i] = b
		}
	}
	after := 0 // bytes after the current position, filled from the end
	for i := len(vals) - 1; i >= 0; i-- {
		switch x := vals[i].(type) {
		case []byte:
			// GetBytes takes length%left bytes of the left ones (all of
			// them when length == left), and 30 for length 0; with nothing
			// left it fails and the function is not called.
			n, left := len(x), len(x)+after
			var l uint64
			switch {
			case left == 0:
				return nil, fmt.Errorf("%w: an empty []byte as the last argument stops the harness before the call", ErrUnencodable)
			case n == 0:
				l = 2 * uint64(left) // a non-zero multiple of left, not left itself
			default:
				l = uint64(n)
			}
			if l > math.MaxUint32 {
				return nil, fmt.Errorf("%w: %d bytes overflow the 4-byte length", ErrUnencodable, n)
			}
			pieces[i] = binary.BigEndian.AppendUint32(nil, uint32(l))
			pieces[i] = append(pieces[i], x...)
		case string:
			// GetString needs at least one byte after the length field.
			if len(x)+after == 0 {
				return nil, fmt.Errorf("%w: an empty string as the last argument stops the harness before the call", ErrUnencodable)
			}
			if uint64(len(x)) > math.MaxUint32 {
				return nil, fmt.Errorf("%w: %d bytes overflow the 4-byte length", ErrUnencodable, len(x))
			}
			pieces[i] = binary.BigEndian.AppendUint32(nil, uint32(len(x)))
			pieces[i] = append(pieces[i], x...)
		}
		after += len(pieces[i])
	}
	var out []byte
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out, nil
}

func encodeV2(vals []any) ([]byte, error) {
	var fixed []byte
	var dyn [][]byte
	for _, v := range vals {
		switch x := v.(type) {
		case []byte:
			dyn = append(dyn, x)
		case string:
			dyn = append(dyn, []byte(x))
		case bool:
			if x {
				fixed = append(fixed, 1)
			} else {
				fixed = append(fixed, 0)
			}
		default:
			b, ok := fixedBytes(v)
			if !ok {
				return nil, fmt.Errorf("%w: %T is not a fuzz argument type", ErrUnencodable, v)
			}
			fixed = append(fixed, b...)
		}
	}
	w, err := v2Weights(dyn)
	if err != nil {
		return nil, err
	}
	out := append(fixed, w...)
	for _, d := range dyn {
		out = append(out, d...)
	}
	return out, nil
}

// v2Weights finds weight bytes w such that, with T the total length and S
// the sum of the weights, floor(T*w[i]/S) == len(dyn[i]) for every piece but
// the last (which takes what is left). It tries each S from 1 up: for a
// given S, w[i] must lie in [len*S/T, (len+1)*S/T).
func v2Weights(dyn [][]byte) ([]byte, error) {
	n := len(dyn)
	if n <= 1 {
		return make([]byte, n), nil // the only piece takes everything
	}
	total := 0
	for _, d := range dyn {
		total += len(d)
	}
	if total == 0 {
		return make([]byte, n), nil // all empty: any split of nothing
	}
	for s := 1; s <= 255*n; s++ {
		w := make([]byte, n)
		sum, ok := 0, true
		for i := 0; i < n-1 && ok; i++ {
			l := len(dyn[i])
			lo := (l*s + total - 1) / total // ceil(l*s/total)
			if lo > 255 || total*lo/s != l {
				ok = false
				break
			}
			w[i] = byte(lo)
			sum += lo
		}
		last := s - sum
		if ok && last >= 0 && last <= 255 {
			w[n-1] = byte(last)
			return w, nil
		}
	}
	return nil, fmt.Errorf("%w: no weight bytes split %d bytes into the lengths of %d []byte/string arguments", ErrUnencodable, total, n)
}
