package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/codec"
)

// indexedLog writes, through appendpath, a closed log of two segments: six
// batches of 2070 bytes at offsets 0, 10, …, 50 with timestamps that go
// down as well as up (segment 0, sealed on roll), then one at offset 60.
func indexedLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p, err := appendpath.Open(appendpath.Config{Dir: dir, SegmentBytes: 6 * 2070})
	if err != nil {
		t.Fatal(err)
	}
	for i, ts := range []int64{1000, 3000, 2000, 5000, 4000, 6000, 7000} {
		b, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: int64(10 * i), BaseTimestamp: ts,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1},
			[]codec.Record{{Value: bytes.Repeat([]byte{'v'}, 2000)}}, codec.CompressionNone)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 2070 {
			t.Fatalf("batch of %d bytes, the expected output assumes 2070", len(b))
		}
		if _, err := p.AppendReplica(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runDumpArgs(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = mainArgs(append([]string{"dump"}, args...), &out, &errOut)
	return code, strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errOut.String(), dir, "DIR")
}

func TestDumpIndexText(t *testing.T) {
	dir := indexedLog(t)
	seg := func(suffix string) string { return filepath.Join(dir, "00000000000000000000"+suffix) }
	code, out, errOut := runDumpArgs(t, dir, "--check", seg(".index"), seg(".timeindex"))
	// Entries by hand: a batch is indexed when more than 4096 bytes lie
	// between it and the last entry (batches 2 and 4, last offsets 20 and
	// 40); the time index holds the largest timestamp so far with the last
	// offset of its batch, plus the roll entry (6000 at offset 50).
	want := `Dumping DIR/00000000000000000000.index
offset: 20 position: 4140
offset: 40 position: 8280
check: 2 entries agree with DIR/00000000000000000000.log
Dumping DIR/00000000000000000000.timeindex
timestamp: 3000 offset: 10
timestamp: 5000 offset: 30
timestamp: 6000 offset: 50
check: 3 entries agree with DIR/00000000000000000000.log
`
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	// The active segment of one batch has empty indexes.
	code, out, _ = runDumpArgs(t, dir, filepath.Join(dir, "00000000000000000051.index"))
	if code != 0 || out != "Dumping DIR/00000000000000000051.index\n" {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestDumpIndexFindings(t *testing.T) {
	dir := indexedLog(t)
	idx := filepath.Join(dir, "00000000000000000000.index")
	tidx := filepath.Join(dir, "00000000000000000000.timeindex")
	good, _ := os.ReadFile(idx)
	goodT, _ := os.ReadFile(tidx)
	write := func(name string, data []byte) {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A position inside a batch: the format is sound, the check finds it.
	bad := bytes.Clone(good)
	binary.BigEndian.PutUint32(bad[12:], 8281)
	write(idx, bad)
	if code, _, _ := runDumpArgs(t, dir, idx); code != 0 {
		t.Fatalf("without --check: exit %d", code)
	}
	code, out, _ := runDumpArgs(t, dir, "--check", idx)
	if code != 1 || !strings.Contains(out, `offset: 40 position: 8281 error: "storage: corrupt index: entry disagrees with the log at entry 1: no batch starts at position 8281"`) ||
		!strings.Contains(out, "check: 1 of 2 entries disagree with DIR/00000000000000000000.log") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// A wrong timestamp.
	badT := bytes.Clone(goodT)
	binary.BigEndian.PutUint64(badT[12:], 5001)
	write(tidx, badT)
	if code, out, _ := runDumpArgs(t, dir, "--check", tidx); code != 1 || !strings.Contains(out, "largest timestamp through offset 30 is 5000") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// A torn entry fails the sanity check, with or without --check; the
	// whole entries before it are still printed.
	write(idx, good[:len(good)-3])
	code, out, _ = runDumpArgs(t, dir, idx)
	if code != 1 || !strings.Contains(out, "offset: 20 position: 4140\nerror: \"storage: corrupt index: size not a multiple of the entry size at entry 1: 13 bytes\"") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	// No .log beside it: a note, not a finding.
	write(idx, good)
	os.Remove(filepath.Join(dir, "00000000000000000000.log"))
	code, out, errOut := runDumpArgs(t, dir, "--check", idx)
	if code != 0 || strings.Contains(out, "check:") || !strings.Contains(errOut, "no 00000000000000000000.log beside it") {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
	// A name without a base offset: offsets from 0, with a warning.
	other := filepath.Join(dir, "copy.index")
	write(other, good)
	if code, out, errOut := runDumpArgs(t, dir, other); code != 0 || !strings.Contains(out, "offset: 20 position: 4140") || !strings.Contains(errOut, "assume base 0") {
		t.Fatalf("exit %d, stderr %q:\n%s", code, errOut, out)
	}
}

func TestDumpIndexJSON(t *testing.T) {
	dir := indexedLog(t)
	code, out, _ := runDumpArgs(t, dir, "--json", "--check", filepath.Join(dir, "00000000000000000000.index"),
		filepath.Join(dir, "00000000000000000000.timeindex"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 7 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	want := []string{
		`{"file":"DIR/00000000000000000000.index","entry":0,"offset":20,"position":4140}`,
		`{"file":"DIR/00000000000000000000.index","entry":1,"offset":40,"position":8280}`,
		`{"file":"DIR/00000000000000000000.index","log":"DIR/00000000000000000000.log","checked":2,"mismatches":0}`,
		`{"file":"DIR/00000000000000000000.timeindex","entry":0,"timestamp":3000,"offset":10}`,
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d\n got %s\nwant %s", i, lines[i], w)
		}
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}

// FuzzDumpIndex: any index and log bytes, never a panic; an invalid verdict
// exactly when a line carries an error or a mismatch count above zero.
func FuzzDumpIndex(f *testing.F) {
	f.Add([]byte{0, 0, 0, 20, 0, 0, 0x10, 0x2c}, []byte{}, false)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0x0b, 0xb8, 0, 0, 0, 10}, []byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, data, log []byte, time bool) {
		name := "00000000000000000007.index"
		if time {
			name = "00000000000000000007.timeindex"
		}
		for _, js := range []bool{false, true} {
			var out bytes.Buffer
			d := dumper{json: js, out: &out}
			invalid := d.indexFile(name, data, log)
			found := strings.Contains(out.String(), `error`) ||
				strings.Contains(out.String(), ` disagree with `) || strings.Contains(out.String(), `"mismatches":`) &&
				!strings.Contains(out.String(), `"mismatches":0`)
			if found != invalid {
				t.Fatalf("invalid=%v but output:\n%s", invalid, out.String())
			}
		}
	})
}
