package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
)

// stateFiles writes a .txnindex of two entries and a snapshot of two
// producers (one with an open transaction) into a temporary directory.
func stateFiles(t *testing.T) (dir string) {
	t.Helper()
	dir = t.TempDir()
	var idx []byte
	idx = storage.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 3}.AppendTo(idx)
	idx = storage.AbortedTxn{ProducerID: 8, FirstOffset: 10, LastOffset: 12, LastStableOffset: 13}.AppendTo(idx)
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.txnindex"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	s := psm.NewStore(psm.Options{})
	a := s.Begin(0, psm.Client)
	b := &psm.Batch{ProducerID: 5, ProducerEpoch: 2, BaseSequence: 0, LastOffsetDelta: 3, RecordsCount: 4,
		BaseOffset: 100, MaxTimestamp: 1700000000000}
	if _, err := a.Add(b); err != nil {
		t.Fatal(err)
	}
	*b = psm.Batch{ProducerID: 6, ProducerEpoch: 0, BaseSequence: 0, LastOffsetDelta: 0, RecordsCount: 1,
		BaseOffset: 104, MaxTimestamp: 1700000000500, Transactional: true}
	if _, err := a.Add(b); err != nil {
		t.Fatal(err)
	}
	a.Commit()
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000105.snapshot"), s.AppendSnapshot(nil, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDumpTxnIndexAndSnapshotText(t *testing.T) {
	dir := stateFiles(t)
	code, out, errOut := runDumpArgs(t, dir, filepath.Join(dir, "00000000000000000000.txnindex"),
		filepath.Join(dir, "00000000000000000105.snapshot"))
	want := `Dumping DIR/00000000000000000000.txnindex
version: 0 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 3
version: 0 producerId: 8 firstOffset: 10 lastOffset: 12 lastStableOffset: 13
Dumping DIR/00000000000000000105.snapshot
producerId: 5 producerEpoch: 2 coordinatorEpoch: -1 currentTxnFirstOffset: -1 lastTimestamp: 1700000000000 firstSequence: 0 lastSequence: 3 lastOffset: 103 offsetDelta: 3 timestamp: 1700000000000
producerId: 6 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: 104 lastTimestamp: 1700000000500 firstSequence: 0 lastSequence: 0 lastOffset: 104 offsetDelta: 0 timestamp: 1700000000500
`
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}

func TestDumpTxnIndexAndSnapshotJSON(t *testing.T) {
	dir := stateFiles(t)
	code, out, _ := runDumpArgs(t, dir, "--json", filepath.Join(dir, "00000000000000000000.txnindex"),
		filepath.Join(dir, "00000000000000000105.snapshot"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 {
		t.Fatalf("exit %d, %d lines:\n%s", code, len(lines), out)
	}
	var txn, prod map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &txn); err != nil {
		t.Fatal(err)
	}
	if txn["producerId"] != 8.0 || txn["lastStableOffset"] != 13.0 || txn["entry"] != 1.0 {
		t.Fatalf("txnindex line %v", txn)
	}
	if err := json.Unmarshal([]byte(lines[3]), &prod); err != nil {
		t.Fatal(err)
	}
	if prod["producerId"] != 6.0 || prod["currentTxnFirstOffset"] != 104.0 || prod["batchLastOffset"] != 104.0 {
		t.Fatalf("snapshot line %v", prod)
	}
}

func TestDumpCorruptStateFiles(t *testing.T) {
	dir := stateFiles(t)
	idx, _ := os.ReadFile(filepath.Join(dir, "00000000000000000000.txnindex"))
	snap, _ := os.ReadFile(filepath.Join(dir, "00000000000000000105.snapshot"))
	cut := filepath.Join(dir, "00000000000000000001.txnindex")
	os.WriteFile(cut, idx[:len(idx)-1], 0o644)
	badVersion := filepath.Join(dir, "00000000000000000002.txnindex")
	v := bytes.Clone(idx)
	v[storage.AbortedTxnSize+1] = 1 // the second entry's version
	os.WriteFile(badVersion, v, 0o644)
	flipped := filepath.Join(dir, "00000000000000000003.snapshot")
	f := bytes.Clone(snap)
	f[len(f)-1] ^= 1 // covered by the CRC
	os.WriteFile(flipped, f, 0o644)
	for _, c := range []struct {
		file, want string
	}{
		{cut, "entry 1: " + storage.ErrTxnIndexTruncated.Error()},
		{badVersion, "entry 1: " + storage.ErrTxnIndexVersion.Error()},
		{flipped, "CRC"},
	} {
		code, out, _ := runDumpArgs(t, dir, c.file)
		if code != 1 || !strings.Contains(out, "error: ") || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, want 1 and an error naming %q:\n%s", filepath.Base(c.file), code, c.want, out)
		}
		if strings.HasSuffix(c.file, ".txnindex") && !strings.Contains(out, "producerId: 7") {
			t.Errorf("%s: the good first entry was not printed:\n%s", filepath.Base(c.file), out)
		}
	}
}

// FuzzDumpState: the .txnindex and .snapshot dumps never panic, and a file is
// reported invalid exactly when the output carries an error.
func FuzzDumpState(f *testing.F) {
	idx := storage.AbortedTxn{ProducerID: 7, FirstOffset: 3, LastOffset: 9, LastStableOffset: 3}.AppendTo(nil)
	f.Add(idx, false)
	f.Add(idx[:20], false)
	s := psm.NewStore(psm.Options{})
	a := s.Begin(0, psm.Replication)
	a.Add(&psm.Batch{ProducerID: 1, RecordsCount: 1, MaxTimestamp: 5})
	a.Commit()
	f.Add(s.AppendSnapshot(nil, 0), true)
	f.Fuzz(func(t *testing.T, data []byte, snapshot bool) {
		for _, js := range []bool{false, true} {
			var out bytes.Buffer
			d := dumper{json: js, out: &out}
			var invalid bool
			if snapshot {
				invalid = d.snapshotFile("x.snapshot", data)
			} else {
				invalid = d.txnIndexFile("x.txnindex", data)
			}
			if found := strings.Contains(out.String(), "error"); found != invalid {
				t.Fatalf("invalid=%v but output:\n%s", invalid, out.String())
			}
		}
	})
}
