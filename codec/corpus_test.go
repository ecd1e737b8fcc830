package codec

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The corpus (../corpus) holds segment files written by real clients (kgo,
// sarama) through kfake, and hand-made malformed ones. These tests decode
// every batch with this package and compare with kmsg.

const corpusDir = "../corpus"

type manifestRow struct {
	path             string
	codec            string
	batches, records int
	markers          []string // control types in order, from the notes' marker=TYPE(...)
}

func readManifest(t testing.TB) []manifestRow {
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("the committed corpus is missing: %v", err)
	}
	defer f.Close()
	var rows []manifestRow
	s := bufio.NewScanner(f)
	for s.Scan() {
		cols := strings.Split(s.Text(), "\t")
		if len(cols) < 6 || cols[0] == "case" {
			continue
		}
		b, _ := strconv.Atoi(cols[3])
		r, _ := strconv.Atoi(cols[4])
		row := manifestRow{path: cols[0], codec: cols[2], batches: b, records: r}
		for _, f := range strings.Fields(cols[len(cols)-1]) {
			if t, ok := strings.CutPrefix(f, "marker="); ok {
				row.markers = append(row.markers, t[:strings.IndexByte(t+"(", '(')])
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("empty manifest")
	}
	return rows
}

// corpusSeeds returns the bytes of every corpus file (for fuzz seeds).
func corpusSeeds(t testing.TB) [][]byte {
	var out [][]byte
	paths, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.log"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func TestCorpusVsKmsg(t *testing.T) {
	for _, row := range readManifest(t) {
		if strings.HasPrefix(row.path, "malformed/") {
			continue
		}
		t.Run(row.path, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(corpusDir, row.path))
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader(data, 0)
			var batches, records int
			var buf []byte
			var markers []string
			for {
				b, pos, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("batch at %d: %v", pos, err)
				}
				batches++
				if got := b.Compression().String(); got != row.codec {
					t.Errorf("batch at %d: codec %s, manifest %s", pos, got, row.codec)
				}
				if err := sameHeaderAsKmsg(b); err != nil {
					t.Fatalf("batch at %d: %v", pos, err)
				}
				var it RecordIter
				it, buf, err = b.OpenRecords(buf, 64<<20)
				if err != nil {
					t.Fatalf("batch at %d: %v", pos, err)
				}
				recs, err := walkAll(it)
				if err != nil {
					t.Fatalf("batch at %d: %v", pos, err)
				}
				records += len(recs)
				section := []byte(b[HeaderSize:])
				if b.Compression() != CompressionNone {
					section = buf
				}
				if err := compareWalks(section, b.RecordsCount()); err != nil {
					t.Fatalf("batch at %d: %v", pos, err)
				}
				if int32(len(recs)) != b.RecordsCount() || recs[len(recs)-1].OffsetDelta != b.LastOffsetDelta() {
					t.Errorf("batch at %d: %d records, lastOffsetDelta %d", pos, len(recs), b.LastOffsetDelta())
				}
				// encode(decode(bytes)) == bytes for the record encoding,
				// and for the whole batch when it is uncompressed.
				again, err := AppendBatch(nil, b.Header(), recs, CompressionNone)
				if err != nil {
					t.Fatal(err)
				}
				if string(again[HeaderSize:]) != string(section) {
					t.Errorf("batch at %d: re-encoded records differ", pos)
				}
				if b.Compression() == CompressionNone && string(again) != string(b) {
					t.Errorf("batch at %d: rebuilt batch differs", pos)
				}
				if b.IsControl() {
					c, err := b.ControlRecord()
					if err != nil || (c.Type != ControlAbort && c.Type != ControlCommit) {
						t.Fatalf("batch at %d: control %+v %v", pos, c, err)
					}
					if _, err := c.EndTxnMarker(); err != nil {
						t.Fatal(err)
					}
					markers = append(markers, c.Type.String())
				}
				if _, err := b.Check(nil, 64<<20); err != nil {
					t.Errorf("batch at %d: Check: %v", pos, err)
				}
			}
			if strings.Join(markers, ",") != strings.Join(row.markers, ",") {
				t.Errorf("markers %v, manifest %v", markers, row.markers)
			}
			if batches != row.batches || records != row.records {
				t.Errorf("%d batches, %d records; manifest %d, %d", batches, records, row.batches, row.records)
			}
		})
	}
}

// checkSegment validates every batch of a segment and returns the defects.
func checkSegment(data []byte) []error {
	var errs []error
	r := NewReader(data, 0)
	var buf []byte
	for {
		b, _, err := r.Next()
		if err == io.EOF {
			return errs
		}
		if err != nil {
			errs = append(errs, err)
			if b == nil {
				continue
			}
			continue // CRC: Check would report it again
		}
		if buf, err = b.Check(buf, 64<<20); err != nil {
			errs = append(errs, err)
		}
	}
}

func TestCorpusMalformed(t *testing.T) {
	want := map[string]error{
		"bad-batch-length-negative.log":        ErrBadLength,
		"bad-batch-length-overrun.log":         ErrCRC,
		"bad-batch-length-short.log":           ErrBadLength,
		"bad-magic.log":                        ErrBadMagic,
		"codec-5.log":                          ErrUnsupportedCodec,
		"control-key-2-bytes.log":              ErrBadControl,
		"crc-mismatch.log":                     ErrCRC,
		"record-length-overrun.log":            ErrRecordTruncated,
		"records-count-larger-compressed.log":  ErrRecordTruncated,
		"records-count-larger.log":             ErrRecordTruncated,
		"records-count-smaller-compressed.log": ErrRecordsLeftover,
		"records-count-smaller.log":            ErrRecordsLeftover,
		"truncated-tail.log":                   ErrPartial,
	}
	paths, _ := filepath.Glob(filepath.Join(corpusDir, "malformed", "*.log"))
	if len(paths) == 0 {
		t.Fatalf("the committed malformed corpus is missing: no %s", filepath.Join(corpusDir, "malformed", "*.log"))
	}
	for _, p := range paths {
		name := filepath.Base(p)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		errs := checkSegment(data)
		w, known := want[name]
		if !known {
			if len(errs) == 0 {
				t.Errorf("%s: new malformed case, and no defect found", name)
			}
			continue
		}
		if len(errs) == 0 || !errors.Is(errs[0], w) {
			t.Errorf("%s: got %v, want first defect %v", name, errs, w)
		}
		var fe *FormatError
		if w != ErrPartial && len(errs) > 0 && !errors.As(errs[0], &fe) && !errors.Is(errs[0], ErrBadRecord) &&
			!errors.Is(errs[0], ErrUnsupportedCodec) && !errors.Is(errs[0], ErrBadControl) {
			t.Errorf("%s: %v carries no position", name, errs[0])
		}
	}
}
