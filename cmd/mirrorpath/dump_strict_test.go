package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
)

// strictBatch builds an uncompressed batch with header h (count and
// lastOffsetDelta as given in it) and the records section raw, CRC fixed.
func strictBatch(t *testing.T, h codec.BatchHeader, count int32, raw []byte) []byte {
	t.Helper()
	b, err := codec.AppendBatch(nil, h, nil, codec.CompressionNone)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, raw...)
	binary.BigEndian.PutUint32(b[codec.OffBatchLength:], uint32(len(b)-codec.LogOverhead))
	binary.BigEndian.PutUint32(b[codec.OffRecordsCount:], uint32(count))
	binary.BigEndian.PutUint32(b[codec.OffLastOffsetDelta:], uint32(h.LastOffsetDelta))
	codec.Batch(b).UpdateCRC()
	return b
}

// rawRecord encodes one record from its fields, lengths as given (so they
// may be below -1); headers are (keyLength, key, valueLength) triples with
// no value bytes for a negative valueLength.
func rawRecord(tsDelta int64, offDelta, keyLen, valueLen int32, headerValueLens ...int32) []byte {
	var body []byte
	body = append(body, 0)
	body = binary.AppendVarint(body, tsDelta)
	body = binary.AppendVarint(body, int64(offDelta))
	for _, l := range []int32{keyLen, valueLen} {
		body = binary.AppendVarint(body, int64(l))
		body = append(body, bytes.Repeat([]byte{'x'}, max(int(l), 0))...)
	}
	body = binary.AppendVarint(body, int64(len(headerValueLens)))
	for _, l := range headerValueLens {
		body = binary.AppendVarint(body, 1)
		body = append(body, 'h')
		body = binary.AppendVarint(body, int64(l))
		body = append(body, bytes.Repeat([]byte{'y'}, max(int(l), 0))...)
	}
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

// strictSegment: batches that Kafka's reader accepts, each breaking (or
// not) one --strict rule. testdata/dump/strict.log holds these bytes.
func strictSegment(t *testing.T) []byte {
	const ts = 1700000000000
	idem := codec.BatchHeader{BaseTimestamp: ts, MaxTimestamp: ts + 1, ProducerID: 7, BaseSequence: 0, LastOffsetDelta: 1}
	var seg []byte
	add := func(h codec.BatchHeader, count int32, recs ...[]byte) {
		h.BaseOffset = int64(len(seg)) // distinct, increasing
		if h.PartitionLeaderEpoch == 0 {
			h.PartitionLeaderEpoch = 1
		}
		seg = append(seg, strictBatch(t, h, count, bytes.Join(recs, nil))...)
	}
	// clean: no finding
	add(idem, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	// lengths below -1
	add(idem, 2, rawRecord(0, 0, -5, 1), rawRecord(1, 1, 1, -2, -1, -3))
	// offset deltas: repeated, and the last beyond lastOffsetDelta
	h := idem
	h.LastOffsetDelta = 2
	add(h, 3, rawRecord(0, 0, 1, 1), rawRecord(1, 0, 1, 1), rawRecord(1, 3, 1, 1))
	// lastOffsetDelta below recordsCount-1
	h = idem
	h.LastOffsetDelta = 0
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	// maxTimestamp not the largest record timestamp
	h = idem
	h.MaxTimestamp = ts + 50
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	// transactional without a producer ID; producer ID with epoch and sequence -1
	h = idem
	h.Attributes, h.ProducerID, h.ProducerEpoch, h.BaseSequence = codec.AttrTransactional, -1, -1, -1
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	h = idem
	h.ProducerEpoch, h.BaseSequence = -1, -1
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	// a control batch with two records (two COMMIT markers)
	marker := func(off int32) []byte {
		var r []byte
		key := codec.AppendControlKey(nil, codec.ControlCommit)
		val := []byte{0, 0, 0, 0, 0, 5}
		body := append([]byte{0, 0}, binary.AppendVarint(nil, int64(off))...)
		body = append(binary.AppendVarint(body, int64(len(key))), key...)
		body = append(binary.AppendVarint(body, int64(len(val))), val...)
		body = append(body, 0)
		return append(binary.AppendVarint(r, int64(len(body))), body...)
	}
	h = idem
	h.Attributes, h.BaseSequence, h.MaxTimestamp = codec.AttrTransactional|codec.AttrControl, -1, ts
	add(h, 2, marker(0), marker(1))
	// baseOffset + lastOffsetDelta overflowing int64
	big := strictBatch(t, codec.BatchHeader{BaseOffset: math.MaxInt64, PartitionLeaderEpoch: 1, BaseTimestamp: ts,
		MaxTimestamp: ts + 1, ProducerID: 7, BaseSequence: 0, LastOffsetDelta: 1}, 2,
		bytes.Join([][]byte{rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1)}, nil))
	seg = append(seg, big...)
	// client oddities: warnings only
	h = idem
	h.ProducerID, h.ProducerEpoch, h.BaseSequence = -1, 0, 0
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	h = idem
	h.ProducerID = -8
	add(h, 2, rawRecord(0, 0, 1, 1), rawRecord(1, 1, 1, 1))
	// lz4 with a wrong content checksum (Kafka does not compare it)
	lz4, _ := hex.DecodeString("00000000000000000000004c00000000022bccd23f00030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d186440a7080000800e0000000102610000000000964098e9")
	codec.Batch(lz4).SetBaseOffset(int64(len(seg)))
	seg = append(seg, lz4...)
	// lz4 with a byte after the end mark; snappy with a 1-byte tail
	for _, h := range []string{
		"0000000000000000000000490000000002bd0d9ab100030000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000104224d18604082080000800e000000010261000000000000",
		"00000000000000000000005000000000029b7a72d100020000000000000000000000000000000000000000ffffffffffffffffffffffffffff0000000182534e415050590000000001000000010000000a081c0e0000000102610000",
	} {
		b, _ := hex.DecodeString(h)
		codec.Batch(b).SetBaseOffset(int64(len(seg)))
		seg = append(seg, b...)
	}
	return seg
}

func TestDumpStrictGolden(t *testing.T) {
	path := filepath.Join("testdata", "dump", "strict.log")
	seg := strictSegment(t)
	if *updateDump {
		if err := os.WriteFile(path, seg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if onDisk, err := os.ReadFile(path); err != nil || !bytes.Equal(onDisk, seg) {
		t.Fatalf("%s is stale or missing (run with -update-dump): %v", path, err)
	}
	for _, tc := range []struct {
		name string
		args []string
		exit int
	}{
		{"text-lenient", []string{path}, 0},
		{"text-strict", []string{"--strict", path}, 1},
		{"json-strict", []string{"--strict", "--json", path}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { checkDumpGolden(t, tc.name, tc.args, tc.exit) })
	}
}

// TestDumpStrictFindings checks, independently of the goldens, that each
// batch of strictSegment gets exactly the fields it was built to break.
func TestDumpStrictFindings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, strictSegment(t), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := mainArgs([]string{"dump", "--strict", "--json", path}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := [][]string{
		{},
		{"violation records[0].keyLength", "violation records[1].valueLength", "violation records[1].headers[1].valueLength"},
		{"violation records[1].offsetDelta", "violation records[2].offsetDelta"},
		{"violation lastOffsetDelta", "violation records[1].offsetDelta"},
		{"violation maxTimestamp"},
		{"violation attributes.transactional"},
		{"violation producerEpoch", "violation baseSequence"},
		{"violation recordsCount"},
		{"violation lastOffsetDelta"},
		{"warning baseSequence", "warning producerEpoch"},
		{"warning producerId"},
		{"violation lz4.contentChecksum"},
		{"violation compression.tail"},
		{"violation compression.tail"},
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d batches, want %d", len(lines), len(want))
	}
	for i, line := range lines {
		var info batchInfo
		if err := json.Unmarshal([]byte(line), &info); err != nil {
			t.Fatal(err)
		}
		if info.Error != "" {
			t.Errorf("batch %d: Kafka's reader would accept it, dump says %q", i, info.Error)
		}
		var got []string
		for _, f := range *info.Strict {
			got = append(got, f.Severity+" "+f.Field)
		}
		if strings.Join(got, ",") != strings.Join(want[i], ",") {
			t.Errorf("batch %d: findings %q, want %q", i, got, want[i])
		}
	}
}
