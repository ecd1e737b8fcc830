package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/mirrorpath/mirrorpath/internal/testhex"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
)

func TestParseIndexErrors(t *testing.T) {
	cases := []struct {
		name  string
		time  bool
		src   string
		valid int // entries before the error
		want  error
	}{
		{"offset ok", false, `00000001 00000000  00000005 00001000`, 2, nil},
		{"offset size", false, `00000001 00000000  0000`, 1, ErrIndexSize},
		{"offset negative relative", false, `ffffffff 00000000`, 0, ErrIndexRange},
		{"offset negative position", false, `00000001 80000000`, 0, ErrIndexRange},
		{"offset not increasing", false, `00000005 00000010  00000005 00000020`, 1, ErrIndexOrder},
		{"position not increasing", false, `00000005 00000010  00000006 00000010`, 1, ErrIndexOrder},
		{"time ok", true, `0000000000000000 00000001  0000000000000005 00000001`, 2, nil},
		{"time size", true, `0000000000000001 00000001  00`, 1, ErrIndexSize},
		{"time no timestamp", true, `ffffffffffffffff 00000001`, 0, ErrIndexOrder},
		{"time not increasing", true, `0000000000000009 00000001  0000000000000009 00000002`, 1, ErrIndexOrder},
		{"time offset back", true, `0000000000000009 00000003  000000000000000a 00000002`, 1, ErrIndexOrder},
		{"time negative relative", true, `0000000000000009 80000000`, 0, ErrIndexRange},
	}
	for _, tc := range cases {
		src := testhex.Unhex(t, tc.src)
		var n int
		var err error
		if tc.time {
			var x TimeIndex
			x, err = ParseTimeIndex(src, 100)
			n = x.Len()
		} else {
			var x OffsetIndex
			x, err = ParseOffsetIndex(src, 100)
			n = x.Len()
		}
		if n != tc.valid || !errors.Is(err, tc.want) || (tc.want != nil && !errors.Is(err, ErrCorruptIndex)) {
			t.Errorf("%s: %d entries, %v; want %d, %v", tc.name, n, err, tc.valid, tc.want)
		}
		var ie *IndexError
		if tc.want != nil && (!errors.As(err, &ie) || ie.Entry != tc.valid) {
			t.Errorf("%s: error %v does not say entry %d", tc.name, err, tc.valid)
		}
	}
	x, _ := ParseTimeIndex(testhex.Unhex(t, `0000000000000009 00000003`), 100)
	if e := x.Entry(0); e != (TimestampOffset{9, 103}) {
		t.Errorf("absolute entry %+v", e)
	}
}

func TestVerifyIndexFindsMismatches(t *testing.T) {
	var log []byte
	for i := range 8 {
		log = append(log, testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 2, Value: 1500, TS: int64(1000 - 100*(i%3))}), 50+int64(2*i), 0)...)
	}
	idx, tidx := testlog.RefIndexes(t, log, 50, true)
	x, _ := ParseOffsetIndex(idx, 50)
	tx, _ := ParseTimeIndex(tidx, 50)
	if x.Len() < 2 || tx.Len() < 1 {
		t.Fatalf("%d and %d entries", x.Len(), tx.Len())
	}
	if n := VerifyOffsetIndex(x, log, nil) + VerifyTimeIndex(tx, log, nil); n != 0 {
		t.Fatalf("%d mismatches on a good index", n)
	}
	bad := func(src []byte, off int, delta uint32, time bool) (entries []int) {
		d := bytes.Clone(src)
		binary.BigEndian.PutUint32(d[off:], binary.BigEndian.Uint32(d[off:])+delta)
		report := func(i int, err error) {
			if !errors.Is(err, ErrIndexMismatch) {
				t.Fatalf("%v", err)
			}
			entries = append(entries, i)
		}
		if time {
			tx, err := ParseTimeIndex(d, 50)
			if err != nil {
				t.Fatal(err)
			}
			VerifyTimeIndex(tx, log, report)
		} else {
			x, err := ParseOffsetIndex(d, 50)
			if err != nil {
				t.Fatal(err)
			}
			VerifyOffsetIndex(x, log, report)
		}
		return entries
	}
	last := x.Len() - 1
	for _, tc := range []struct {
		name  string
		got   []int
		wantN int
	}{
		{"offset off by one", bad(idx, 8*last, 1, false), last},
		{"position inside a batch", bad(idx, 8*last+4, 7, false), last},
		{"position past the log", bad(idx, 8*last+4, 1<<20, false), last},
		{"timestamp off", bad(tidx, 4, 1, true), 0},
		{"time offset past the log", bad(tidx, 12*(tx.Len()-1)+8, 1000, true), tx.Len() - 1},
	} {
		if !slices.Equal(tc.got, []int{tc.wantN}) {
			t.Errorf("%s: bad entries %v, want [%d]", tc.name, tc.got, tc.wantN)
		}
	}
}

// ExampleParseOffsetIndex reads a .index file's entries.
func ExampleParseOffsetIndex() {
	src := []byte{0, 0, 0, 20, 0, 0, 0x10, 0x2c, 0, 0, 0, 40, 0, 0, 0x20, 0x58}
	x, err := ParseOffsetIndex(src, 1000) // 00000000000000001000.index
	fmt.Println(x.Len(), err)
	for i := range x.Len() {
		fmt.Printf("%+v\n", x.Entry(i))
	}
	fmt.Printf("%+v\n", x.Lookup(1030))
	// Output:
	// 2 <nil>
	// {Offset:1020 Position:4140}
	// {Offset:1040 Position:8280}
	// {Offset:1020 Position:4140}
}

// TestVerifyIndexAtReadError: a log file shorter than its stated size ends
// the file walk with a read error; the entries it could not reach count as
// bad, and a good index on the whole file has none.
func TestVerifyIndexAtReadError(t *testing.T) {
	var log []byte
	for i := range 8 {
		log = append(log, testlog.WithOffsets(mkBatch(t, bspec{PID: -1, Epoch: -1, Seq: -1, Records: 2, Value: 1500}), 50+int64(2*i), 0)...)
	}
	idx, tidx := testlog.RefIndexes(t, log, 50, true)
	x, _ := ParseOffsetIndex(idx, 50)
	tx, _ := ParseTimeIndex(tidx, 50)
	if n, err := VerifyOffsetIndexAt(x, bytes.NewReader(log), int64(len(log)), nil); n != 0 || err != nil {
		t.Fatalf("good index from the file: %d bad, %v", n, err)
	}
	if n, err := VerifyTimeIndexAt(tx, bytes.NewReader(log), int64(len(log)), nil); n != 0 || err != nil {
		t.Fatalf("good time index from the file: %d bad, %v", n, err)
	}
	short := bytes.NewReader(log[:x.Entry(0).Position+10])
	n, err := VerifyOffsetIndexAt(x, short, int64(len(log)), nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != x.Len() {
		t.Fatalf("short file: %d of %d bad, %v; want all and io.ErrUnexpectedEOF", n, x.Len(), err)
	}
}

// TestIndexIntervalMatches: the index model of internal/testlog writes an
// entry every index.interval.bytes as the log does.
func TestIndexIntervalMatches(t *testing.T) {
	if got := testlog.IndexIntervalBytes; got != IndexIntervalBytes {
		t.Fatalf("testlog's interval %d, the log's %d", got, IndexIntervalBytes)
	}
}
