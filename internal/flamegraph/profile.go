// Package flamegraph decodes pprof profiles and draws them as self-contained
// SVG flame graphs (icicle layout: callers on top, callees below, width ∝
// samples, a <title> tooltip per frame, colour by Go package).
//
// Design note. pprof's profile.proto is small; this package decodes the
// subset a flame graph needs without the github.com/google/pprof module:
//
//	Profile   1 sample_type: ValueType   2 sample: Sample   4 location: Location
//	          5 function: Function       6 string_table: string
//	          9 time_nanos  10 duration_nanos  11 period_type: ValueType
//	          12 period  14 default_sample_type (string index)
//	ValueType 1 type, 2 unit (string indices)
//	Sample    1 location_id (packed or not, leaf first)  2 value (packed or not)
//	Location  1 id  4 line: Line (inlined callees first, the caller last)
//	Line      1 function_id  2 line
//	Function  1 id  2 name  3 system_name  4 filename (string indices)  5 start_line
//
// Every other field (mappings, labels, comments) is skipped by wire type.
// The decoder never sizes an allocation from a length or count read from the
// input: every slice grows by append, one element per field consumed, so
// memory is bounded by the (decompressed) input length, and decompression
// stops at Limits.MaxDecompressed. Malformed input returns an error matching
// ErrCorrupt; it never panics.
package flamegraph

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// Errors. All decoding errors match ErrCorrupt except ErrTooLarge.
var (
	ErrCorrupt   = errors.New("flamegraph: corrupt profile")
	ErrTruncated = fmt.Errorf("%w: truncated", ErrCorrupt)
	ErrWireType  = fmt.Errorf("%w: bad wire type", ErrCorrupt)
	ErrVarint    = fmt.Errorf("%w: varint overflow", ErrCorrupt)
	ErrReference = fmt.Errorf("%w: dangling reference", ErrCorrupt)
	ErrTooLarge  = errors.New("flamegraph: decompressed profile exceeds the limit")
)

// ValueType names one sample value, e.g. {cpu nanoseconds} or {alloc_space bytes}.
type ValueType struct{ Type, Unit string }

// Sample is one stack with its values (parallel to Profile.SampleTypes).
type Sample struct {
	Locations []*Location // leaf first
	Values    []int64
}

// Location is one program counter; Lines holds the inlined frames at it,
// the innermost callee first and the physical caller last.
type Location struct {
	ID    uint64
	Lines []Line
}

// Line is one frame of a location.
type Line struct {
	Function *Function
	Line     int64
}

// Function is a symbol.
type Function struct {
	ID                 uint64
	Name, SystemName   string
	Filename           string
	StartLine          int64
	nameX, sysX, fileX int64
}

// Profile is a decoded profile. It does not alias the input.
type Profile struct {
	SampleTypes       []ValueType
	DefaultSampleType string
	Samples           []Sample
	Locations         []*Location
	Functions         []*Function
	PeriodType        ValueType
	Period            int64
	TimeNanos         int64
	DurationNanos     int64
}

// Limits bound decoding.
type Limits struct {
	// MaxDecompressed caps the size of a gzipped profile once inflated.
	MaxDecompressed int64
}

// DefaultLimits allow profiles up to 256 MiB inflated.
var DefaultLimits = Limits{MaxDecompressed: 256 << 20}

// Parse decodes a profile as written by runtime/pprof and go test
// -cpuprofile/-memprofile: gzipped protobuf, or raw protobuf when the gzip
// magic is absent. O(len(data)) time and memory.
func Parse(data []byte, lim Limits) (*Profile, error) {
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
	return decodeProfile(data)
}

// rawSample, rawLocation and rawValueType hold indices until the string
// table and the functions are known (they may come last in the message).
type rawSample struct {
	locIDs []uint64
	values []int64
}
type rawLine struct {
	funcID uint64
	line   int64
}
type rawLocation struct {
	id    uint64
	lines []rawLine
}
type rawValueType struct{ typ, unit int64 }

func decodeProfile(b []byte) (*Profile, error) {
	var (
		strs        []string
		sampleTypes []rawValueType
		samples     []rawSample
		locs        []rawLocation
		funcs       []*Function
		periodType  rawValueType
		defaultType int64
		p           = &Profile{}
	)
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return nil, err
		}
		switch {
		case field == 1 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			vt, err := decodeValueType(m)
			if err != nil {
				return nil, err
			}
			sampleTypes = append(sampleTypes, vt)
		case field == 2 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			s, err := decodeSample(m)
			if err != nil {
				return nil, err
			}
			samples = append(samples, s)
		case field == 4 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			l, err := decodeLocation(m)
			if err != nil {
				return nil, err
			}
			locs = append(locs, l)
		case field == 5 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			f, err := decodeFunction(m)
			if err != nil {
				return nil, err
			}
			funcs = append(funcs, f)
		case field == 6 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			strs = append(strs, string(m))
		case field == 9 && wt == wireVarint:
			v, err := d.varint()
			p.TimeNanos = int64(v)
			if err != nil {
				return nil, err
			}
		case field == 10 && wt == wireVarint:
			v, err := d.varint()
			p.DurationNanos = int64(v)
			if err != nil {
				return nil, err
			}
		case field == 11 && wt == wireBytes:
			m, err := d.bytes()
			if err != nil {
				return nil, err
			}
			if periodType, err = decodeValueType(m); err != nil {
				return nil, err
			}
		case field == 12 && wt == wireVarint:
			v, err := d.varint()
			p.Period = int64(v)
			if err != nil {
				return nil, err
			}
		case field == 14 && wt == wireVarint:
			v, err := d.varint()
			defaultType = int64(v)
			if err != nil {
				return nil, err
			}
		default:
			if err := d.skip(wt); err != nil {
				return nil, err
			}
		}
	}

	str := func(i int64) (string, error) {
		if i < 0 || i >= int64(len(strs)) {
			return "", fmt.Errorf("%w: string index %d of %d", ErrReference, i, len(strs))
		}
		return strs[i], nil
	}
	vt := func(r rawValueType) (ValueType, error) {
		t, err := str(r.typ)
		if err != nil {
			return ValueType{}, err
		}
		u, err := str(r.unit)
		return ValueType{t, u}, err
	}
	var err error
	for _, r := range sampleTypes {
		v, err := vt(r)
		if err != nil {
			return nil, err
		}
		p.SampleTypes = append(p.SampleTypes, v)
	}
	if len(strs) > 0 { // an empty table only in an empty profile
		if p.PeriodType, err = vt(periodType); err != nil {
			return nil, err
		}
		if p.DefaultSampleType, err = str(defaultType); err != nil {
			return nil, err
		}
	}
	funcByID := make(map[uint64]*Function, len(funcs))
	for _, f := range funcs {
		if f.Name, err = str(f.nameX); err != nil {
			return nil, err
		}
		if f.SystemName, err = str(f.sysX); err != nil {
			return nil, err
		}
		if f.Filename, err = str(f.fileX); err != nil {
			return nil, err
		}
		funcByID[f.ID] = f
	}
	p.Functions = funcs
	locByID := make(map[uint64]*Location, len(locs))
	for _, r := range locs {
		l := &Location{ID: r.id}
		for _, ln := range r.lines {
			f, ok := funcByID[ln.funcID]
			if !ok {
				return nil, fmt.Errorf("%w: location %d names function %d", ErrReference, r.id, ln.funcID)
			}
			l.Lines = append(l.Lines, Line{Function: f, Line: ln.line})
		}
		locByID[l.ID] = l
		p.Locations = append(p.Locations, l)
	}
	for _, r := range samples {
		if len(r.values) != len(p.SampleTypes) {
			return nil, fmt.Errorf("%w: sample has %d values for %d sample types", ErrCorrupt, len(r.values), len(p.SampleTypes))
		}
		s := Sample{Values: r.values}
		for _, id := range r.locIDs {
			l, ok := locByID[id]
			if !ok {
				return nil, fmt.Errorf("%w: sample names location %d", ErrReference, id)
			}
			s.Locations = append(s.Locations, l)
		}
		p.Samples = append(p.Samples, s)
	}
	return p, nil
}

func decodeValueType(b []byte) (rawValueType, error) {
	var vt rawValueType
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return vt, err
		}
		switch {
		case field == 1 && wt == wireVarint:
			v, err := d.varint()
			vt.typ = int64(v)
			if err != nil {
				return vt, err
			}
		case field == 2 && wt == wireVarint:
			v, err := d.varint()
			vt.unit = int64(v)
			if err != nil {
				return vt, err
			}
		default:
			if err := d.skip(wt); err != nil {
				return vt, err
			}
		}
	}
	return vt, nil
}

func decodeSample(b []byte) (rawSample, error) {
	var s rawSample
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return s, err
		}
		switch {
		case field == 1 && (wt == wireVarint || wt == wireBytes):
			err = d.repeated(wt, func(v uint64) { s.locIDs = append(s.locIDs, v) })
		case field == 2 && (wt == wireVarint || wt == wireBytes):
			err = d.repeated(wt, func(v uint64) { s.values = append(s.values, int64(v)) })
		default:
			err = d.skip(wt)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

func decodeLocation(b []byte) (rawLocation, error) {
	var l rawLocation
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return l, err
		}
		switch {
		case field == 1 && wt == wireVarint:
			l.id, err = d.varint()
		case field == 4 && wt == wireBytes:
			var m []byte
			if m, err = d.bytes(); err == nil {
				var ln rawLine
				ln, err = decodeLine(m)
				l.lines = append(l.lines, ln)
			}
		default:
			err = d.skip(wt)
		}
		if err != nil {
			return l, err
		}
	}
	return l, nil
}

func decodeLine(b []byte) (rawLine, error) {
	var ln rawLine
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return ln, err
		}
		switch {
		case field == 1 && wt == wireVarint:
			ln.funcID, err = d.varint()
		case field == 2 && wt == wireVarint:
			var v uint64
			v, err = d.varint()
			ln.line = int64(v)
		default:
			err = d.skip(wt)
		}
		if err != nil {
			return ln, err
		}
	}
	return ln, nil
}

func decodeFunction(b []byte) (*Function, error) {
	f := &Function{}
	d := decoder{b: b}
	for !d.done() {
		field, wt, err := d.key()
		if err != nil {
			return nil, err
		}
		var v uint64
		if wt == wireVarint && field >= 1 && field <= 5 {
			if v, err = d.varint(); err != nil {
				return nil, err
			}
			switch field {
			case 1:
				f.ID = v
			case 2:
				f.nameX = int64(v)
			case 3:
				f.sysX = int64(v)
			case 4:
				f.fileX = int64(v)
			case 5:
				f.StartLine = int64(v)
			}
			continue
		}
		if err := d.skip(wt); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// decoder reads protobuf wire format from b.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) done() bool { return d.pos >= len(d.b) }

func (d *decoder) varint() (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if d.pos >= len(d.b) {
			return 0, fmt.Errorf("%w: varint at byte %d", ErrTruncated, d.pos)
		}
		c := d.b[d.pos]
		d.pos++
		if shift == 63 && c > 1 {
			return 0, fmt.Errorf("%w at byte %d", ErrVarint, d.pos-1)
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
}

func (d *decoder) key() (field uint64, wt int, err error) {
	k, err := d.varint()
	if err != nil {
		return 0, 0, err
	}
	if k>>3 == 0 {
		return 0, 0, fmt.Errorf("%w: field number 0 at byte %d", ErrCorrupt, d.pos)
	}
	return k >> 3, int(k & 7), nil
}

func (d *decoder) bytes() ([]byte, error) {
	n, err := d.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.pos) {
		return nil, fmt.Errorf("%w: %d-byte field at byte %d, %d left", ErrTruncated, n, d.pos, len(d.b)-d.pos)
	}
	m := d.b[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return m, nil
}

// repeated reads one unpacked varint (wt 0) or a packed run (wt 2).
func (d *decoder) repeated(wt int, add func(uint64)) error {
	if wt == wireVarint {
		v, err := d.varint()
		if err == nil {
			add(v)
		}
		return err
	}
	m, err := d.bytes()
	if err != nil {
		return err
	}
	pd := decoder{b: m}
	for !pd.done() {
		v, err := pd.varint()
		if err != nil {
			return err
		}
		add(v)
	}
	return nil
}

func (d *decoder) skip(wt int) error {
	var n int
	switch wt {
	case wireVarint:
		_, err := d.varint()
		return err
	case wireBytes:
		_, err := d.bytes()
		return err
	case wireFixed64:
		n = 8
	case wireFixed32:
		n = 4
	default:
		return fmt.Errorf("%w %d at byte %d", ErrWireType, wt, d.pos)
	}
	if len(d.b)-d.pos < n {
		return fmt.Errorf("%w: fixed%d at byte %d", ErrTruncated, 8*n, d.pos)
	}
	d.pos += n
	return nil
}
