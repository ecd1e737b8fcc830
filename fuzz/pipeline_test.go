package fuzz

import (
	"bytes"
	"cmp"
	"io"
	"math"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// source is the cluster the pipeline mirrors from.
var source = [16]byte{0x5c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

// now is the partition's clock: after every seed's timestamps, and no
// producer expires before the log is read back (ExpirationMs below).
func now() time.Time { return time.UnixMilli(1800000000000) }

const logDir = "/log"

// repair gives every whole batch of buf a valid CRC, so that mutations reach
// the checks behind the CRC.
func repair(buf []byte) {
	for rest := buf; len(rest) > 0; {
		b, r, err := codec.Next(rest)
		if err != nil {
			return
		}
		b.UpdateCRC()
		rest = r
	}
}

// pipelineConfig is the mirror the target appends to: a file-backed log on
// an in-memory file system with small segments (so that chunks roll), the
// strategy, CRC fix and offset mode chosen by mode.
func pipelineConfig(fs vfs.FS, mode uint8) appendpath.Config {
	strategies := pid.Strategies()
	cfg := appendpath.Config{
		Dir: logDir, FS: fs, SegmentBytes: 1 << 10, Now: now,
		State:      appendpath.Mirroring,
		Strategy:   strategies[int(mode)%len(strategies)],
		CRCFix:     pid.CRCFix(mode / 8 % 2),
		PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, ExpirationMs: math.MaxInt64},
	}
	if mode&16 != 0 {
		cfg.MirrorOffsets = appendpath.AssignOffsets
	}
	return cfg
}

// dump reads every segment file of the log in offset order as `mirrorpath
// dump` reads one: codec.NewBatchReader over the file, CRCs checked.
func dump(t *testing.T, fs vfs.FS) [][]byte {
	t.Helper()
	names, err := fs.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, n := range names {
		if !strings.HasSuffix(n, storage.LogSuffix) {
			continue
		}
		data, err := fs.ReadFile(path.Join(logDir, n))
		if err != nil {
			t.Fatal(err)
		}
		r := codec.NewBatchReader(bytes.NewReader(data), 0, int64(len(data)), 0)
		for {
			b, pos, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("segment %s at %d: %v", n, pos, err)
			}
			out = append(out, bytes.Clone(b))
		}
	}
	return out
}

// producers is the partition's producer state in ProducerID order.
func producers(p *appendpath.Partition) []psm.ProducerInfo {
	ps := p.Producers()
	slices.SortFunc(ps, func(a, b psm.ProducerInfo) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return ps
}

// FuzzMirrorPipeline: a chunk of batches from a source cluster, mirrored
// into a file-backed partition. A rejected chunk leaves the log empty. An
// accepted one is stored batch for batch: read back from the segment files,
// each stored batch has a valid CRC-32C (hash/crc32), the bytes of its input
// outside baseOffset, partitionLeaderEpoch, crc and producerId, offsets that
// are the input's (kept) or run on from 0 (assigned), a producerId that is
// a one-to-one function of the input's, and records that codec's iterator
// and franz-go's kmsg decode alike. Reopened with its producer snapshots
// deleted, the partition rebuilds from the log the producer state it had.
func FuzzMirrorPipeline(f *testing.F) {
	for _, sd := range pipelineSeeds(f) {
		f.Add(sd.chunk, sd.mode)
	}
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) { mirrorPipeline(t, data, mode) })
}

// TestMirrorPipelineSeeds: every seed is accepted, so that the fuzz
// target's checks past the append run from the first input on.
func TestMirrorPipelineSeeds(t *testing.T) {
	for _, sd := range pipelineSeeds(t) {
		if !mirrorPipeline(t, sd.chunk, sd.mode) {
			t.Errorf("seed of %d bytes refused under mode %d", len(sd.chunk), sd.mode)
		}
	}
}

type pipelineSeed struct {
	chunk []byte
	mode  uint8
}

// pipelineSeeds are valid chunks: every strategy, both CRC fixes and offset
// modes, every codec, a transaction and its marker, a batch without a
// producer.
func pipelineSeeds(tb testing.TB) []pipelineSeed {
	seed := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	batch := func(base int64, pid int64, epoch int16, seq int32, n int, c codec.Compression, txn bool) []byte {
		recs := make([]codec.Record, n)
		for i := range recs {
			recs[i] = codec.Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte{byte('k' + i)},
				Value: bytes.Repeat([]byte{byte('a' + i)}, 40), Headers: codec.MakeHeaders(codec.Header{Key: []byte("h"), Value: []byte{byte(i)}})}
		}
		var attrs codec.Attributes
		if txn {
			attrs |= codec.AttrTransactional
		}
		b, err := codec.AppendBatch(nil, codec.BatchHeader{BaseOffset: base, Attributes: attrs, BaseTimestamp: 1700000000000,
			ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq}, recs, c)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	two := seed(batch(0, 5, 0, 0, 3, codec.CompressionNone, false), batch(3, 6, 1, 0, 2, codec.CompressionNone, false))
	var out []pipelineSeed
	for mode := range uint8(32) {
		if mode%6 == 0 || mode == 17 || mode == 27 {
			out = append(out, pipelineSeed{two, mode})
		}
	}
	return append(out,
		pipelineSeed{seed(batch(0, 5, 0, 0, 20, codec.CompressionGzip, false), batch(20, 5, 0, 20, 20, codec.CompressionSnappy, false),
			batch(40, 7, 0, 0, 9, codec.CompressionLZ4, true), batch(49, 5, 0, 40, 9, codec.CompressionZstd, false)), 3},
		pipelineSeed{seed(batch(10, 9, 2, 7, 1, codec.CompressionNone, true), codec.AppendEndTxnMarker(nil, 9, 2, 0, false, 1700000000001)), 16},
		pipelineSeed{seed(batch(0, -1, -1, -1, 2, codec.CompressionNone, false)), 1},
	)
}

// mirrorPipeline runs one input through the pipeline and its checks; it
// reports whether the chunk was accepted.
func mirrorPipeline(t *testing.T, data []byte, mode uint8) bool {
	chunk := bytes.Clone(data)
	repair(chunk)
	fs := vfs.NewMemFS()
	cfg := pipelineConfig(fs, mode)
	p, err := appendpath.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.AppendMirrored(chunk, source)
	if err != nil {
		if p.LogEndOffset() != 0 || len(p.Producers()) != 0 {
			t.Fatalf("rejected chunk (%v) changed the partition", err)
		}
		return false
	}
	in, err := refSplit(chunk)
	if err != nil {
		t.Fatalf("accepted a chunk the reference does not frame: %v", err)
	}
	live := producers(p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	stored := dump(t, fs)
	if len(stored) != len(in) || res.Batches != len(in) {
		t.Fatalf("%d input batches, %d stored, result %+v", len(in), len(stored), res)
	}
	mapped, back := map[int64]int64{}, map[int64]int64{}
	next := int64(0)
	for i, s := range stored {
		b, sb := codec.Batch(in[i]), codec.Batch(s)
		if !refCRCValid(s) {
			t.Fatalf("batch %d stored with a CRC hash/crc32 refuses", i)
		}
		if !bytes.Equal(s[8:12], in[i][8:12]) || s[16] != in[i][16] || !bytes.Equal(s[21:43], in[i][21:43]) || !bytes.Equal(s[51:], in[i][51:]) {
			t.Fatalf("batch %d stored with other bytes than its input's", i)
		}
		want := b.BaseOffset()
		if cfg.MirrorOffsets == appendpath.AssignOffsets {
			want = next
		}
		if sb.BaseOffset() != want {
			t.Fatalf("batch %d stored at offset %d, want %d", i, sb.BaseOffset(), want)
		}
		next = sb.NextOffset()
		if o, ok := mapped[b.ProducerID()]; ok && o != sb.ProducerID() {
			t.Fatalf("producerId %d mapped to %d and %d", b.ProducerID(), o, sb.ProducerID())
		}
		if o, ok := back[sb.ProducerID()]; ok && o != b.ProducerID() {
			t.Fatalf("producerIds %d and %d both mapped to %d", o, b.ProducerID(), sb.ProducerID())
		}
		mapped[b.ProducerID()], back[sb.ProducerID()] = sb.ProducerID(), b.ProducerID()
		compareRecords(t, i, sb)
	}
	names, _ := fs.ReadDir(logDir)
	for _, n := range names {
		if strings.HasSuffix(n, storage.SnapshotSuffix) {
			fs.Remove(path.Join(logDir, n))
		}
	}
	q, err := appendpath.Open(cfg)
	if err != nil {
		t.Fatalf("reopening the log without snapshots: %v", err)
	}
	defer q.Close()
	if got := producers(q); !reflect.DeepEqual(got, live) {
		t.Fatalf("producer state rebuilt from the log:\n%+v\nlive:\n%+v", got, live)
	}
	return true
}

// compareRecords holds codec's decoding of a stored batch (the dump's) to
// kmsg's. Both must accept an uncompressed batch; a compressed one may be
// refused by one of them where Kafka's readers and franz-go's differ
// (docs/kafka-differences.md), and is compared where both read it.
func compareRecords(t *testing.T, i int, b codec.Batch) {
	t.Helper()
	ref, refErr := refRecords(b)
	it, _, err := b.OpenRecords(nil, 1<<24)
	var got []codec.Record
	if err == nil {
		for r, rerr := range it.All() {
			if rerr != nil {
				err = rerr
				break
			}
			got = append(got, r)
		}
	}
	if (err == nil) != (refErr == nil) {
		if b.Compression() != codec.CompressionNone {
			return
		}
		t.Fatalf("batch %d: codec %v, kmsg %v", i, err, refErr)
	}
	if err != nil {
		return
	}
	if len(got) != len(ref) {
		t.Fatalf("batch %d: codec reads %d records, kmsg %d", i, len(got), len(ref))
	}
	for j, r := range got {
		w := ref[j]
		hs := slices.Collect(r.Headers.All())
		same := r.OffsetDelta == w.offsetDelta && r.TimestampDelta == w.timestampDelta &&
			bytesSame(r.Key, w.key) && bytesSame(r.Value, w.value) && len(hs) == len(w.headers)
		for k := 0; same && k < len(hs); k++ {
			same = string(hs[k].Key) == w.headers[k].Key && bytesSame(hs[k].Value, w.headers[k].Value)
		}
		if !same {
			t.Fatalf("batch %d record %d: codec %+v, kmsg %+v", i, j, r, w)
		}
	}
}

// bytesSame compares two nullable byte strings: nil (null) differs from empty.
func bytesSame(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }
