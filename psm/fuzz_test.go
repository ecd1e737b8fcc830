package psm

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
)

// diff drives a Model and a Store with the same operations and fails on the
// first different answer or state.
type diff struct {
	t     testing.TB
	model *Model
	store *Store
	base  PartitionID // the Store's partition = base + the Model's
	opts  Options     // for a restart's new Model and Store
	// sharedGuards: the Store is shared with other drivers, so its guard
	// counter runs ahead of the Model's; guard values are not compared.
	sharedGuards bool
	next         [2]int64 // log end offset per partition
	now          int64
	src          []byte
	step         int
	ops          []traceOp // trace for the failure message
}

// traceOp records one operation; it is formatted only when a check fails.
type traceOp struct {
	p    PartitionID
	what string
	b    Batch
	x    int64
}

func (d *diff) trace(p PartitionID, what string, b Batch, x int64) {
	d.ops = append(d.ops, traceOp{p, what, b, x})
}

func (d *diff) byte() byte {
	if len(d.src) == 0 {
		return 0
	}
	b := d.src[0]
	d.src = d.src[1:]
	return b
}

func (d *diff) fail(format string, args ...any) {
	d.t.Helper()
	var ops strings.Builder
	for _, o := range d.ops {
		fmt.Fprintf(&ops, "  p%d %s %+v %d\n", o.p, o.what, o.b, o.x)
	}
	d.t.Fatalf("step %d: %s\nops:\n%s", d.step, fmt.Sprintf(format, args...), ops.String())
}

func optionsFrom(b byte) Options {
	return Options{
		HasProducerID:      HasProducerIDRule(b & 1),
		BarrierApply:       BarrierApply(b >> 1 & 1),
		VerifyTransactions: b>>2&1 == 1,
		ExpirationMs:       int64(b>>3)*7 + 1,
		Release:            Release(b >> 6), // Kafka4, Kafka3, Kafka40, Kafka41
		DedupCRC:           b>>3&1 == 1,     // shares its bit with ExpirationMs
	}
}

var fuzzPIDs = [...]int64{0, 1, 2, 3, 1000, -2, -1, math.MaxInt64}
var fuzzSeqs = [...]int32{0, 1, 2, 3, 4, 5, 6, -1, math.MaxInt32, math.MaxInt32 - 1}

// batch decodes one batch: 4 bytes.
func (d *diff) batch() Batch {
	k, p, e, s := d.byte(), d.byte(), d.byte(), d.byte()
	b := Batch{
		ProducerID:      fuzzPIDs[p%8],
		ProducerEpoch:   int16(e%4) - int16(e>>7), // mostly 0..3, sometimes -1
		BaseSequence:    fuzzSeqs[int(s)%len(fuzzSeqs)],
		LastOffsetDelta: int32(s>>4) % 3,
		MaxTimestamp:    d.now - int64(k>>5),
		// Two CRCs, so that a repeated sequence range is a retry or a
		// collision (Options.DedupCRC), and sometimes none known.
		CRC:    uint32(e >> 4 & 1),
		HasCRC: e>>5&1 == 0,
	}
	if e>>6&1 == 1 { // the top of the epoch range: exhaustion at Short.MAX_VALUE
		b.ProducerEpoch += math.MaxInt16 - 3
	}
	b.RecordsCount = b.LastOffsetDelta + 1
	switch k % 8 {
	case 0, 1, 2:
	case 3, 4:
		b.Transactional = true
	case 5, 6:
		b.Control, b.Transactional, b.LastOffsetDelta, b.BaseSequence = true, true, 0, -1
		b.ControlType = codec.ControlType(k >> 3 % 2)
		b.CoordinatorEpoch = int32(e>>2) % 4
		b.TxnVersion = TxnVersion(s%4) - 1 // TVUnknown, TV0, TV1, TV2
		b.ControlTimestamp = d.now
		b.RecordsCount = 1
		if k>>6 == 3 {
			b.RecordsCount = 0
		}
		if k>>5 == 5 {
			b.ControlType = codec.ControlLeaderChange
		}
	case 7:
		b = barrierBatch()
	}
	return b
}

func sameErr(a, b error) bool { return errors.Is(a, b) && errors.Is(b, a) || a == nil && b == nil }

func (d *diff) compareState(p PartitionID) {
	d.t.Helper()
	ms, ss := dumpState(d.model, p), dumpState(d.store, d.base+p)
	if !equalState(ms, ss) {
		d.fail("partition %d state differs\nmodel %+v\nstore %+v", p, ms, ss)
	}
	if d.model.ProducerCount(p) != d.store.ProducerCount(d.base+p) {
		d.fail("count model %d store %d", d.model.ProducerCount(p), d.store.ProducerCount(d.base+p))
	}
	mf, mok := d.model.FirstUnstableOffset(p)
	sf, sok := d.store.FirstUnstableOffset(d.base + p)
	if mf != sf || mok != sok {
		d.fail("FUO model %d %v store %d %v", mf, mok, sf, sok)
	}
	// HasLateTransaction on both sides of the bound of the oldest open
	// transaction's producer.
	bound := int64(DefaultMaxTransactionTimeoutMs + LateTransactionBufferMs)
	nows := []int64{d.now}
	if txns := d.model.OpenTxns(nil, p); len(txns) > 0 {
		if in, ok := d.model.Producer(p, txns[0].ProducerID); ok {
			nows = append(nows, in.LastTimestamp+bound, in.LastTimestamp+bound+1)
		}
	}
	for _, now := range nows {
		if a, b := d.model.HasLateTransaction(p, now), d.store.HasLateTransaction(d.base+p, now); a != b {
			d.fail("HasLateTransaction(%d) model %v store %v", now, a, b)
		}
	}
	hw := d.next[p] / 2
	if a, b := d.model.LastStableOffset(p, hw), d.store.LastStableOffset(d.base+p, hw); a != b {
		d.fail("LSO model %d store %d", a, b)
	}
	if invariants.Enabled {
		checkPartFull(d.store.part(d.base + p))
	}
}

func (d *diff) run() {
	for len(d.src) > 0 && d.step < 400 {
		d.step++
		op, pb := d.byte(), d.byte()
		p := PartitionID(pb % 2)
		d.now += int64(op >> 5)
		switch op % 8 {
		case 0, 1, 2, 3: // an append of 1-4 batches (a chunk: 1-16), committed (or aborted when op%4 == 3)
			ob := d.byte()
			origin := Origin(ob % 3)
			n := int(d.byte()%4) + 1
			chunk := ob&0x80 != 0 // the Store's append begun with BeginChunk, as appendpath begins a fetch's
			if chunk {
				n += int(ob>>3) % 4 * 4
			}
			ma, sa := d.model.Begin(p, origin), d.store.Begin(d.base+p, origin)
			if chunk {
				sa.(*StoreAppender).BeginChunk(origin)
				sa = chunkAdder{sa.(*StoreAppender)}
			}
			gb := d.byte()
			if n == 1 && op%4 != 3 && gb >= 128 && !chunk { // one batch through Update, which has no guard
				d.update(p, origin)
				break
			}
			g := Guard(gb % 4)
			ma.SetGuard(g)
			sa.SetGuard(g)
			next := d.next[p]
			for range n {
				b := d.batch()
				b.BaseOffset = next
				what := "add "
				if chunk {
					what = "chunk add "
				}
				d.trace(p, what+origin.String(), b, 0)
				mo, merr := ma.Add(&b)
				so, serr := sa.Add(&b)
				if val(mo) != val(so) || !sameErr(merr, serr) || (mo == nil) != (merr != nil) ||
					(so == nil) != (serr != nil) {
					d.fail("Add %+v: model (%+v, %v) store (%+v, %v)", b, val(mo), merr, val(so), serr)
				}
				if merr == nil && !val(mo).Duplicate.Found {
					next += int64(b.LastOffsetDelta) + 1
				}
			}
			for _, pid := range fuzzPIDs {
				mi, mok := ma.Pending(pid)
				si, sok := sa.Pending(pid)
				if mok != sok || mi != si {
					d.fail("Pending(%d): model %+v %v store %+v %v", pid, mi, mok, si, sok)
				}
			}
			if op%4 == 3 {
				d.trace(p, "abort", Batch{}, 0)
				ma.Abort()
				sa.Abort()
				break
			}
			mc, sc := ma.Commit(), sa.Commit()
			d.trace(p, "commit", Batch{}, 0)
			if !slices.Equal(mc.Completed, sc.Completed) || !slices.Equal(mc.Aborted, sc.Aborted) ||
				mc.Barriers != sc.Barriers || mc.KeptOpenTxns != sc.KeptOpenTxns {
				d.fail("Commit: model %+v store %+v", mc, sc)
			}
			d.next[p] = next
		case 4:
			d.trace(p, "reset", Batch{}, 0)
			if a, b := d.model.Reset(p), d.store.Reset(d.base+p); a != b {
				d.fail("Reset kept model %d store %d", a, b)
			}
		case 5:
			d.trace(p, "expire", Batch{}, d.now)
			if a, b := d.model.ExpireProducers(p, d.now), d.store.ExpireProducers(d.base+p, d.now); a != b {
				d.fail("Expire model %d store %d", a, b)
			}
		case 6:
			hw := d.next[p] - int64(d.byte()%4)
			d.trace(p, "hw", Batch{}, hw)
			d.model.OnHighWatermark(p, hw)
			d.store.OnHighWatermark(d.base+p, hw)
		case 7:
			switch d.byte() % 4 {
			case 0: // snapshot round trip through the other implementation's bytes
				if pb&2 != 0 && !d.sharedGuards {
					d.restart()
					break
				}
				snap := d.store.AppendSnapshot(nil, d.base+p)
				d.trace(p, "snapshot reload", Batch{}, d.now)
				if err := d.model.LoadSnapshot(p, snap, d.now); err != nil {
					d.fail("model load: %v", err)
				}
				if err := d.store.LoadSnapshot(d.base+p, d.model.AppendSnapshot(nil, p), d.now); err != nil {
					d.fail("store load: %v", err)
				}
			case 1:
				b := d.batch()
				tv := TxnVersion(d.byte()%4) - 1 // the produce request's: TVUnknown, TV0, TV1, TV2
				d.trace(p, "verify "+tv.String(), b, d.now)
				a, aerr := d.model.StartVerification(p, b.ProducerID, b.BaseSequence, b.ProducerEpoch, tv, d.now)
				s, serr := d.store.StartVerification(d.base+p, b.ProducerID, b.BaseSequence, b.ProducerEpoch, tv, d.now)
				if a != s && !d.sharedGuards || !sameErr(aerr, serr) {
					d.fail("StartVerification model (%d, %v) store (%d, %v)", a, aerr, s, serr)
				}
			case 2:
				d.trace(p, "clear", Batch{}, 0)
				d.model.Clear(p)
				d.store.Clear(d.base + p)
			case 3:
				pid := fuzzPIDs[d.byte()%8]
				a, aok := d.model.Producer(p, pid)
				b, bok := d.store.Producer(d.base+p, pid)
				if a != b || aok != bok {
					d.fail("Producer(%d): model %+v %v store %+v %v", pid, a, aok, b, bok)
				}
			}
		}
		d.compareState(p)
	}
	d.compareState(0)
	d.compareState(1)
}

// restart is a broker restart: a new Model and Store, each partition loaded
// from the other implementation's snapshot, so that what lives in memory
// only (verification entries, guards, cached CRCs) is gone.
func (d *diff) restart() {
	d.trace(0, "restart", Batch{}, d.now)
	model, store := NewModel(d.opts), NewStore(d.opts)
	for q := range PartitionID(2) {
		if err := model.LoadSnapshot(q, d.store.AppendSnapshot(nil, d.base+q), d.now); err != nil {
			d.fail("model load: %v", err)
		}
		if err := store.LoadSnapshot(d.base+q, d.model.AppendSnapshot(nil, q), d.now); err != nil {
			d.fail("store load: %v", err)
		}
	}
	d.model, d.store = model, store
}

// update is an append of one batch through manager.Update (begun appenders
// of the same partition left unfinished, which Update discards).
func (d *diff) update(p PartitionID, origin Origin) {
	b := d.batch()
	b.BaseOffset = d.next[p]
	d.trace(p, "update "+origin.String(), b, 0)
	mo, mc, merr := d.model.Update(p, origin, &b)
	so, sc, serr := d.store.Update(d.base+p, origin, &b)
	if val(mo) != val(so) || !sameErr(merr, serr) || (mo == nil) != (merr != nil) || (so == nil) != (serr != nil) {
		d.fail("Update %+v: model (%+v, %v) store (%+v, %v)", b, val(mo), merr, val(so), serr)
	}
	applied := merr == nil && !mo.Duplicate.Found
	if (mc != nil) != applied || (sc != nil) != applied {
		d.fail("Update %+v: Committed model %v store %v, applied %v", b, mc != nil, sc != nil, applied)
	}
	if !applied {
		return
	}
	if !slices.Equal(mc.Completed, sc.Completed) || !slices.Equal(mc.Aborted, sc.Aborted) ||
		mc.Barriers != sc.Barriers || mc.KeptOpenTxns != sc.KeptOpenTxns {
		d.fail("Update's Commit: model %+v store %+v", mc, sc)
	}
	d.next[p] += int64(b.LastOffsetDelta) + 1
}

func runDiff(t testing.TB, src []byte) {
	if len(src) == 0 {
		return
	}
	opts := optionsFrom(src[0])
	d := &diff{t: t, model: NewModel(opts), store: NewStore(opts), opts: opts, src: src[1:], now: 1000}
	d.run()
}

// FuzzStoreMatchesModel: the sharded Store gives the same answers and holds
// the same state as the reference Model for any operation sequence, its
// appends begun with Begin or with BeginChunk (chunks of up to 16 batches
// of mixed producers, transactions, markers and barriers).
func FuzzStoreMatchesModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0})
	f.Add([]byte{1, 0, 0, 1, 3, 0, 3, 0, 0, 0, 5, 0, 1, 0, 7, 0, 0, 0, 0, 0, 1, 0, 1, 2, 1})
	f.Add([]byte{2, 1, 0, 0, 3, 3, 1, 0, 1, 7, 0, 0, 0, 4, 1, 2, 3, 0, 1, 1, 0})
	f.Add([]byte{4, 7, 1, 0, 0, 3, 1, 2, 0, 0, 1, 2, 0, 0, 0, 1, 0})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 8 {
		b := make([]byte, 300)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) { runDiff(t, src) })
}

// TestStoreMatchesModelRandom runs the differential check on random
// operation sequences in a plain `go test`.
func TestStoreMatchesModelRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	runs := 300
	if testing.Short() {
		runs = 30
	}
	for range runs {
		b := make([]byte, 1+rng.IntN(1500))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		runDiff(t, b)
	}
}

// TestStoreMatchesModelManyProducers stresses table growth, stale slots after
// barriers, tombstones after expiration and rehashing with thousands of PIDs,
// in appends (half of them begun with BeginChunk) of up to 60 batches.
func TestStoreMatchesModelManyProducers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	opts := Options{ExpirationMs: 400}
	d := &diff{t: t, model: NewModel(opts), store: NewStore(opts), now: 1000}
	seq := map[int64]int32{}
	for round := range 300 {
		d.step = round
		d.now += int64(rng.IntN(20))
		switch r := rng.IntN(20); {
		case r == 0:
			d.trace(0, "reset", Batch{}, 0)
			if a, b := d.model.Reset(0), d.store.Reset(0); a != b {
				d.fail("reset %d %d", a, b)
			}
			clear(seq)
		case r == 1:
			d.trace(0, "expire", Batch{}, d.now)
			if a, b := d.model.ExpireProducers(0, d.now), d.store.ExpireProducers(0, d.now); a != b {
				d.fail("expire %d %d", a, b)
			}
		case r == 2:
			d.trace(0, "snapshot reload", Batch{}, d.now)
			snap := d.store.AppendSnapshot(nil, 0)
			if d.model.LoadSnapshot(0, snap, d.now) != nil || d.store.LoadSnapshot(0, snap, d.now) != nil {
				d.fail("reload")
			}
		default:
			origin := Origin(rng.IntN(3))
			ma, sa := d.model.Begin(0, origin), d.store.BeginAppend(0, origin)
			add := sa.Add
			if rng.IntN(2) == 0 {
				sa.BeginChunk(origin) // a fetch's chunk: past linearPending producers, the pending index
				add = sa.AddChunk
			}
			for range 1 + rng.IntN(60) {
				pid := int64(rng.IntN(4000))
				b := data(pid, 0, seq[pid], 1)
				b.MaxTimestamp = d.now
				b.BaseOffset = d.next[0]
				mo, merr := ma.Add(&b)
				so, serr := add(&b)
				if val(mo) != val(so) || merr != serr || (mo == nil) != (merr != nil) {
					d.fail("add %+v: %v %v", b, merr, serr)
				}
				if merr == nil {
					seq[pid]++
					d.next[0]++
				}
			}
			ma.Commit()
			sa.Commit()
		}
		if round%25 == 0 {
			d.compareState(0)
		}
	}
	d.compareState(0)
	if d.store.ProducerCount(0) < 100 {
		t.Fatalf("only %d producers: the test did not stress the table", d.store.ProducerCount(0))
	}
}
