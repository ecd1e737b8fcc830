// Package flamegraph draws pprof profiles as self-contained SVG flame graphs
// (icicle layout: callers on top, callees below, width ∝ samples, a <title>
// tooltip per frame, colour by Go package): one file that opens in a browser
// without a server. Profiles are decoded by github.com/google/pprof/profile.
package flamegraph

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/google/pprof/profile"
)

// Errors. A profile that does not decode, or decodes into dangling
// references, matches ErrCorrupt; one that inflates past the limit is
// ErrTooLarge.
var (
	ErrCorrupt  = errors.New("flamegraph: corrupt profile")
	ErrTooLarge = errors.New("flamegraph: decompressed profile exceeds the limit")
)

// Limits bound decoding.
type Limits struct {
	// MaxDecompressed caps the size of a gzipped profile once inflated.
	MaxDecompressed int64
}

// DefaultLimits allow profiles up to 256 MiB inflated.
var DefaultLimits = Limits{MaxDecompressed: 256 << 20}

// Parse decodes a profile as written by runtime/pprof and go test
// -cpuprofile/-memprofile: gzipped protobuf, or raw protobuf when the gzip
// magic is absent. The gzip stream is inflated here, up to
// lim.MaxDecompressed, and the protobuf handed to profile.ParseUncompressed,
// which inflates nothing itself; the result is checked with CheckValid, so
// every sample, location and line of a returned profile points at a
// location or function of its tables. Empty input is an empty profile. The
// result does not alias data.
func Parse(data []byte, lim Limits) (*profile.Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, lim.MaxDecompressed+1))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
		}
		if int64(len(raw)) > lim.MaxDecompressed {
			return nil, ErrTooLarge
		}
		data = raw
	}
	if len(data) == 0 {
		return &profile.Profile{}, nil
	}
	p, err := profile.ParseUncompressed(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return p, nil
}
