package appendpath

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/testlog"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/storage"
	"github.com/mirrorpath/mirrorpath/storage/vfs"
)

// chunkMode is one configuration of the chunk-against-batches differential
// test: the strategy, the offsets and where the log lives.
type chunkMode struct {
	name     string
	strategy pid.Strategy
	offsets  MirrorOffsets
	file     bool
}

var chunkModes = []chunkMode{
	{"asis/preserve", pid.Verbatim, PreserveOffsets, false},
	{"asis/assign", pid.Verbatim, AssignOffsets, false},
	{"bitfield/preserve", pid.Bitfield, PreserveOffsets, false},
	{"barrier/assign/file", pid.Barrier, AssignOffsets, true},
}

// chunkProgram turns prog into the chunks of a mirror fetch stream: data
// and transactional batches of five producers, COMMIT and ABORT markers
// (some with a stale epoch), barriers, epoch bumps, batches of 1 KiB and
// more (copied in the CRC's pass), offsets that go backwards and batches
// with a broken CRC. Offsets follow on from leo (the log end offset when
// the chunk is appended: the caller builds one chunk at a time).
type chunkProgram struct {
	prog  []byte
	epoch [5]int16
	seq   [5]int32
}

func (c *chunkProgram) byte() (byte, bool) {
	if len(c.prog) == 0 {
		return 0, false
	}
	b := c.prog[0]
	c.prog = c.prog[1:]
	return b, true
}

// next builds the next chunk (nil when prog is used up) and the index of its
// first corrupt batch, or -1.
func (c *chunkProgram) next(t testing.TB, leo int64) (batches [][]byte, corrupt int) {
	corrupt = -1
	off := leo
	for len(batches) < 12 {
		op, ok := c.byte()
		if !ok || op%8 == 7 {
			break
		}
		arg, _ := c.byte()
		p := int(arg % 5)
		pidv := int64(100 + p)
		var b []byte
		switch op % 8 {
		case 0, 1:
			n := 1 + int(arg>>4)%3
			value := 20
			if op&0x40 != 0 {
				value = 400 // batches of about 1.2 KiB: over fuseMin
			}
			b = mkBatch(t, bspec{PID: pidv, Epoch: c.epoch[p], Seq: c.seq[p], Records: n, Value: value})
			c.seq[p] += int32(n)
		case 2:
			b = mkBatch(t, bspec{PID: pidv, Epoch: c.epoch[p], Seq: c.seq[p], Txn: true})
			c.seq[p]++
		case 3, 4:
			epoch := c.epoch[p]
			if op&0x40 != 0 {
				epoch-- // a stale marker: fenced by producer state
			}
			b = mkMarker(pidv, epoch, 1, op%8 == 4)
		case 5:
			b = codec.AppendBarrier(nil, 0, "src", 1700000000000)
		case 6:
			c.epoch[p]++
			c.seq[p] = 0
			b = mkBatch(t, bspec{PID: pidv, Epoch: c.epoch[p], Seq: 0})
			c.seq[p] = 1
		}
		base := off
		if op&0x20 != 0 && base > 0 {
			base-- // offsets that go backwards (PreserveOffsets refuses them)
		}
		b = testlog.WithOffsets(b, base, 0)
		off = base + int64(codec.Batch(b).LastOffsetDelta()) + 1
		if op&0x80 != 0 && arg&0x7 == 0 {
			b[len(b)-1] ^= 0x10 // a broken CRC
			if corrupt < 0 {
				corrupt = len(batches)
			}
		}
		batches = append(batches, b)
	}
	return batches, corrupt
}

// checkChunksMatchBatches appends the chunks prog describes to one
// partition, a chunk per AppendMirrored call, and holds each call to what
// one-batch calls give: a fresh partition that replays the accepted batches
// one call each and then tries the chunk's batches one call each. A chunk
// with a batch that does not pass its CRC is refused with the first such
// batch (Kafka checks the whole chunk before producer state); else with the
// first batch a one-batch call refuses, with that call's error; else it is
// accepted with the offsets the one-batch calls give, and the log's bytes,
// producer state, transactions and high watermark equal theirs. A refused
// chunk changes nothing. Segments of 10 KiB make some chunks roll (the
// appends that go to a new segment take the other path), and every memory
// segment's offset index is the one a walk of its batches gives.
func checkChunksMatchBatches(t *testing.T, m chunkMode, prog []byte) {
	cfg := Config{State: Mirroring, Strategy: m.strategy, CRCFix: pid.Patch, MirrorOffsets: m.offsets,
		SegmentBytes: 10 << 10, PSMOptions: nonNegOne}
	open := func(file bool) *Partition {
		c := cfg
		if file {
			c.Dir, c.FS = "/l", vfs.NewMemFS()
		}
		return mustOpen(t, c)
	}
	p := open(m.file)
	var accepted [][]byte
	windowsMayDiffer := false // a chunk changed a producer's epoch within it (see below)
	gen := chunkProgram{prog: prog}
	for step := 0; ; step++ {
		batches, corrupt := gen.next(t, p.LogEndOffset())
		if batches == nil {
			break
		}
		ref := open(false)
		for _, b := range accepted {
			if _, err := ref.AppendMirrored(b, srcA); err != nil {
				t.Fatalf("step %d: replay of an accepted batch refused: %v", step, err)
			}
		}
		wantAt, want := -1, error(nil)
		var wantRes Result
		for i, b := range batches {
			r, err := ref.AppendMirrored(b, srcA)
			if err != nil {
				var be *BatchError
				if !errors.As(err, &be) || be.Index != 0 {
					t.Fatalf("step %d: one-batch call: %v", step, err)
				}
				wantAt, want = i, be.Err
				break
			}
			if i == 0 {
				wantRes.FirstOffset = r.FirstOffset
			}
			wantRes.LastOffset, wantRes.Batches = r.LastOffset, i+1
		}
		if corrupt >= 0 {
			wantAt, want = corrupt, kafkaerr.CorruptMessage
		}
		before := partitionState(t, p)
		in := chunk(batches...)
		res, err := p.AppendMirrored(in, srcA)
		if wantAt >= 0 {
			var be *BatchError
			if !errors.As(err, &be) || be.Index != wantAt || !errors.Is(be.Err, want) {
				t.Fatalf("step %d: chunk of %d: %v, one-batch calls refuse batch %d with %v", step, len(batches), err, wantAt, want)
			}
			if after := partitionState(t, p); after != before {
				t.Fatalf("step %d: refused chunk changed the partition\nbefore %s\nafter  %s", step, before, after)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: chunk of %d refused (%v), its batches accepted one call each", step, len(batches), err)
		}
		if res != wantRes {
			t.Fatalf("step %d: chunk %+v, one-batch calls %+v", step, res, wantRes)
		}
		got, w := partitionState(t, p), partitionState(t, ref)
		windowsMayDiffer = windowsMayDiffer || epochChanges(batches)
		if windowsMayDiffer {
			// Kafka runs one ProducerAppendInfo per producer for the whole
			// append and merges it at the end (ProducerStateEntry#update):
			// the committed window is cleared only if the append's final
			// epoch differs from the committed one, while one append per
			// batch clears it at every change. Once a chunk has changed a
			// producer's epoch within it, the chunk's partition may keep
			// another window than its batches one call each, then and
			// after; the rest must still agree.
			got, w = withoutSnapshot(got), withoutSnapshot(w)
		}
		if got != w {
			t.Fatalf("step %d: chunk and one-batch calls disagree\nchunk %s\ncalls %s", step, got, w)
		}
		accepted = append(accepted, batches...)
		checkMemoryIndex(t, p)
	}
}

// partitionState is what a fetch or a restart can see of p: its batches,
// producer state, transactions and offsets (digests of the log and the
// snapshot). Of each .txnindex entry it keeps the producer and the offsets
// of the transaction, not its LastStableOffset: UnifiedLog#append computes
// that after the whole append's producer updates
// (ProducerStateManager#lastStableOffset(CompletedTxn) over the ongoing
// transactions then), so a transaction of another producer that starts, or
// a barrier that ends one, after an ABORT in the same chunk changes it.
func partitionState(t testing.TB, p *Partition) string {
	leo := p.LogEndOffset()
	var aborted []storage.AbortedTxn
	for _, a := range p.AbortedTxns(nil, 0, leo) {
		a.LastStableOffset = 0
		aborted = append(aborted, a)
	}
	return fmt.Sprintf("leo=%d hw=%d lso=%d log=%x snapshot=%x aborted=%v open=%v state=%v",
		leo, p.HighWatermark(), p.LastStableOffset(), sha256.Sum256(bytes.Join(readAll(t, p), nil)),
		sha256.Sum256(p.Snapshot()), aborted, p.OpenTxns(nil), p.State())
}

// checkMemoryIndex holds each segment of a memory log to the offset index
// a walk of its batches gives (an entry for each batch more than
// IndexIntervalBytes past the last entry, Kafka's index.interval.bytes).
func checkMemoryIndex(t testing.TB, p *Partition) {
	t.Helper()
	if !p.log.Memory() {
		return
	}
	want := make([][]storage.OffsetPosition, p.log.Segments())
	last, pos, seg := int64(0), int64(0), -1
	for b, err := range p.Batches(p.LogStartOffset()) {
		if err != nil {
			t.Fatal(err)
		}
		if s := p.log.SegmentFor(b.BaseOffset()); s != seg {
			seg, last, pos = s, 0, 0
		}
		if pos-last > storage.IndexIntervalBytes {
			want[seg] = append(want[seg], storage.OffsetPosition{Offset: b.LastOffset(), Position: pos})
			last = pos
		}
		pos += int64(len(b))
	}
	for i := range want {
		if got := p.log.OffsetIndex(i, nil); !slices.Equal(got, want[i]) {
			t.Fatalf("segment %d: offset index %v, the walk gives %v", i, got, want[i])
		}
	}
}

// TestChunkMatchesOneBatchCalls: chunks of mixed producers, transactions,
// markers (a stale one is fenced), barriers and broken batches, appended a
// chunk per call, give what their batches give one call each (see
// checkChunksMatchBatches), under every offset mode and a mapping
// strategy, in memory and on file.
func TestChunkMatchesOneBatchCalls(t *testing.T) {
	for _, m := range chunkModes {
		t.Run(m.name, func(t *testing.T) {
			for seed := range uint64(8) {
				rng := rand.New(rand.NewPCG(seed, 31))
				prog := make([]byte, 400)
				for i := range prog {
					prog[i] = byte(rng.Uint32())
				}
				checkChunksMatchBatches(t, m, prog)
			}
		})
	}
}

// TestChunkBarrierAndAbortInTheMiddle: a chunk with a barrier in the middle,
// and one with an ABORT marker in the middle, each followed by batches of
// the producers before them, give what one-batch calls give.
func TestChunkBarrierAndAbortInTheMiddle(t *testing.T) {
	// op%8: 0 data, 2 transactional data, 4 ABORT, 5 barrier, 7 end of chunk;
	// each op is followed by its producer byte.
	barrier := []byte{0, 0, 0, 1, 2, 2, 5, 0, 0, 0, 0, 1, 2, 2, 7}
	abort := []byte{2, 0, 2, 1, 0, 2, 4, 0, 0, 0, 2, 1, 4, 1, 0, 1, 7}
	for _, m := range chunkModes {
		for name, prog := range map[string][]byte{"barrier": barrier, "abort": abort} {
			t.Run(m.name+"/"+name, func(t *testing.T) { checkChunksMatchBatches(t, m, prog) })
		}
	}
}

// FuzzChunkMatchesOneBatchCalls is TestChunkMatchesOneBatchCalls on the
// fuzzer's programs.
func FuzzChunkMatchesOneBatchCalls(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 2, 5, 0, 0, 0, 0, 1, 2, 2, 7}, uint8(0))
	f.Add([]byte{2, 0, 2, 1, 0, 2, 4, 0, 0, 0, 2, 1, 4, 1, 0, 1, 7}, uint8(1))
	f.Add([]byte{0x40, 0, 0, 1, 0x40, 2, 0x80, 8, 0, 3, 0x20, 1, 7, 0x43, 0, 3, 1}, uint8(2))
	f.Fuzz(func(t *testing.T, prog []byte, mode uint8) {
		if len(prog) > 300 {
			prog = prog[:300]
		}
		checkChunksMatchBatches(t, chunkModes[int(mode)%len(chunkModes)], prog)
	})
}

// epochChanges reports whether some producer's batches in the chunk carry
// more than one producer epoch.
func epochChanges(batches [][]byte) bool {
	epochs := map[int64]int16{}
	for _, x := range batches {
		b := codec.Batch(x)
		if b.ProducerID() < 0 {
			continue
		}
		if e, ok := epochs[b.ProducerID()]; ok && e != b.ProducerEpoch() {
			return true
		}
		epochs[b.ProducerID()] = b.ProducerEpoch()
	}
	return false
}

// withoutSnapshot is a partitionState without its producer-state digest.
func withoutSnapshot(state string) string {
	i := strings.Index(state, " snapshot=")
	j := strings.Index(state, " aborted=")
	if i < 0 || j < i {
		return state
	}
	return state[:i] + state[j:]
}
