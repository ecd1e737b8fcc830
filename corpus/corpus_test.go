package corpus_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/mirrorpath/mirrorpath/corpus"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The corpus is checked only with decoders independent of mirrorpath's codec package: the framing loop,
// header reads and record parser below (DefaultRecordBatch, DefaultRecord), hash/crc32, kmsg, and the codec
// libraries.

const (
	segmentName = "00000000000000000000.log"

	// maxCorpusBytes bounds the whole corpus, to keep the repository small.
	maxCorpusBytes = 2 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch is one whole v2 batch (12-byte prefix included).
type batch []byte

func (b batch) i16(off int) int16      { return int16(binary.BigEndian.Uint16(b[off:])) }
func (b batch) i32(off int) int32      { return int32(binary.BigEndian.Uint32(b[off:])) }
func (b batch) i64(off int) int64      { return int64(binary.BigEndian.Uint64(b[off:])) }
func (b batch) baseOffset() int64      { return b.i64(0) }
func (b batch) batchLength() int32     { return b.i32(corpus.OffBatchLength) }
func (b batch) storedCRC() uint32      { return binary.BigEndian.Uint32(b[corpus.OffCRC:]) }
func (b batch) attributes() int16      { return b.i16(corpus.OffAttributes) }
func (b batch) codec() int             { return int(b.attributes() & 7) }
func (b batch) transactional() bool    { return b.attributes()&0x10 != 0 }
func (b batch) control() bool          { return b.attributes()&0x20 != 0 }
func (b batch) lastOffsetDelta() int32 { return b.i32(corpus.OffLastOffsetDelta) }
func (b batch) producerID() int64      { return b.i64(corpus.OffProducerID) }
func (b batch) producerEpoch() int16   { return b.i16(corpus.OffProducerEpoch) }
func (b batch) baseSequence() int32    { return b.i32(corpus.OffBaseSequence) }
func (b batch) recordsCount() int32    { return b.i32(corpus.OffRecordsCount) }
func (b batch) payload() []byte        { return b[corpus.HeaderSize:] }
func (b batch) crcOK() bool {
	return crc32.Checksum(b[corpus.OffAttributes:], castagnoli) == b.storedCRC()
}
func (b batch) String() string    { return fmt.Sprintf("batch@%d(len %d)", b.baseOffset(), len(b)) }
func (b batch) nextOffset() int64 { return b.baseOffset() + int64(b.lastOffsetDelta()) + 1 }

var errBadLength = errors.New("batchLength below the v2 minimum of 49")

// frame splits a segment by its own framing: a 12-byte prefix (baseOffset, batchLength), then batchLength
// bytes. It returns the whole batches, the unframed tail (a partial batch, or what follows a bad length),
// and errBadLength when a batchLength cannot be a v2 batch.
func frame(seg []byte) (bs []batch, tail []byte, err error) {
	for len(seg) >= corpus.LogOverhead {
		n := int64(int32(binary.BigEndian.Uint32(seg[corpus.OffBatchLength:])))
		if n < corpus.HeaderSize-corpus.LogOverhead {
			return bs, seg, errBadLength
		}
		if int64(len(seg)) < corpus.LogOverhead+n {
			break
		}
		bs = append(bs, batch(seg[:corpus.LogOverhead+n]))
		seg = seg[corpus.LogOverhead+n:]
	}
	return bs, seg, nil
}

// hdr and rec are one decoded record (DefaultRecord). nil key, value or header value is null.
type hdr struct {
	key   string
	value []byte
}

type rec struct {
	length     int64
	attributes int8
	tsDelta    int64
	offDelta   int32
	key, value []byte
	headers    []hdr
}

var errRecord = errors.New("bad record")

// varint reads one zig-zag varint from p at *pos.
func varint(p []byte, pos *int) (int64, error) {
	v, n := binary.Varint(p[*pos:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: varint at %d", errRecord, *pos)
	}
	*pos += n
	return v, nil
}

// bytesField reads a varint length and that many bytes; length -1 is null.
func bytesField(p []byte, pos *int) ([]byte, error) {
	l, err := varint(p, pos)
	if err != nil {
		return nil, err
	}
	if l < 0 {
		return nil, nil
	}
	if int64(len(p)-*pos) < l {
		return nil, fmt.Errorf("%w: %d-byte field at %d overruns %d bytes", errRecord, l, *pos, len(p))
	}
	v := p[*pos : *pos+int(l) : *pos+int(l)]
	*pos += int(l)
	return v, nil
}

// parseRecord decodes the record at the start of p and returns it and its encoded size. The declared
// length must fit in p and be consumed exactly.
func parseRecord(p []byte) (rec, int, error) {
	var r rec
	pos := 0
	l, err := varint(p, &pos)
	if err != nil {
		return r, 0, err
	}
	if l < 0 || int64(len(p)-pos) < l {
		return r, 0, fmt.Errorf("%w: length %d overruns the %d bytes left", errRecord, l, len(p)-pos)
	}
	r.length = l
	body := p[pos : pos+int(l)]
	end := pos + int(l)
	bp := 0
	if len(body) < 1 {
		return r, 0, fmt.Errorf("%w: empty body", errRecord)
	}
	r.attributes = int8(body[0])
	bp++
	if r.tsDelta, err = varint(body, &bp); err != nil {
		return r, 0, err
	}
	od, err := varint(body, &bp)
	if err != nil {
		return r, 0, err
	}
	r.offDelta = int32(od)
	if r.key, err = bytesField(body, &bp); err != nil {
		return r, 0, err
	}
	if r.value, err = bytesField(body, &bp); err != nil {
		return r, 0, err
	}
	nh, err := varint(body, &bp)
	if err != nil {
		return r, 0, err
	}
	if nh < 0 || nh > int64(len(body)-bp) {
		return r, 0, fmt.Errorf("%w: header count %d", errRecord, nh)
	}
	for range nh {
		k, err := bytesField(body, &bp)
		if err != nil {
			return r, 0, err
		}
		if k == nil {
			return r, 0, fmt.Errorf("%w: null header key", errRecord)
		}
		v, err := bytesField(body, &bp)
		if err != nil {
			return r, 0, err
		}
		r.headers = append(r.headers, hdr{key: string(k), value: v})
	}
	if bp != len(body) {
		return r, 0, fmt.Errorf("%w: consumed %d of %d body bytes", errRecord, bp, len(body))
	}
	return r, end, nil
}

// parseRecords decodes count records from p and returns them and the bytes left over.
func parseRecords(p []byte, count int) ([]rec, []byte, error) {
	var out []rec
	for i := range count {
		if len(p) == 0 {
			return out, p, fmt.Errorf("%w: record %d of %d: no bytes left", errRecord, i, count)
		}
		r, n, err := parseRecord(p)
		if err != nil {
			return out, p, fmt.Errorf("record %d of %d: %w", i, count, err)
		}
		out = append(out, r)
		p = p[n:]
	}
	return out, p, nil
}

var xerialMagic = []byte("\x82SNAPPY\x00")

// decompress returns the records section of a batch with codec c, uncompressed.
func decompress(c int, p []byte) ([]byte, error) {
	switch c {
	case 0:
		return p, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(p))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	case 2:
		if !bytes.HasPrefix(p, xerialMagic) {
			return s2.Decode(nil, p)
		}
		// xerial: 8-byte magic, version and compat int32s, then chunks of int32 length + raw snappy block.
		if len(p) < 16 {
			return nil, errors.New("short xerial header")
		}
		var out []byte
		for q := p[16:]; len(q) > 0; {
			if len(q) < 4 {
				return nil, errors.New("short xerial chunk length")
			}
			n := int(binary.BigEndian.Uint32(q))
			if n > len(q)-4 {
				return nil, errors.New("xerial chunk overruns")
			}
			d, err := s2.Decode(nil, q[4:4+n])
			if err != nil {
				return nil, err
			}
			out = append(out, d...)
			q = q[4+n:]
		}
		return out, nil
	case 3:
		return io.ReadAll(lz4.NewReader(bytes.NewReader(p)))
	case 4:
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.DecodeAll(p, nil)
	}
	return nil, fmt.Errorf("codec %d", c)
}

// records decodes every record of a good batch, failing t unless exactly recordsCount records fill the
// records section, and cross-checks each with kmsg.Record.ReadFrom.
func records(t *testing.T, b batch) []rec {
	t.Helper()
	data, err := decompress(b.codec(), b.payload())
	if err != nil {
		t.Fatalf("%v: decompress codec %d: %v", b, b.codec(), err)
	}
	recs, rest, err := parseRecords(data, int(b.recordsCount()))
	if err != nil {
		t.Fatalf("%v: %v", b, err)
	}
	if len(rest) != 0 {
		t.Fatalf("%v: %d bytes after %d records", b, len(rest), len(recs))
	}
	for p, i := data, 0; len(p) > 0; i++ {
		var kr kmsg.Record
		if err := kr.ReadFrom(p); err != nil {
			t.Fatalf("%v: kmsg record %d: %v", b, i, err)
		}
		r := recs[i]
		if int64(kr.Length) != r.length || kr.OffsetDelta != r.offDelta || kr.TimestampDelta64 != r.tsDelta ||
			!bytes.Equal(kr.Key, r.key) || !bytes.Equal(kr.Value, r.value) || len(kr.Headers) != len(r.headers) {
			t.Fatalf("%v: record %d: kmsg %+v, ours %+v", b, i, kr, r)
		}
		_, n := binary.Varint(p)
		p = p[n+int(kr.Length):]
	}
	return recs
}

// goodFiles returns the good segments by case directory name (<client>-<case>).
func goodFiles(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("*", segmentName))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		seg, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Dir(p)] = seg
	}
	if len(out) == 0 {
		t.Fatal("no good segments found")
	}
	return out
}

// mustFrame frames a good segment, which must hold only whole batches.
func mustFrame(t *testing.T, seg []byte) []batch {
	t.Helper()
	bs, tail, err := frame(seg)
	if err != nil || len(tail) != 0 || len(bs) == 0 {
		t.Fatalf("framing: %d batches, %d tail bytes, err %v", len(bs), len(tail), err)
	}
	return bs
}

// cases are the case names every client must have produced.
var cases = []string{"plain", "idempotent", "txn-commit", "txn-abort", "txn-abort-commit", "interleaved",
	"codec-none", "codec-gzip",
	"codec-snappy", "codec-lz4", "codec-zstd", "codec-snappy-multiblock", "codec-lz4-multiblock", "headers", "nulls",
	"large-value", "many-records"}

var clients = []string{"kgo", "sarama"}

func TestEveryCaseFromEveryClient(t *testing.T) {
	files := goodFiles(t)
	var want []string
	for _, c := range clients {
		for _, k := range cases {
			want = append(want, c+"-"+k)
		}
	}
	var got []string
	for name := range files {
		got = append(got, name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("case directories %v, want %v", got, want)
	}
}

// TestGoodSegments frames every good file, verifies every CRC, decodes every batch with kmsg and every record
// with two decoders, and checks the offsets and timestamps the header claims.
func TestGoodSegments(t *testing.T) {
	for name, seg := range goodFiles(t) {
		t.Run(name, func(t *testing.T) {
			var next int64
			for i, b := range mustFrame(t, seg) {
				if b.baseOffset() != next {
					t.Errorf("batch %d: baseOffset %d, want %d", i, b.baseOffset(), next)
				}
				if b[corpus.OffMagic] != 2 {
					t.Errorf("batch %d: magic %d", i, b[corpus.OffMagic])
				}
				if !b.crcOK() {
					t.Errorf("batch %d: CRC-32C over [21,%d) does not match stored %#08x", i, len(b), b.storedCRC())
				}
				var kb kmsg.RecordBatch
				if err := kb.ReadFrom(b); err != nil {
					t.Fatalf("batch %d: kmsg.RecordBatch.ReadFrom: %v", i, err)
				}
				if kb.FirstOffset != b.baseOffset() || kb.Length != b.batchLength() || uint32(kb.CRC) != b.storedCRC() ||
					kb.Attributes != b.attributes() || kb.NumRecords != b.recordsCount() ||
					kb.ProducerID != b.producerID() || kb.FirstSequence != b.baseSequence() ||
					len(kb.Records) != len(b)-corpus.HeaderSize {
					t.Errorf("batch %d: kmsg reads %+v", i, kb)
				}
				recs := records(t, b)
				if len(recs) == 0 {
					t.Fatalf("batch %d: empty", i)
				}
				if !b.control() && recs[0].tsDelta != 0 {
					t.Errorf("batch %d: first record's timestampDelta %d, want baseTimestamp to be its timestamp", i, recs[0].tsDelta)
				}
				maxTS := int64(-1)
				for j, r := range recs {
					if r.offDelta != int32(j) {
						t.Errorf("batch %d record %d: offsetDelta %d", i, j, r.offDelta)
					}
					maxTS = max(maxTS, b.i64(corpus.OffBaseTimestamp)+r.tsDelta)
				}
				if got := b.lastOffsetDelta(); got != int32(len(recs)-1) {
					t.Errorf("batch %d: lastOffsetDelta %d for %d records", i, got, len(recs))
				}
				if got := b.i64(corpus.OffMaxTimestamp); got != maxTS {
					t.Errorf("batch %d: maxTimestamp %d, records' max %d", i, got, maxTS)
				}
				if b.i32(corpus.OffLeaderEpoch) < 0 {
					t.Errorf("batch %d: partitionLeaderEpoch %d not stamped by the broker", i, b.i32(corpus.OffLeaderEpoch))
				}
				next = b.nextOffset()
			}
		})
	}
}

// dataRecords decodes the records of a segment's data batches, one slice per batch.
func dataRecords(t *testing.T, seg []byte) [][]rec {
	t.Helper()
	var out [][]rec
	for _, b := range mustFrame(t, seg) {
		if !b.control() {
			out = append(out, records(t, b))
		}
	}
	return out
}

func equalRecords(a, b [][]rec) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d batches vs %d", len(a), len(b))
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return fmt.Errorf("batch %d: %d records vs %d", i, len(a[i]), len(b[i]))
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			same := x.tsDelta == y.tsDelta && x.offDelta == y.offDelta && x.attributes == y.attributes &&
				bytes.Equal(x.key, y.key) && (x.key == nil) == (y.key == nil) &&
				bytes.Equal(x.value, y.value) && (x.value == nil) == (y.value == nil) &&
				len(x.headers) == len(y.headers)
			for h := 0; same && h < len(x.headers); h++ {
				same = x.headers[h].key == y.headers[h].key && bytes.Equal(x.headers[h].value, y.headers[h].value) &&
					(x.headers[h].value == nil) == (y.headers[h].value == nil)
			}
			if !same {
				return fmt.Errorf("batch %d record %d: %+v vs %+v", i, j, x, y)
			}
		}
	}
	return nil
}

// TestClientsAgree: both clients were handed the same records for a case, so the stored records must be
// the same, batch for batch, whatever the framing differences.
func TestClientsAgree(t *testing.T) {
	files := goodFiles(t)
	for _, k := range cases {
		a, b := files["kgo-"+k], files["sarama-"+k]
		if a == nil || b == nil {
			t.Errorf("%s: missing a client's file", k)
			continue
		}
		if err := equalRecords(dataRecords(t, a), dataRecords(t, b)); err != nil {
			t.Errorf("%s: kgo vs sarama: %v", k, err)
		}
	}
}

// TestCodecsAgree: every codec case holds the records of codec-none, compressed with its codec.
func TestCodecsAgree(t *testing.T) {
	files := goodFiles(t)
	for _, c := range clients {
		want := dataRecords(t, files[c+"-codec-none"])
		for id, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
			seg := files[c+"-codec-"+name]
			for i, b := range mustFrame(t, seg) {
				if b.codec() != id {
					t.Errorf("%s-codec-%s batch %d: codec %d, want %d", c, name, i, b.codec(), id)
				}
			}
			if err := equalRecords(dataRecords(t, seg), want); err != nil {
				t.Errorf("%s-codec-%s vs codec-none: %v", c, name, err)
			}
		}
	}
}

// TestMultiblockAgree: the two multiblock cases hold the same records under different codecs.
func TestMultiblockAgree(t *testing.T) {
	files := goodFiles(t)
	for _, c := range clients {
		if err := equalRecords(dataRecords(t, files[c+"-codec-snappy-multiblock"]),
			dataRecords(t, files[c+"-codec-lz4-multiblock"])); err != nil {
			t.Errorf("%s: snappy vs lz4 multiblock: %v", c, err)
		}
	}
}

// TestCaseContents checks what each case promises in README.md, for both clients.
func TestCaseContents(t *testing.T) {
	files := goodFiles(t)
	for _, c := range clients {
		get := func(k string) []batch { return mustFrame(t, files[c+"-"+k]) }
		t.Run(c+"/plain", func(t *testing.T) {
			for i, b := range get("plain") {
				// Both Go clients write baseSequence 0, not NO_SEQUENCE (-1), when they have no producer id.
				if b.producerID() != -1 || b.producerEpoch() != -1 || b.baseSequence() != 0 || b.attributes() != 0 {
					t.Errorf("batch %d: pid %d epoch %d seq %d attrs %#x", i, b.producerID(), b.producerEpoch(),
						b.baseSequence(), b.attributes())
				}
			}
		})
		t.Run(c+"/idempotent", func(t *testing.T) {
			bs := get("idempotent")
			for i, b := range bs {
				if b.producerID() < 0 || b.producerID() != bs[0].producerID() || b.producerEpoch() != 0 ||
					b.baseSequence() != int32(5*i) || b.transactional() || b.control() {
					t.Errorf("batch %d: pid %d epoch %d seq %d attrs %#x", i, b.producerID(), b.producerEpoch(),
						b.baseSequence(), b.attributes())
				}
			}
		})
		for typ, k := range []string{"txn-abort", "txn-commit"} {
			t.Run(c+"/"+k, func(t *testing.T) {
				bs := get(k)
				marker := bs[len(bs)-1]
				for i, b := range bs[:len(bs)-1] {
					if !b.transactional() || b.control() || b.producerID() != marker.producerID() ||
						b.baseSequence() != int32(4*i) {
						t.Errorf("data batch %d: attrs %#x pid %d seq %d", i, b.attributes(), b.producerID(), b.baseSequence())
					}
				}
				if marker.attributes() != 0x30 || marker.baseSequence() != -1 || marker.recordsCount() != 1 ||
					marker.producerID() < 0 {
					t.Fatalf("marker: attrs %#x seq %d count %d pid %d", marker.attributes(), marker.baseSequence(),
						marker.recordsCount(), marker.producerID())
				}
				r := records(t, marker)[0]
				// key: version int16 0, type int16 (0 ABORT, 1 COMMIT); value: version int16 0, coordinatorEpoch int32.
				if !bytes.Equal(r.key, []byte{0, 0, 0, byte(typ)}) || len(r.value) != 6 || r.value[0] != 0 || r.value[1] != 0 {
					t.Errorf("marker record key %x value %x", r.key, r.value)
				}
			})
		}
		t.Run(c+"/txn-abort-commit", func(t *testing.T) {
			bs := get("txn-abort-commit")
			if len(bs) != 4 || bs[0].control() || !bs[1].control() || bs[2].control() || !bs[3].control() {
				t.Fatalf("want data, marker, data, marker; got %d batches", len(bs))
			}
			for i, b := range bs {
				if !b.transactional() || b.producerID() != bs[0].producerID() || b.producerID() < 0 {
					t.Errorf("batch %d: attrs %#x pid %d", i, b.attributes(), b.producerID())
				}
			}
			for i, typ := range map[int]byte{1: 0, 3: 1} { // ABORT, then COMMIT
				r := records(t, bs[i])[0]
				if !bytes.Equal(r.key, []byte{0, 0, 0, typ}) {
					t.Errorf("marker %d: key %x", i, r.key)
				}
				if bs[i].producerEpoch() != bs[i-1].producerEpoch() {
					t.Errorf("marker %d: epoch %d, its transaction's data %d", i, bs[i].producerEpoch(), bs[i-1].producerEpoch())
				}
			}
		})
		t.Run(c+"/interleaved", func(t *testing.T) {
			bs := get("interleaved")
			if len(bs) != 6 {
				t.Fatalf("%d batches, want 6", len(bs))
			}
			a, b := bs[0].producerID(), bs[1].producerID()
			if a < 0 || b < 0 || a == b {
				t.Fatalf("idempotent producers %d and %d", a, b)
			}
			for i, want := range []struct {
				pid int64
				seq int32
			}{{a, 0}, {b, 0}, {-1, 0}, {a, 2}, {b, 2}, {-1, 0}} {
				if bs[i].producerID() != want.pid || bs[i].baseSequence() != want.seq {
					t.Errorf("batch %d: pid %d seq %d, want %d %d", i, bs[i].producerID(), bs[i].baseSequence(), want.pid, want.seq)
				}
			}
		})
		t.Run(c+"/headers", func(t *testing.T) {
			recs := dataRecords(t, files[c+"-headers"])[0]
			var null, empty bool
			for i, r := range recs {
				if len(r.headers) != i%4 {
					t.Errorf("record %d: %d headers, want %d", i, len(r.headers), i%4)
				}
				for _, h := range r.headers {
					null = null || h.value == nil
					empty = empty || (h.value != nil && len(h.value) == 0)
				}
			}
			if !null || !empty {
				t.Errorf("null header value present %v, empty header value present %v", null, empty)
			}
		})
		t.Run(c+"/nulls", func(t *testing.T) {
			recs := dataRecords(t, files[c+"-nulls"])[0]
			if len(recs) != 4 || recs[0].key != nil || recs[0].value == nil || recs[1].key == nil || recs[1].value != nil ||
				recs[2].key != nil || recs[2].value != nil || recs[3].key == nil || len(recs[3].key) != 0 ||
				recs[3].value == nil || len(recs[3].value) != 0 {
				t.Errorf("records %+v", recs)
			}
		})
		t.Run(c+"/large-value", func(t *testing.T) {
			recs := dataRecords(t, files[c+"-large-value"])
			if len(recs) != 1 || len(recs[0]) != 1 || len(recs[0][0].value) != 100<<10 {
				t.Errorf("want one batch of one 100 KiB record")
			}
		})
		t.Run(c+"/many-records", func(t *testing.T) {
			recs := dataRecords(t, files[c+"-many-records"])
			if len(recs) != 1 || len(recs[0]) != 1000 {
				t.Errorf("want one batch of 1000 records")
			}
		})
	}
}

// TestClientDifferences pins the client differences README.md reports, so that a regeneration with other
// client versions that changes them fails here until the README is updated.
func TestClientDifferences(t *testing.T) {
	files := goodFiles(t)
	first := func(name string) batch { return mustFrame(t, files[name])[0] }

	if p := first("kgo-codec-snappy").payload(); bytes.HasPrefix(p, xerialMagic) {
		t.Errorf("kgo snappy: xerial framing, README says raw block")
	}
	if p := first("sarama-codec-snappy").payload(); !bytes.HasPrefix(p, xerialMagic) {
		t.Errorf("sarama snappy: raw block, README says xerial framing")
	}
	// LZ4 frame descriptor: magic 04224d18, FLG, BD. BD bits 4-6 are the block maximum size (4: 64 KiB, 7: 4 MiB).
	for name, bd := range map[string]byte{"kgo-codec-lz4": 0x70, "sarama-codec-lz4": 0x40} {
		p := first(name).payload()
		if len(p) < 6 || p[4] != 0x64 || p[5] != bd {
			t.Errorf("%s: lz4 frame header % x, README says FLG 0x64 BD %#x", name, p[:min(len(p), 6)], bd)
		}
	}
	// The multiblock cases: sarama cuts ~100 KB into 32 KiB xerial chunks and 64 KiB LZ4 blocks; kgo writes
	// one raw snappy block and one LZ4 block.
	for name, want := range map[string]int{"sarama-codec-snappy-multiblock": 4, "kgo-codec-snappy-multiblock": 0,
		"sarama-codec-lz4-multiblock": 2, "kgo-codec-lz4-multiblock": 1} {
		p := first(name).payload()
		var got int
		var err error
		if strings.Contains(name, "snappy") {
			got, err = xerialChunks(p)
		} else {
			got, err = lz4Blocks(p)
		}
		if err != nil || got != want {
			t.Errorf("%s: %d chunks or blocks (err %v), README says %d", name, got, err, want)
		}
	}
	// After an aborted transaction, kgo's next transaction runs at a bumped epoch with sequences from 0
	// (kfake answers EndTxn v5, KIP-890); sarama stays at epoch 0 and continues the sequence.
	for name, want := range map[string][2]int32{"kgo-txn-abort-commit": {1, 0}, "sarama-txn-abort-commit": {0, 3}} {
		second := mustFrame(t, files[name])[2]
		if int32(second.producerEpoch()) != want[0] || second.baseSequence() != want[1] {
			t.Errorf("%s: second transaction at epoch %d seq %d, README says %d %d", name, second.producerEpoch(),
				second.baseSequence(), want[0], want[1])
		}
	}
	// Apart from the producer id (random per run for idempotent producers, hashed from the transactional id
	// for transactional ones), the CRC and the marker timestamps, the two clients store the same bytes for
	// every case but snappy and lz4.
	for _, k := range cases {
		if strings.HasPrefix(k, "codec-snappy") || strings.HasPrefix(k, "codec-lz4") || k == "txn-abort-commit" {
			continue
		}
		if err := sameBatches(files["kgo-"+k], files["sarama-"+k], true); err != nil {
			t.Errorf("%s: kgo vs sarama: %v", k, err)
		}
	}
}

// xerialChunks counts the chunks of a xerial snappy stream; a raw snappy block has 0.
func xerialChunks(p []byte) (int, error) {
	if !bytes.HasPrefix(p, xerialMagic) {
		return 0, nil
	}
	n := 0
	for q := p[min(16, len(p)):]; len(q) > 0; n++ {
		if len(q) < 4 || int(binary.BigEndian.Uint32(q)) > len(q)-4 {
			return n, errors.New("bad xerial chunk")
		}
		q = q[4+binary.BigEndian.Uint32(q):]
	}
	return n, nil
}

// lz4Blocks counts the data blocks of an LZ4 frame: magic, FLG, BD, [content size,] header checksum, then
// blocks of a little-endian size (high bit: stored uncompressed) up to a zero end mark.
func lz4Blocks(p []byte) (int, error) {
	if len(p) < 7 || binary.LittleEndian.Uint32(p) != 0x184D2204 {
		return 0, errors.New("not an lz4 frame")
	}
	flg := p[4]
	pos := 7
	if flg&0x08 != 0 {
		pos += 8
	}
	if flg&0x01 != 0 {
		pos += 4
	}
	n := 0
	for {
		if len(p)-pos < 4 {
			return n, errors.New("lz4 frame cut")
		}
		size := int(binary.LittleEndian.Uint32(p[pos:]) &^ (1 << 31))
		pos += 4
		if size == 0 {
			return n, nil
		}
		if flg&0x10 != 0 {
			size += 4
		}
		if size > len(p)-pos {
			return n, errors.New("lz4 block overruns")
		}
		pos += size
		n++
	}
}

// sameBatches compares two segments batch by batch, ignoring the marker timestamps, the producer id when
// pids is set, and the CRC of a batch where either is ignored.
func sameBatches(a, b []byte, pids bool) error {
	ba, ta, ea := frame(a)
	bb, tb, eb := frame(b)
	if len(ba) != len(bb) || !bytes.Equal(ta, tb) || (ea == nil) != (eb == nil) {
		return fmt.Errorf("framing: %d vs %d batches, tails %d vs %d bytes, errs %v vs %v", len(ba), len(bb),
			len(ta), len(tb), ea, eb)
	}
	for i := range ba {
		x, y := bytes.Clone(ba[i]), bytes.Clone(bb[i])
		if len(x) != len(y) {
			return fmt.Errorf("batch %d: %d vs %d bytes", i, len(x), len(y))
		}
		// The CRC covers the masked fields, so it is masked with them; elsewhere it must repeat.
		var mask [][2]int
		if pids {
			mask = append(mask, [2]int{corpus.OffProducerID, 8}, [2]int{corpus.OffCRC, 4})
		}
		if batch(x).control() && batch(y).control() {
			mask = append(mask, [2]int{corpus.OffBaseTimestamp, 16}, [2]int{corpus.OffCRC, 4})
		}
		for _, m := range mask {
			clear(x[m[0] : m[0]+m[1]])
			clear(y[m[0] : m[0]+m[1]])
		}
		if j := firstDiff(x, y); j >= 0 {
			return fmt.Errorf("batch %d differs at byte %d", i, j)
		}
	}
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// diffs returns the byte positions at which two equally long files differ.
func diffs(a, b []byte) []int {
	var out []int
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			out = append(out, i)
		}
	}
	return out
}

// within reports whether every position lies in one of the [start, start+width) ranges.
func within(pos []int, ranges ...[2]int) bool {
	for _, p := range pos {
		ok := false
		for _, r := range ranges {
			ok = ok || (p >= r[0] && p < r[0]+r[1])
		}
		if !ok {
			return false
		}
	}
	return true
}

// malformedCase is one defective file: its source case, the damaged batch, and a check that the defect,
// and only it, is there. at is the damaged batch's position in the source file.
type malformedCase struct {
	source string
	batch  int
	check  func(t *testing.T, seg, src []byte, at int, srcBatch batch)
}

// countMismatch checks a file whose only edit is recordsCount (delta against the source) plus the CRC.
func countMismatch(delta int32) func(t *testing.T, seg, src []byte, at int, sb batch) {
	return func(t *testing.T, seg, src []byte, at int, sb batch) {
		if len(seg) != len(src) || !within(diffs(seg, src), [2]int{at + corpus.OffCRC, 4}, [2]int{at + corpus.OffRecordsCount, 4}) {
			t.Fatalf("edits outside recordsCount and CRC: %v", diffs(seg, src))
		}
		b := batch(seg[at : at+len(sb)])
		if !b.crcOK() || b.recordsCount() != sb.recordsCount()+delta {
			t.Fatalf("CRC ok %v, recordsCount %d, source %d", b.crcOK(), b.recordsCount(), sb.recordsCount())
		}
		data, err := decompress(b.codec(), b.payload())
		if err != nil {
			t.Fatal(err)
		}
		recs, rest, err := parseRecords(data, int(b.recordsCount()))
		switch {
		case delta > 0 && (err == nil || len(recs) != int(sb.recordsCount())):
			t.Errorf("recordsCount %d: parsed %d records, err %v; want to run out after %d", b.recordsCount(),
				len(recs), err, sb.recordsCount())
		case delta < 0 && (err != nil || len(rest) == 0):
			t.Errorf("recordsCount %d: err %v, %d bytes left; want a whole record left over", b.recordsCount(), err, len(rest))
		}
	}
}

// lengthOnly checks a file whose only edit is the batchLength of the damaged batch.
func lengthOnly(want func(int32) int32) func(t *testing.T, seg, src []byte, at int, sb batch) {
	return func(t *testing.T, seg, src []byte, at int, sb batch) {
		if len(seg) != len(src) || !within(diffs(seg, src), [2]int{at + corpus.OffBatchLength, 4}) {
			t.Fatalf("edits outside batchLength: %v", diffs(seg, src))
		}
		if got := int32(binary.BigEndian.Uint32(seg[at+corpus.OffBatchLength:])); got != want(sb.batchLength()) {
			t.Fatalf("batchLength %d, want %d", got, want(sb.batchLength()))
		}
	}
}

var malformed = map[string]malformedCase{
	"truncated-tail": {source: "kgo-plain", batch: 2, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		if len(seg) >= len(src) || !bytes.HasPrefix(src, seg) || len(seg) <= at {
			t.Fatalf("not a prefix of the source ending inside batch 2")
		}
		bs, tail, err := frame(seg)
		if err != nil || len(bs) != 2 || len(tail) == 0 || len(tail) >= len(sb) {
			t.Fatalf("framing: %d batches, %d tail bytes, err %v; want 2 and a partial batch", len(bs), len(tail), err)
		}
		for i, b := range bs {
			if !b.crcOK() {
				t.Errorf("whole batch %d: CRC", i)
			}
		}
	}},
	"bad-batch-length-short": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		lengthOnly(func(int32) int32 { return 13 })(t, seg, src, at, sb)
		if bs, _, err := frame(seg); !errors.Is(err, errBadLength) || len(bs) != 1 {
			t.Errorf("framing: %d batches, err %v; want 1 then a bad length", len(bs), err)
		}
	}},
	"bad-batch-length-negative": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		lengthOnly(func(int32) int32 { return -1 })(t, seg, src, at, sb)
		if bs, _, err := frame(seg); !errors.Is(err, errBadLength) || len(bs) != 1 {
			t.Errorf("framing: %d batches, err %v; want 1 then a bad length", len(bs), err)
		}
	}},
	"bad-batch-length-overrun": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		lengthOnly(func(v int32) int32 { return v + 1 })(t, seg, src, at, sb)
		bs, _, _ := frame(seg)
		if len(bs) < 2 || len(bs[1]) != len(sb)+1 {
			t.Fatalf("framing: %d batches; want batch 1 framed one byte long", len(bs))
		}
		if bs[1].crcOK() {
			t.Errorf("overlong batch 1: CRC verifies")
		}
		if crc32.Checksum(bs[1][corpus.OffAttributes:len(sb)], castagnoli) != bs[1].storedCRC() {
			t.Errorf("without the borrowed byte the CRC still fails: the length is not the only defect")
		}
	}},
	"bad-magic": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		if d := diffs(seg, src); len(seg) != len(src) || !slices.Equal(d, []int{at + corpus.OffMagic}) || seg[at+corpus.OffMagic] != 3 {
			t.Fatalf("diffs %v, want only the magic byte at %d set to 3", d, at+corpus.OffMagic)
		}
		bs, tail, err := frame(seg)
		if err != nil || len(tail) != 0 || !bs[1].crcOK() {
			t.Errorf("framing err %v tail %d; the CRC, which does not cover magic, must verify", err, len(tail))
		}
	}},
	"crc-mismatch": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		d := diffs(seg, src)
		if len(seg) != len(src) || len(d) != 1 || d[0] < at+corpus.HeaderSize || d[0] >= at+len(sb) {
			t.Fatalf("diffs %v, want one byte inside batch 1's records [%d,%d)", d, at+corpus.HeaderSize, at+len(sb))
		}
		if x := seg[d[0]] ^ src[d[0]]; x&(x-1) != 0 {
			t.Errorf("byte differs in more than one bit: %08b", x)
		}
		b := batch(seg[at : at+len(sb)])
		if b.crcOK() {
			t.Errorf("CRC verifies")
		}
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(b); err != nil {
			t.Errorf("kmsg, which does not check CRCs, fails: %v", err)
		}
	}},
	"codec-5": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		if len(seg) != len(src) || !within(diffs(seg, src), [2]int{at + corpus.OffCRC, 4}, [2]int{at + corpus.OffAttributes, 2}) {
			t.Fatalf("edits outside attributes and CRC: %v", diffs(seg, src))
		}
		b := batch(seg[at : at+len(sb)])
		if b.codec() != 5 || !b.crcOK() || b.attributes()&^7 != sb.attributes()&^7 {
			t.Errorf("codec %d, CRC ok %v, attributes %#x from %#x", b.codec(), b.crcOK(), b.attributes(), sb.attributes())
		}
	}},
	"records-count-larger":             {source: "kgo-plain", batch: 1, check: countMismatch(+1)},
	"records-count-smaller":            {source: "kgo-plain", batch: 1, check: countMismatch(-1)},
	"records-count-larger-compressed":  {source: "kgo-codec-zstd", batch: 1, check: countMismatch(+1)},
	"records-count-smaller-compressed": {source: "kgo-codec-zstd", batch: 1, check: countMismatch(-1)},
	"record-length-overrun": {source: "kgo-plain", batch: 1, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		if len(seg) != len(src) || !within(diffs(seg, src), [2]int{at + corpus.OffCRC, 4}, [2]int{at + corpus.HeaderSize, len(sb) - corpus.HeaderSize}) {
			t.Fatalf("edits outside the CRC and batch 1's records: %v", diffs(seg, src))
		}
		b := batch(seg[at : at+len(sb)])
		if !b.crcOK() {
			t.Fatal("CRC does not verify")
		}
		n := int(b.recordsCount())
		_, rest, err := parseRecords(b.payload(), n-1)
		if err != nil {
			t.Fatalf("records before the last: %v", err)
		}
		l, w := binary.Varint(rest)
		if w <= 0 || l <= int64(len(rest)-w) {
			t.Errorf("last record declares %d bytes with %d left: no overrun", l, len(rest)-w)
		}
		if _, _, err := parseRecords(rest, 1); !errors.Is(err, errRecord) {
			t.Errorf("last record parses: %v", err)
		}
	}},
	"control-key-2-bytes": {source: "kgo-txn-abort", batch: 2, check: func(t *testing.T, seg, src []byte, at int, sb batch) {
		if !bytes.Equal(seg[:at], src[:at]) {
			t.Fatal("data batches before the marker changed")
		}
		bs, tail, err := frame(seg)
		if err != nil || len(tail) != 0 || len(bs) != 3 {
			t.Fatalf("framing: %d batches, %d tail bytes, err %v", len(bs), len(tail), err)
		}
		m := bs[2]
		if !m.crcOK() || !m.control() || m.recordsCount() != 1 {
			t.Fatalf("marker: CRC ok %v, attrs %#x, count %d", m.crcOK(), m.attributes(), m.recordsCount())
		}
		r := records(t, m)[0]
		want := records(t, sb)[0]
		if len(r.key) != 2 || !bytes.Equal(r.key, want.key[:2]) || !bytes.Equal(r.value, want.value) {
			t.Errorf("marker key %x value %x; want key %x and the source value %x", r.key, r.value, want.key[:2], want.value)
		}
		if !bytes.Equal(m[:corpus.OffBatchLength], sb[:corpus.OffBatchLength]) ||
			!bytes.Equal(m[corpus.OffLeaderEpoch:corpus.OffCRC], sb[corpus.OffLeaderEpoch:corpus.OffCRC]) ||
			!bytes.Equal(m[corpus.OffAttributes:corpus.HeaderSize], sb[corpus.OffAttributes:corpus.HeaderSize]) {
			t.Error("marker header changed beyond batchLength and CRC")
		}
	}},
}

// TestMalformed checks that every file in malformed/ carries the defect its name promises and no other,
// and that every defect has its file.
func TestMalformed(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("malformed", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".log")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			mc, ok := malformed[name]
			if !ok {
				t.Fatalf("no check for %s", p)
			}
			seg, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			src, err := os.ReadFile(filepath.Join(mc.source, segmentName))
			if err != nil {
				t.Fatal(err)
			}
			sbs := mustFrame(t, src)
			at := 0
			for _, b := range sbs[:mc.batch] {
				at += len(b)
			}
			// Batches before the damaged one are untouched and whole.
			if !bytes.Equal(seg[:at], src[:at]) {
				t.Fatalf("bytes before batch %d changed", mc.batch)
			}
			mc.check(t, seg, src, at, sbs[mc.batch])
		})
	}
	for name := range malformed {
		if !seen[name] {
			t.Errorf("malformed/%s.log missing", name)
		}
	}
}

// TestManifest checks that MANIFEST.tsv lists every file once with its true size, batch and record counts,
// and that the corpus stays under its size budget.
func TestManifest(t *testing.T) {
	f, err := os.Open("MANIFEST.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != "case\tclient\tcodec\tbatches\trecords\tbytes\tnotes" {
		t.Fatalf("header %q", sc.Text())
	}
	listed := map[string]bool{}
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 7 || cols[6] == "" {
			t.Fatalf("row %q: want 7 columns with notes", sc.Text())
		}
		path := cols[0]
		if listed[path] {
			t.Errorf("%s listed twice", path)
		}
		listed[path] = true
		seg, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		bs, _, _ := frame(seg)
		var recs int64
		for _, b := range bs {
			recs += int64(b.recordsCount())
		}
		if cols[5] != strconv.Itoa(len(seg)) || cols[3] != strconv.Itoa(len(bs)) || cols[4] != strconv.FormatInt(recs, 10) {
			t.Errorf("%s: manifest says %s batches, %s records, %s bytes; file has %d, %d, %d", path, cols[3], cols[4],
				cols[5], len(bs), recs, len(seg))
		}
		client, _, _ := strings.Cut(path, "-")
		if strings.HasPrefix(path, "malformed/") {
			client = "handmade"
		}
		if cols[1] != client {
			t.Errorf("%s: client %q, want %q", path, cols[1], client)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	good, _ := filepath.Glob(filepath.Join("*", segmentName))
	bad, _ := filepath.Glob(filepath.Join("malformed", "*.log"))
	var total int64
	for _, p := range append(good, bad...) {
		if !listed[filepath.ToSlash(p)] {
			t.Errorf("%s not in MANIFEST.tsv", p)
		}
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	if total >= maxCorpusBytes {
		t.Errorf("corpus is %d bytes, budget %d", total, maxCorpusBytes)
	}
}
