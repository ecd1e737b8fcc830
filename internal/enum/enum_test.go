package enum

import (
	"errors"
	"flag"
	"io"
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
