package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
)

// writeSegment writes a .log segment of n batches per producer 0..producers-1
// into dir, as a broker stores them (offsets assigned, CRCs valid).
func writeSegment(t *testing.T, dir string, producers, n int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var seg []byte
	off := int64(0)
	for i := range n {
		for p := range producers {
			recs := []codec.Record{{Value: []byte("value"), OffsetDelta: 0}, {Value: []byte("value2"), OffsetDelta: 1}}
			var err error
			seg, err = codec.AppendBatch(seg, codec.BatchHeader{BaseOffset: off, BaseTimestamp: 1700000000000,
				ProducerID: int64(p), BaseSequence: int32(2 * i)}, recs, codec.CompressionNone)
			if err != nil {
				t.Fatal(err)
			}
			off += 2
		}
	}
	path := filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReplayConflations(t *testing.T) {
	tmp := t.TempDir()
	a := writeSegment(t, filepath.Join(tmp, "a", "t-0"), 5, 4)
	b := writeSegment(t, filepath.Join(tmp, "b", "t-0"), 5, 4)
	var out, errb bytes.Buffer
	code := mainArgs([]string{"replay", "--count", "1", "--min-time", "1ms", "--chunk", "300", a, b}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	text := out.String()
	t.Log(text)
	if !strings.Contains(text, "2 segments, 2 sources, 40 batches") {
		t.Fatalf("header: %s", text)
	}
	// producers, conflated keys, conflated origins, result per strategy.
	want := map[string]string{
		"verbatim":    "5 5 10 ok",
		"negate":      "5 5 10 ok",
		"negate-skip": "5 5 10 ok",
		"bitfield":    "10 0 0 ok",
		"barrier":     "5 5 10 ok",
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		if w, ok := want[f[0]]; ok {
			if got := strings.Join(f[6:10], " "); got != w {
				t.Errorf("%s: got %q, want %q", f[0], got, w)
			}
			delete(want, f[0])
		}
	}
	if len(want) != 0 {
		t.Fatalf("missing rows %v in\n%s", want, text)
	}
}

func TestReplayCorruptSegment(t *testing.T) {
	tmp := t.TempDir()
	a := writeSegment(t, filepath.Join(tmp, "a"), 2, 2)
	data, _ := os.ReadFile(a)
	size := int(codec.Batch(data).BatchLength()) + codec.LogOverhead
	data[2*size+40] ^= 0xff // inside the CRC range of batch 2
	os.WriteFile(a, data, 0o644)
	var out, errb bytes.Buffer
	if code := mainArgs([]string{"replay", a}, &out, &errb); code != 1 {
		t.Fatalf("exit %d", code)
	}
	if want := "corrupt at byte " + itoa(2*size); !strings.Contains(errb.String(), want) {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
}

// TestReplayUnreadableSegment: a directory with no segment or a missing
// file fails with exit 1 and names it, before anything is replayed.
func TestReplayUnreadableSegment(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct{ path, want string }{
		{tmp, "no segment"},
		{filepath.Join(tmp, "missing.log"), "no such file"},
	} {
		var out, errb bytes.Buffer
		if code := mainArgs([]string{"replay", c.path}, &out, &errb); code != 1 ||
			!strings.Contains(errb.String(), c.want) || !strings.Contains(errb.String(), c.path) || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1, nothing, %q and the path", c.path, code, out.String(), errb.String(), c.want)
		}
	}
}

// TestReplayMaxInput: --max-input bounds the batches held and replayed, the
// report says so, and a corrupt batch beyond the bound is still reported.
func TestReplayMaxInput(t *testing.T) {
	tmp := t.TempDir()
	a := writeSegment(t, filepath.Join(tmp, "a"), 2, 5) // 10 batches
	data, _ := os.ReadFile(a)
	size := int(codec.Batch(data).BatchLength()) + codec.LogOverhead
	var out, errb bytes.Buffer
	code := mainArgs([]string{"replay", "--count", "1", "--min-time", "1ms", "--max-input", itoa(3*size + 1), a}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{" 3 batches, ", "replayed the first 3 of 10 batches"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	data[8*size+40] ^= 0xff
	os.WriteFile(a, data, 0o644)
	out.Reset()
	errb.Reset()
	if code := mainArgs([]string{"replay", "--max-input", itoa(size), a}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "corrupt at byte "+itoa(8*size)) {
		t.Fatalf("exit %d, stderr %q: want 1 and the corrupt batch at %d", code, errb.String(), 8*size)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReplayUsage(t *testing.T) {
	for _, args := range [][]string{
		{"replay"},
		{"replay", "--strategy", "nope", "x.log"},
		{"replay", "--crc", "half", "x.log"},
		{"replay", "--count", "0", "x.log"},
		{"replay", "--max-input", "0", "x.log"},
		{"replay", "--chunk", "9223372036854775807", "x.log"},
		{"replay", "--chunk", "1099511627776", "x.log"},
		{"replay", "--max-input", "9223372036854775807", "x.log"},
		{"replay", "--count", "1000000000", "x.log"},
		{"replay", "--min-time", "-1s", "x.log"},
	} {
		var out, errb bytes.Buffer
		if code := mainArgs(args, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if lines := strings.Count(errb.String(), "\n"); lines != 1 || !strings.HasPrefix(errb.String(), "replay: ") {
			t.Errorf("%v: stderr %q, want one line", args, errb.String())
		}
	}
}

func TestReplayUnmappableFails(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "a")
	os.MkdirAll(dir, 0o755)
	seg, _ := codec.AppendBatch(nil, codec.BatchHeader{ProducerID: 1 << 40, BaseSequence: 0, BaseTimestamp: 1},
		[]codec.Record{{Value: []byte("v")}}, codec.CompressionNone)
	path := filepath.Join(dir, "00000000000000000000.log")
	os.WriteFile(path, seg, 0o644)
	var out, errb bytes.Buffer
	code := mainArgs([]string{"replay", "--count", "1", "--min-time", "1ms", "--strategy", "bitfield", path}, &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "UNMAPPABLE_PRODUCER_ID") || !strings.Contains(out.String(), "FAILED") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
}

// TestReplayPartitionDirectory: a directory is a partition's log, its
// segments replayed in base-offset order (not name order of other files),
// one source; its indexes and a .deleted segment are left out.
func TestReplayPartitionDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	first := writeSegment(t, dir, 2, 5) // 10 batches at base 0
	data, _ := os.ReadFile(first)
	// A second segment, base offset 20, whose name sorts after the first.
	var second []byte
	for i := range 3 {
		var err error
		second, err = codec.AppendBatch(second, codec.BatchHeader{BaseOffset: int64(20 + 2*i), BaseTimestamp: 1700000000000,
			ProducerID: 0, BaseSequence: int32(10 + 2*i)}, []codec.Record{{Value: []byte("v")}, {Value: []byte("w"), OffsetDelta: 1}}, codec.CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string][]byte{
		"00000000000000000020.log":         second,
		"00000000000000000000.index":       make([]byte, 8),
		"00000000000000000040.log.deleted": data,
		"leader-epoch-checkpoint":          []byte("0\n0\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths, err := segmentPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{first, filepath.Join(dir, "00000000000000000020.log")}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Fatalf("segments %q, want %q", paths, want)
	}
	var out, errb bytes.Buffer
	if code := mainArgs([]string{"replay", "--count", "1", "--min-time", "0s", "--strategy", "negate", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	for _, w := range []string{"2 segments, 1 sources, 13 batches", "input too small to time: 13 batches"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// TestReplayStrategyList: replay's help names every strategy of
// pid.Strategies, the list --strategy all runs.
func TestReplayStrategyList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := mainArgs([]string{"replay", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, s := range pid.Strategies() {
		if !strings.Contains(errb.String(), s.String()+",") && !strings.Contains(errb.String(), s.String()+")") {
			t.Errorf("replay -h does not name strategy %s:\n%s", s, errb.String())
		}
	}
}
