package appendpath

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/internal/testhex"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

func TestFileLogNamingRollReopen(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: 500, Sync: storage.SyncAlways}
	p := mustOpen(t, cfg)
	for i := range 12 {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 1, Seq: int32(i), Txn: true})); err != nil {
			t.Fatal(err)
		}
		if i%4 == 3 {
			if _, err := p.AppendCoordinator(mkMarker(1, 0, 0, true)); err != nil {
				t.Fatal(err)
			}
		}
	}
	leo, snap := p.LogEndOffset(), p.Snapshot()
	aborted := p.AbortedTxns(nil, 0, leo)
	if len(aborted) != 3 {
		t.Fatalf("%d aborted txns", len(aborted))
	}
	before := readAll(t, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := vfs.OSFS{}.ReadDir(dir)
	var logs, idx, snaps int
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".log"):
			logs++
		case strings.HasSuffix(n, ".txnindex"):
			idx++
		case strings.HasSuffix(n, ".snapshot"):
			snaps++
		}
	}
	if logs < 3 || idx != logs || snaps < 2 || !slices.Contains(names, "00000000000000000000.log") {
		t.Fatalf("files: %v", names)
	}
	// The segment files are plain concatenated batches.
	data, _ := vfs.OSFS{}.ReadFile(filepath.Join(dir, "00000000000000000000.log"))
	if _, _, err := codec.Next(data); err != nil {
		t.Fatal(err)
	}
	q := mustOpen(t, cfg)
	if r := q.Recovery(); r.TruncatedAt != -1 || r.Snapshot != leo || r.Replayed != 0 {
		t.Fatalf("clean reopen: %+v", r)
	}
	if q.LogEndOffset() != leo || !bytes.Equal(q.Snapshot(), snap) || !slices.Equal(q.AbortedTxns(nil, 0, leo), aborted) {
		t.Fatal("reopened partition differs")
	}
	after := readAll(t, q)
	if len(after) != len(before) {
		t.Fatalf("%d batches, want %d", len(after), len(before))
	}
	for i := range after {
		if !bytes.Equal(after[i], before[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
	if _, err := q.AppendClient(mkBatch(t, bspec{PID: 1, Seq: 12})); err != nil {
		t.Fatal(err)
	}
	q.Close()
}

func TestCorruptSnapshotFallsBack(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs, SegmentBytes: 300}
	p := mustOpen(t, cfg)
	for i := range 20 {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: int64(i % 3), Seq: int32(i / 3)})); err != nil {
			t.Fatal(err)
		}
	}
	want := p.Snapshot()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Garble the newest snapshot: the next older one plus a replay must do.
	names, _ := fs.ReadDir("/l")
	var newest string
	for _, n := range names {
		if strings.HasSuffix(n, ".snapshot") {
			newest = n
		}
	}
	data, _ := fs.ReadFile("/l/" + newest)
	data[len(data)-1] ^= 0xff
	fs.WriteFile("/l/"+newest, data, true)
	q := mustOpen(t, cfg)
	r := q.Recovery()
	if r.Snapshot < 0 || r.Replayed == 0 {
		t.Fatalf("recovery %+v: no fallback replay", r)
	}
	if !bytes.Equal(q.Snapshot(), want) {
		t.Fatal("state differs after fallback")
	}
	if fs.Size("/l/"+newest) >= 0 && r.Snapshot < q.LogEndOffset() {
		// the corrupt file was replaced by the end-of-rebuild snapshot
		got, _ := fs.ReadFile("/l/" + newest)
		if _, err := psm.DecodeSnapshot(got); err != nil {
			t.Fatal("corrupt snapshot left in place")
		}
	}
}

// op is one append of the crash test's workload.
type op struct {
	b     []byte
	coord bool
}

// crcGarble flips a byte of the unsynced bytes a crash kept, half of the
// time: in a .log file only a byte the CRC covers (a flipped baseOffset,
// length or leader epoch cannot be detected, in Kafka either), anywhere in
// other files. The unsynced bytes of a .log file start at a batch boundary;
// the byte is drawn from the CRC range of a batch whose header they hold
// (crcRanges), never past that batch, and a tail too short to hold one is
// left alone.
func crcGarble(rng *rand.Rand) func(string, []byte) {
	return func(name string, data []byte) {
		if rng.IntN(2) == 0 || len(data) == 0 {
			return
		}
		if !strings.HasSuffix(name, ".log") {
			data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			return
		}
		ranges := crcRanges(data)
		if len(ranges) == 0 {
			return
		}
		r := ranges[rng.IntN(len(ranges))]
		data[r[0]+rng.IntN(r[1]-r[0])] ^= byte(1 + rng.IntN(255))
	}
}

// crcRanges returns the [from, to) byte ranges of data covered by the CRC
// of each batch whose first CRCStart bytes data holds, cut at data's end.
func crcRanges(data []byte) [][2]int {
	var out [][2]int
	for pos := 0; pos+codec.CRCStart < len(data); {
		n := int(codec.Batch(data[pos:]).BatchLength())
		end := pos + codec.LogOverhead + n
		if n < codec.CRCStart-codec.LogOverhead || end < pos {
			break // not a batch header: nothing more to find
		}
		out = append(out, [2]int{pos + codec.CRCStart, min(end, len(data))})
		pos = end
	}
	return out
}

// crcGarble's ranges: a tail of 1 to CRCStart bytes gives none, and no range
// reaches into the next batch's header (its baseOffset is not covered).
func TestCrcRanges(t *testing.T) {
	b1 := mkBatch(t, bspec{PID: 1, Seq: 0})
	b2 := mkBatch(t, bspec{PID: 1, Seq: 1, Records: 3})
	two := chunk(b1, b2)
	for n := 0; n <= codec.CRCStart; n++ {
		if r := crcRanges(two[:n]); len(r) != 0 {
			t.Fatalf("tail of %d bytes: ranges %v", n, r)
		}
	}
	want := [][2]int{{codec.CRCStart, len(b1)}, {len(b1) + codec.CRCStart, len(two)}}
	if r := crcRanges(two); len(r) != 2 || r[0] != want[0] || r[1] != want[1] {
		t.Fatalf("ranges %v, want %v", r, want)
	}
	if r := crcRanges(two[:len(b1)+5]); len(r) != 1 || r[0] != want[0] {
		t.Fatalf("torn second header: ranges %v", r)
	}
	// Every garbled image of every tail keeps baseOffsets and lengths.
	for n := 1; n <= len(two); n++ {
		for seed := range uint64(20) {
			data := bytes.Clone(two[:n])
			crcGarble(rand.New(rand.NewPCG(seed, uint64(n))))("x.log", data)
			for _, h := range [][2]int{{0, codec.CRCStart}, {len(b1), len(b1) + codec.CRCStart}} {
				if h[0] < n && !bytes.Equal(data[h[0]:min(h[1], n)], two[h[0]:min(h[1], n)]) {
					t.Fatalf("tail %d seed %d: header bytes [%d,%d) changed", n, seed, h[0], h[1])
				}
			}
		}
	}
}

// TestCrashRecoveryProperty: run a random workload on a MemFS log, cut the
// power at a random point (unsynced bytes partly lost, partly garbled),
// reopen, and require: the recovered log is a prefix of the batches written,
// at least everything synced; producer state, LSO and the transaction index
// equal those of an uncrashed run over that prefix.
func TestCrashRecoveryProperty(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 7))
		clock := time.UnixMilli(1700000001000)
		now := func() time.Time { clock = clock.Add(50 * time.Millisecond); return clock }
		fs := vfs.NewMemFS()
		cfg := Config{Dir: "/log", FS: fs, SegmentBytes: int64(200 + rng.IntN(2000)),
			Sync: storage.SyncPolicy(rng.IntN(3)), SyncInterval: 500 * time.Millisecond, Now: now}
		p := mustOpen(t, cfg)
		var ops []op
		var written [][]byte
		seq := map[int64]int32{}
		open := map[int64]bool{}
		for range 20 + rng.IntN(80) {
			pd := int64(rng.IntN(5))
			var o op
			if open[pd] && rng.IntN(3) == 0 {
				o = op{mkMarker(pd, 0, 0, rng.IntN(2) == 0), true}
				open[pd] = false
			} else {
				txn := pd >= 3 && (open[pd] || rng.IntN(2) == 0)
				n := 1 + rng.IntN(4)
				o = op{mkBatch(t, bspec{PID: pd, Seq: seq[pd], Records: n, Txn: txn, Value: rng.IntN(100) + 1}), false}
				seq[pd] += int32(n)
				open[pd] = open[pd] || txn
			}
			var err error
			if o.coord {
				_, err = p.AppendCoordinator(o.b)
			} else {
				_, err = p.AppendClient(o.b)
			}
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			ops = append(ops, o)
			if rng.IntN(15) == 0 {
				if err := p.Sync(); err != nil {
					t.Fatal(err)
				}
			}
		}
		for b := range p.Batches(0) {
			written = append(written, bytes.Clone(b))
		}
		synced := p.SyncedOffset()
		crashed := fs.Crash(rng, crcGarble(rng))
		cfg.FS = crashed
		q, err := Open(cfg)
		if err != nil {
			t.Fatalf("seed %d: reopen: %v", seed, err)
		}
		got := readAll(t, q)
		t.Logf("seed %d policy %s: %d/%d batches recovered, synced %d, recovery %+v", seed, cfg.Sync, len(got), len(written), synced, q.Recovery())
		if len(got) > len(written) {
			t.Fatalf("seed %d: %d batches recovered, %d written", seed, len(got), len(written))
		}
		for i := range got {
			if !bytes.Equal(got[i], written[i]) {
				t.Fatalf("seed %d: batch %d is not the one written", seed, i)
			}
		}
		if q.LogEndOffset() < synced {
			t.Fatalf("seed %d: recovered LEO %d below synced %d (policy %s)", seed, q.LogEndOffset(), synced, cfg.Sync)
		}
		ref := mustOpen(t, Config{Now: now})
		for _, o := range ops[:len(got)] {
			var err error
			if o.coord {
				_, err = ref.AppendCoordinator(o.b)
			} else {
				_, err = ref.AppendClient(o.b)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if q.LogEndOffset() != ref.LogEndOffset() || !bytes.Equal(q.Snapshot(), ref.Snapshot()) {
			t.Fatalf("seed %d: producer state differs from an uncrashed run of %d batches (rec %+v)", seed, len(got), q.Recovery())
		}
		if q.LastStableOffset() != ref.LastStableOffset() {
			t.Fatalf("seed %d: LSO %d vs %d", seed, q.LastStableOffset(), ref.LastStableOffset())
		}
		if a, b := q.AbortedTxns(nil, 0, 1<<40), ref.AbortedTxns(nil, 0, 1<<40); !slices.Equal(a, b) {
			t.Fatalf("seed %d: txn index %+v vs %+v", seed, a, b)
		}
		// The recovered log takes appends, and a second reopen sees them.
		if _, err := q.AppendClient(mkBatch(t, bspec{PID: 99, Seq: 0})); err != nil {
			t.Fatalf("seed %d: append after recovery: %v", seed, err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		q2, err := Open(cfg)
		if err != nil || q2.LogEndOffset() != ref.LogEndOffset()+1 || q2.Recovery().TruncatedAt != -1 {
			t.Fatalf("seed %d: second reopen: %v %+v", seed, err, q2.Recovery())
		}
	}
}

func TestRecoveryReportsTornTail(t *testing.T) {
	fs := vfs.NewMemFS()
	cfg := Config{Dir: "/l", FS: fs}
	p := mustOpen(t, cfg)
	for i := range 3 {
		if _, err := p.AppendClient(mkBatch(t, bspec{PID: 1, Seq: int32(i)})); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	name := "/l/00000000000000000000.log"
	data, _ := fs.ReadFile(name)
	size := len(data) / 3
	fs.WriteFile(name, data[:len(data)-5], true)
	q := mustOpen(t, cfg)
	r := q.Recovery()
	if r.TruncatedAt != int64(2*size) || r.TruncatedBytes != int64(size-5) || !errors.Is(r.Reason, codec.ErrPartial) {
		t.Fatalf("recovery %+v", r)
	}
	if q.LogEndOffset() != 2 {
		t.Fatalf("LEO %d", q.LogEndOffset())
	}
	if e, _ := q.Producer(1); e.LastSeq() != 1 {
		t.Fatalf("producer %+v", e)
	}
}

// TestTxnIndexFileBytes pins the on-disk .txnindex entry (AbortedTxn.java):
// 34 bytes, big-endian.
func TestTxnIndexFileBytes(t *testing.T) {
	fs := vfs.NewMemFS()
	p := mustOpen(t, Config{Dir: "/l", FS: fs})
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 1, Seq: 0})); err != nil { // offset 0
		t.Fatal(err)
	}
	if _, err := p.AppendClient(mkBatch(t, bspec{PID: 7, Seq: 0, Txn: true, Records: 2})); err != nil { // 1-2
		t.Fatal(err)
	}
	if _, err := p.AppendCoordinator(mkMarker(7, 0, 0, true)); err != nil { // 3
		t.Fatal(err)
	}
	got, _ := fs.ReadFile("/l/00000000000000000000.txnindex")
	want := testhex.Unhex(t, `
		0000                 # [0,2)   version 0
		0000000000000007     # [2,10)  producerId 7
		0000000000000001     # [10,18) firstOffset 1
		0000000000000003     # [18,26) lastOffset 3 (the ABORT marker)
		0000000000000004     # [26,34) lastStableOffset 4 (no other open txn: marker + 1)
	`)
	if !bytes.Equal(got, want) {
		t.Fatalf("txnindex\n got %x\nwant %x", got, want)
	}
}
