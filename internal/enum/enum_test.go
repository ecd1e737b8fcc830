package enum

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

type color uint8

var errUnknown = errors.New("test: unknown name")

var colors = Table[color]{Kind: "color", Names: []string{"red", "green", "blue"}, Err: errUnknown}

func (c color) String() string                { return colors.String(c) }
func (c color) MarshalText() ([]byte, error)  { return colors.MarshalText(c) }
func (c *color) UnmarshalText(b []byte) error { return colors.UnmarshalText(c, b) }

// Every value's name parses back to it, through Parse, UnmarshalText and a
// flag.TextVar; Values lists them in order.
func TestRoundTrip(t *testing.T) {
	vs := colors.Values()
	if len(vs) != 3 || vs[0] != 0 || vs[2] != 2 {
		t.Fatalf("Values() = %v", vs)
	}
	for _, v := range vs {
		b, err := v.MarshalText()
		if err != nil || string(b) != colors.Names[v] || v.String() != colors.Names[v] {
			t.Errorf("%d: MarshalText %q %v, String %q", v, b, err, v)
		}
		var u color
		if err := u.UnmarshalText(b); err != nil || u != v {
			t.Errorf("UnmarshalText(%q) = %v, %v", b, u, err)
		}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f color
		fs.TextVar(&f, "color", color(0), "")
		if err := fs.Parse([]string{"-color", string(b)}); err != nil || f != v {
			t.Errorf("-color %s: %v, %v", b, f, err)
		}
	}
}

// A name not in the list is refused with the table's sentinel and leaves
// the value as it was; a value out of range prints as kind(N) and does not
// marshal.
func TestUnknown(t *testing.T) {
	c := color(1)
	if err := c.UnmarshalText([]byte("purple")); !errors.Is(err, errUnknown) || c != 1 {
		t.Errorf("UnmarshalText(purple) = %v, value %v", err, c)
	}
	if _, err := colors.Parse("Red"); !errors.Is(err, errUnknown) {
		t.Errorf("Parse(Red) = %v: names are case-sensitive", err)
	}
	if s := color(7).String(); s != "color(7)" {
		t.Errorf("String(7) = %q", s)
	}
	if _, err := color(7).MarshalText(); !errors.Is(err, errUnknown) {
		t.Errorf("MarshalText(7) = %v", err)
	}
}

type level int8

var levels = Table[level]{Kind: "level", First: -1, Unknown: "UNKNOWN", Names: []string{"none", "low", "high"},
	Err: errUnknown}

// A table whose names start at First (a signed wire field, -1 for "none")
// indexes them from there; Unknown spells the values out of range, below
// First as above the last.
func TestFirstAndUnknown(t *testing.T) {
	if vs := levels.Values(); len(vs) != 3 || vs[0] != -1 || vs[2] != 1 {
		t.Fatalf("Values() = %v", vs)
	}
	for v, name := range map[level]string{-1: "none", 0: "low", 1: "high", -2: "UNKNOWN(-2)", 2: "UNKNOWN(2)"} {
		if s := levels.String(v); s != name || levels.Valid(v) != !strings.HasPrefix(name, "UNKNOWN") {
			t.Errorf("String(%d) = %q (valid %v), want %q", v, s, levels.Valid(v), name)
		}
	}
	for _, name := range []string{"none", "low", "high"} {
		v, err := levels.Parse(name)
		if err != nil || levels.String(v) != name {
			t.Errorf("Parse(%q) = %d, %v", name, v, err)
		}
	}
	if _, err := levels.MarshalText(-2); !errors.Is(err, errUnknown) {
		t.Errorf("MarshalText(-2) = %v", err)
	}
}

// String of a named value does not allocate: it costs an index into the
// list.
func TestStringAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = levels.String(1); _ = colors.String(2) }); n != 0 {
		t.Errorf("String allocates %v times", n)
	}
}
