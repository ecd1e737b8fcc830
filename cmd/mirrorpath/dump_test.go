package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

var updateDump = flag.Bool("update-dump", false, "rewrite testdata/dump/*.golden")

const corpusRoot = "../../corpus"

// barrierSegment is a segment the clients cannot produce: a data batch, an
// ABORT marker, the MIRROR_PID_RESET barrier and a control batch of an
// unknown type. testdata/dump/barrier.log holds these bytes.
func barrierSegment(t *testing.T) []byte {
	var seg []byte
	seg, err := codec.AppendBatch(seg, codec.BatchHeader{BaseTimestamp: 1700000000000, ProducerID: 7,
		BaseSequence: 0, Attributes: codec.AttrTransactional}, []codec.Record{
		{Key: []byte("k"), Value: []byte("v"), Headers: codec.MakeHeaders(codec.Header{Key: []byte("h"), Value: nil})},
		{OffsetDelta: 1, TimestampDelta: 3, Value: []byte{}},
	}, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	marker := codec.Batch(codec.AppendEndTxnMarker(nil, 7, 0, 12, true, 1700000000100))
	marker.SetBaseOffset(2)
	seg = append(seg, marker...)
	barrier := codec.Batch(codec.AppendBarrier(nil, 4, "MkU3OEVBNTcwNTJENDM2Qk", 1700000000200))
	barrier.SetBaseOffset(3)
	seg = append(seg, barrier...)
	unknown, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: 4, Attributes: codec.AttrControl,
		BaseTimestamp: 1700000000300, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
		[]codec.Record{{Key: codec.AppendControlKey(nil, 42), Value: []byte{0, 0}}}, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	return append(seg, unknown...)
}

func TestDumpGolden(t *testing.T) {
	barrierPath := filepath.Join("testdata", "dump", "barrier.log")
	seg := barrierSegment(t)
	if *updateDump {
		if err := os.WriteFile(barrierPath, seg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if onDisk, err := os.ReadFile(barrierPath); err != nil || !bytes.Equal(onDisk, seg) {
		t.Fatalf("%s is stale or missing (run with -update-dump): %v", barrierPath, err)
	}
	malformed, _ := filepath.Glob(filepath.Join(corpusRoot, "malformed", "*.log"))
	if len(malformed) == 0 {
		t.Fatalf("the committed malformed corpus is missing under %s", corpusRoot)
	}
	c := func(name string) string { return filepath.Join(corpusRoot, name, "00000000000000000000.log") }
	cases := []struct {
		name string
		args []string
		exit int
	}{
		{"text-txn", []string{c("kgo-txn-abort-commit"), c("sarama-txn-commit")}, 0},
		{"text-codecs", []string{c("kgo-codec-gzip"), c("kgo-codec-snappy"), c("sarama-codec-snappy"), c("kgo-codec-lz4"), c("kgo-codec-zstd")}, 0},
		{"text-deep-headers", []string{"--deep", c("kgo-headers")}, 0},
		{"text-barrier", []string{"--deep", barrierPath}, 0},
		{"json-barrier", []string{"--json", barrierPath}, 0},
		{"json-deep-nulls", []string{"--json", "--deep", c("kgo-nulls"), c("sarama-headers")}, 0},
		{"json-deep-zstd", []string{"--deep", "--json", c("sarama-codec-zstd")}, 0},
		{"text-malformed", append([]string{}, malformed...), 1},
		{"json-malformed", append([]string{"--json"}, malformed...), 1},
		{"json-cap", []string{"--json", "--max-decompressed", "100", c("kgo-codec-gzip")}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkDumpGolden(t, tc.name, tc.args, tc.exit) })
	}
}

// jsonKeys are the keys a valid data batch line carries, in order.
var jsonKeys = []string{"file", "position", "baseOffset", "lastOffset", "batchLength", "partitionLeaderEpoch",
	"magic", "crc", "crcValid", "attributes", "compression", "timestampType", "isTransactional", "isControl",
	"lastOffsetDelta", "baseTimestamp", "maxTimestamp", "producerId", "producerEpoch", "baseSequence",
	"lastSequence", "recordCount"}

func TestDumpJSONShape(t *testing.T) {
	var out, errOut bytes.Buffer
	path := filepath.Join("testdata", "dump", "barrier.log")
	if code := mainArgs([]string{"dump", "--json", "--deep", path}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, line := range lines {
		dec := json.NewDecoder(strings.NewReader(line))
		var keys []string
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		extra := map[int][]string{
			0: {"records"},
			1: {"controlType", "coordinatorEpoch", "records"},
			2: {"controlType", "sourceClusterId", "records"},
			3: {"controlType", "records"},
		}[i]
		want := append(append([]string{}, jsonKeys...), extra...)
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Errorf("line %d keys\n got %v\nwant %v", i, keys, want)
		}
	}
	var m map[string]any
	json.Unmarshal([]byte(lines[2]), &m)
	if m["controlType"] != "MIRROR_PID_RESET" || m["sourceClusterId"] != "MkU3OEVBNTcwNTJENDM2Qk" || m["crc"].(float64) < 0 {
		t.Errorf("barrier line %v", m)
	}
	json.Unmarshal([]byte(lines[3]), &m)
	if m["controlType"] != "UNKNOWN(42)" {
		t.Errorf("unknown control type: %v", m["controlType"])
	}
}

func TestDumpUsage(t *testing.T) {
	for _, args := range [][]string{{"dump"}, {"dump", "--bogus", "x"}, {"dump", "--max-decompressed", "-1", "x"}, {"dump", "--max-batch", "60", "x"}} {
		var out, errOut bytes.Buffer
		if code := mainArgs(args, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	var out, errOut bytes.Buffer
	if code := mainArgs([]string{"dump", filepath.Join(t.TempDir(), "missing.log")}, &out, &errOut); code != 1 {
		t.Errorf("missing file: exit %d, want 1", code)
	}
	out.Reset()
	errOut.Reset()
	if code := mainArgs([]string{"dump", t.TempDir()}, &out, &errOut); code != 1 || out.Len() != 0 ||
		!strings.Contains(errOut.String(), "is a directory") {
		t.Errorf("a directory: exit %d, stdout %q, stderr %q; want 1, nothing, \"is a directory\"", code, out.String(), errOut.String())
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	os.WriteFile(empty, nil, 0o644)
	if code := mainArgs([]string{"dump", "--json", empty}, &out, &errOut); code != 0 {
		t.Errorf("empty file: exit %d, want 0", code)
	}
}

// dumpFuzzMax bounds a FuzzDump input to a few batches. The dumper depends
// on a batch's size only through its framing and decompression, both reached
// below this; the bound keeps every execution, and every step of the
// fuzzer's minimization of a new input, cheap.
const dumpFuzzMax = 8 << 10

// dumpFuzzLimit is the decompression cap under FuzzDump: above the 64 KiB
// LZ4 block and 32 KiB xerial snappy chunk the codec writes, so multi-block
// streams decode, and small enough that a compressible input at the cap
// costs a few milliseconds to print twice.
const dumpFuzzLimit = 256 << 10

// dumpSeeds are FuzzDump's seeds, one thing each: from every corpus segment
// its first batch of each kind (compression, control, transactional),
// each malformed segment (one defect each, all small), each batch of
// testdata/dump/barrier.log, and per codec a compressible batch whose
// records span more than one LZ4 block and snappy chunk.
func dumpSeeds(t testing.TB) [][]byte {
	var out [][]byte
	malformed, _ := filepath.Glob(filepath.Join(corpusRoot, "malformed", "*.log"))
	for _, p := range malformed {
		if b, err := os.ReadFile(p); err == nil && len(b) <= dumpFuzzMax {
			out = append(out, b)
		}
	}
	type kind struct {
		c        codec.Compression
		ctl, txn bool
	}
	segs, _ := filepath.Glob(filepath.Join(corpusRoot, "*", "*.log"))
	for _, p := range segs {
		if filepath.Base(filepath.Dir(p)) == "malformed" {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		seen := map[kind]bool{}
		for rest := data; len(rest) > 0; {
			b, r, err := codec.Next(rest)
			if err != nil {
				break
			}
			rest = r
			k := kind{b.Compression(), b.IsControl(), b.Attributes().Transactional()}
			if !seen[k] && len(b) <= dumpFuzzMax {
				seen[k] = true
				out = append(out, bytes.Clone(b))
			}
		}
	}
	recs := make([]codec.Record, 24) // 96 KiB
	for i := range recs {
		recs[i] = codec.Record{OffsetDelta: int32(i), Key: []byte("k"),
			Value: bytes.Repeat([]byte{'a' + byte(i%26)}, 4<<10)}
	}
	h := codec.BatchHeader{BaseTimestamp: 1700000000000, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	for _, c := range []codec.Compression{codec.CompressionGzip, codec.CompressionSnappy, codec.CompressionLZ4,
		codec.CompressionZstd} {
		b, err := codec.AppendBatch(nil, h, recs, c)
		if err != nil || len(b) > dumpFuzzMax {
			t.Fatalf("%v: a multi-block seed of %d bytes does not fit: %v", c, len(b), err)
		}
		out = append(out, b)
	}
	// The batches the clients cannot produce, and those --strict flags, one
	// seed each.
	for _, name := range []string{"barrier.log", "strict.log"} {
		file, err := os.ReadFile(filepath.Join("testdata", "dump", name))
		if err != nil {
			t.Fatal(err)
		}
		for rest := file; len(rest) > 0; {
			b, r, err := codec.Next(rest)
			if err != nil {
				t.Fatalf("testdata/dump/%s: %v", name, err)
			}
			out = append(out, bytes.Clone(b))
			rest = r
		}
	}
	return out
}

// FuzzDump: any file contents, never a panic; an invalid verdict for every
// error line.
func FuzzDump(f *testing.F) {
	for _, s := range dumpSeeds(f) {
		f.Add(s)
	}
	var out bytes.Buffer
	var buf []byte
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > dumpFuzzMax {
			data = data[:dumpFuzzMax]
		}
		for _, mode := range []struct{ js, strict bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			js := mode.js
			out.Reset()
			d := dumper{deep: true, json: js, strict: mode.strict, limit: dumpFuzzLimit, out: &out, buf: buf}
			invalid, err := d.file("fuzz.log", bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			buf = d.buf
			hasErr := false
			for rest := out.Bytes(); len(rest) > 0; {
				line, r, _ := bytes.Cut(rest, []byte("\n"))
				rest = r
				if js && (bytes.Contains(line, []byte(`"error":`)) || bytes.Contains(line, []byte(`"severity":"violation"`))) ||
					!js && bytes.HasPrefix(line, []byte("position: ")) && bytes.Contains(line, []byte(` error: "`)) ||
					!js && bytes.HasPrefix(line, []byte("! position: ")) && bytes.Contains(line, []byte(" violation: ")) {
					hasErr = true
				}
			}
			if hasErr != invalid {
				t.Fatalf("strict=%v: invalid=%v but output:\n%s", mode.strict, invalid, out.String())
			}
		}
	})
}

// checkDumpGolden runs `mirrorpath dump ARGS`, wants exit status exit, and
// compares stdout plus the exit line with testdata/dump/NAME.golden
// (rewritten under -update-dump).
func checkDumpGolden(t *testing.T, name string, args []string, exit int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := mainArgs(append([]string{"dump"}, args...), &out, &errOut)
	if code != exit {
		t.Fatalf("exit %d, want %d; stderr %s", code, exit, errOut.String())
	}
	got := out.String() + "exit: " + strconv.Itoa(code) + "\n"
	golden := filepath.Join("testdata", "dump", name+".golden")
	if *updateDump {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-dump)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update-dump to accept):\n%s", golden, got)
	}
}
