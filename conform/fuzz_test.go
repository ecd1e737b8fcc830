package conform

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/kafkaerr"
)

// Bounds of one fuzz input: at most maxFuzzOps operations (each one to four
// requests), each request bounded by the Target's timeout, the whole input by
// fuzzInputTimeout.
const (
	maxFuzzOps       = 24
	fuzzInputTimeout = 20 * time.Second
)

// Known divergences of kfake (results/conform-kfake.md): a fuzz input that
// reaches one stops there and passes; any other divergence fails.
const (
	knownNone = ""
	// knownNewLogSeq is KAFKA-15591 (Kafka 4.5): a nonzero first sequence
	// from a producer with no state on a partition that never held a record.
	knownNewLogSeq = "KAFKA-15591"
	// knownWrap is kfake's sequence wrap one early.
	knownWrap = "kfake sequence wrap"
	// knownTxnFromIdempotent is kfake's acceptance of a transactional batch
	// from a PID without a transactional ID.
	knownTxnFromIdempotent = "kfake transactional batch from idempotent PID"
	// knownMarkerOnlySeq is kfake's sequence check of a producer whose only
	// state on the partition is an end marker.
	knownMarkerOnlySeq = "kfake sequence after a marker only"
	// knownRejectedEpoch is kfake's stored epoch raised by a batch it refused.
	knownRejectedEpoch = "kfake epoch raised by a refused batch"
	// knownVerificationEntry is kfake's lack of the verification entry's
	// lowest sequence (KIP-890): a duplicate that started verification
	// leaves it in place.
	knownVerificationEntry = "kfake verification lowest sequence"
)

type fuzzProducer struct {
	p       *producer
	sent    []batch // batches the model accepted (not duplicates), oldest first
	nearMax bool    // a batch of this producer crossed sequence 2147483647
	// raised: a batch with an epoch above the stored one was refused
	raised bool
	// verifiedDup: a transactional duplicate started a verification that
	// no appended transactional batch has cleared yet
	verifiedDup bool
	txn         bool // has a transactional ID
	open        bool // partition added to its transaction
}

// fuzzRun decodes ops from data and runs them as one case.
type fuzzRun struct {
	data  []byte
	id    int64
	last  string // the known divergence the last produce could show
	prods []*fuzzProducer
}

func (f *fuzzRun) op(i int) (byte, byte, bool) {
	if 2*i+1 >= len(f.data) || i >= maxFuzzOps {
		return 0, 0, false
	}
	return f.data[2*i], f.data[2*i+1], true
}

func (f *fuzzRun) run(c *caseRun) {
	idem := func() *fuzzProducer { return &fuzzProducer{p: c.initProducer("InitProducerId", "")} }
	txn := &fuzzProducer{p: c.initProducer("InitProducerId transactional", "t"), txn: true}
	c.txnIDs()[txn.p.pid] = *txn.p.txnID
	forged := &fuzzProducer{p: &producer{pid: 0x3a5b_0000_0000_0000 | f.id, epoch: 0}}
	f.prods = []*fuzzProducer{idem(), idem(), txn, forged}
	for i := 0; ; i++ {
		a, b, ok := f.op(i)
		if !ok {
			break
		}
		switch a % 8 {
		case 0, 1: // produce from an idempotent or the forged producer
			fp := f.prods[[]int{0, 1, 3, 0}[b&3]]
			f.produce(c, fp, b>>2, false)
		case 2: // a producer-side epoch or sequence change
			fp := f.prods[[]int{0, 1, 3, 0}[b&3]]
			switch (b >> 2) % 4 {
			case 0:
				fp.p.epoch++
				fp.p.seq = 0
			case 1:
				if fp.p.epoch > 0 {
					fp.p.epoch--
				}
			case 2:
				fp.p.seq = math.MaxInt32 - int32((b>>4)%3)
			case 3:
				fp.p.seq = 0
			}
		case 3:
			if !txn.open {
				c.begin("AddPartitionsToTxn", txn.p)
				txn.open = true
			}
		case 4: // a transactional batch from the transactional producer
			f.produce(c, txn, b, true)
		case 5:
			if txn.open {
				c.end("EndTxn", txn.p, b&1 == 0)
				txn.open, txn.verifiedDup = false, false // the marker clears the verification entry
			}
		case 6:
			c.check(fmt.Sprintf("check %d", i))
		case 7: // a transactional batch from a producer InitProducerId gave no transactional ID
			fp := f.prods[[]int{0, 1, 3, 3}[b&3]]
			c.txnIDs()[fp.p.pid] = c.topic + "-none"
			f.produce(c, fp, b>>2, true)
		}
	}
	c.check("end")
}

// produce sends fp's next batch, a retry of one of its batches, or a gap,
// as mode says; it notes which known divergence the batch could show.
func (f *fuzzRun) produce(c *caseRun, fp *fuzzProducer, mode byte, txnal bool) {
	n := 1 + int(mode>>4)%3
	seq := fp.p.seq
	switch mode % 4 {
	case 1: // a retry of an earlier batch
		if len(fp.sent) > 0 {
			old := fp.sent[len(fp.sent)-1-int(mode>>2)%min(len(fp.sent), 6)]
			seq, n = old.seq, len(old.values)
		}
	case 2: // a gap
		seq = codec.IncrementSequence(seq, 1+int32(mode>>2)%2)
	}
	in, known := c.ref.m.Producer(refPartition, fp.p.pid)
	f.last = knownNone
	switch {
	case txnal && !fp.txn:
		f.last = knownTxnFromIdempotent
	case fp.raised:
		f.last = knownRejectedEpoch
	case txnal && fp.verifiedDup:
		f.last = knownVerificationEntry
	case fp.nearMax:
		f.last = knownWrap
	case !known && c.ref.leo == 0 && seq != 0:
		f.last = knownNewLogSeq
	case known && in.NumBatches == 0 && in.Epoch == fp.p.epoch && seq != 0:
		f.last = knownMarkerOnlySeq
	}
	b := batch{pid: fp.p.pid, epoch: fp.p.epoch, seq: seq, txn: txnal,
		values: c.values(fmt.Sprintf("f%d/%d/%d", f.id, fp.p.pid, seq), n)}
	before := c.ref.leo
	w := c.send("produce", b)
	if w.code != 0 && known && fp.p.epoch > in.Epoch {
		fp.raised = true
	}
	ongoing := known && in.TxnFirstOffset >= 0 && in.Epoch == fp.p.epoch
	switch {
	case txnal && w.code == 0 && c.ref.leo == before && !ongoing && fp.open:
		fp.verifiedDup = true
	case txnal && w.code == 0 && c.ref.leo != before:
		fp.verifiedDup = false
	}
	if w.code == 0 && c.ref.leo != before { // accepted, not a duplicate
		fp.sent = append(fp.sent, b)
		if int64(seq)+int64(n) >= math.MaxInt32 {
			fp.nearMax = true
		}
		if mode%4 != 1 {
			fp.p.seq = codec.IncrementSequence(seq, int32(n))
		}
	}
}

var (
	fuzzKfake     *Kfake
	fuzzTarget    *Target
	fuzzKfakeErr  error
	fuzzKfakeOnce sync.Once
	fuzzInputs    atomic.Int64
)

// FuzzKfakeMatchesModel drives random request sequences against kfake and
// the reference model and fails on any divergence that is not one of the
// known ones of results/conform-kfake.md. The named seeds in
// testdata/fuzz/FuzzKfakeMatchesModel reproduce each known one
// (TestFuzzSeedsReachKnownDivergences).
func FuzzKfakeMatchesModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 1, 6, 0})
	f.Add([]byte{3, 0, 4, 0, 0, 0, 4, 0, 6, 0, 5, 1, 6, 0})
	f.Add([]byte{0, 0, 0, 16, 0, 1, 0, 5, 0, 9, 0, 13, 2, 0, 0, 0, 2, 4, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		res, r := runFuzzInput(t, data)
		if res.Verdict == Diverges && knownDivergence(res, r) == knownNone {
			t.Fatalf("divergence at %s: kafka %s / broker %s\nrequest %s\nresponse %s",
				res.Diff.Step, res.Diff.Kafka, res.Diff.Broker, res.Diff.Request, res.Diff.Response)
		}
	})
}

func runFuzzInput(t *testing.T, data []byte) (Result, *fuzzRun) {
	t.Helper()
	fuzzKfakeOnce.Do(func() {
		if fuzzKfake, fuzzKfakeErr = StartKfake(); fuzzKfakeErr == nil {
			fuzzTarget, fuzzKfakeErr = fuzzKfake.Dial(context.Background(), 5*time.Second)
		}
	})
	if fuzzKfakeErr != nil {
		t.Fatal(fuzzKfakeErr)
	}
	id := fuzzInputs.Add(1)
	r := &fuzzRun{data: data, id: id}
	ctx, cancel := context.WithTimeout(context.Background(), fuzzInputTimeout)
	defer cancel()
	res, err := RunCase(ctx, fuzzTarget, fmt.Sprintf("fz%d-%d-", time.Now().UnixNano(), id),
		Case{Name: "input", Rule: "random", Class: "psm.Model", run: r.run})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == Unsupported {
		t.Fatalf("unsupported: %s", res.Reason)
	}
	return res, r
}

// TestFuzzSeedsReachKnownDivergences runs the named seeds: each must reach
// the known divergence its name says, so a fix in kfake shows here as well.
func TestFuzzSeedsReachKnownDivergences(t *testing.T) {
	for name, want := range map[string]string{
		"new-log-nonzero-seq":               knownNewLogSeq,
		"wrap":                              knownWrap,
		"txn-from-idempotent-pid":           knownTxnFromIdempotent,
		"txn-from-idempotent-pid-gap":       knownTxnFromIdempotent,
		"txn-from-idempotent-pid-old-epoch": knownTxnFromIdempotent,
		"empty-txn-then-gap":                knownMarkerOnlySeq,
	} {
		data := readSeed(t, "testdata/fuzz/FuzzKfakeMatchesModel/"+name)
		res, r := runFuzzInput(t, data)
		if got := knownDivergence(res, r); got != want {
			t.Errorf("seed %s: verdict %s, known divergence %q; want %q", name, res.Summary(), got, want)
		}
	}
}

// knownDivergence is the known divergence res shows, or knownNone: the
// last produce could show r.last and the answers are that divergence's.
func knownDivergence(res Result, r *fuzzRun) string {
	if res.Verdict != Diverges || res.Diff.Step != "produce" {
		return knownNone
	}
	d := res.Diff
	switch r.last {
	case knownTxnFromIdempotent:
		// kfake does not refuse the batch: it accepts it, or applies its
		// idempotent checks (sequence, epoch) instead.
		if d.Kafka == codeName(kafkaerr.InvalidTxnState.Code) && d.Broker != d.Kafka {
			return r.last
		}
	case knownMarkerOnlySeq:
		if d.Kafka == codeName(kafkaerr.OutOfOrderSequenceNumber.Code) && strings.HasPrefix(d.Broker, "base offset") {
			return r.last
		}
	case knownVerificationEntry:
		if d.Kafka == codeName(kafkaerr.OutOfOrderSequenceNumber.Code) && strings.HasPrefix(d.Broker, "base offset") {
			return r.last
		}
	case knownRejectedEpoch:
		if d.Broker == codeName(kafkaerr.InvalidProducerEpoch.Code) && d.Kafka != d.Broker {
			return r.last
		}
	case knownWrap:
		// kfake expects the wrong next sequence: it refuses the right one
		// and accepts the wrong one.
		oos := codeName(kafkaerr.OutOfOrderSequenceNumber.Code)
		if strings.HasPrefix(d.Kafka, "base offset") && d.Broker == oos ||
			d.Kafka == oos && strings.HasPrefix(d.Broker, "base offset") {
			return r.last
		}
	case knownNewLogSeq:
		if strings.HasPrefix(d.Kafka, "base offset") && d.Broker == codeName(kafkaerr.OutOfOrderSequenceNumber.Code) {
			return r.last
		}
	}
	return knownNone
}

// readSeed decodes a file of the Go fuzzing corpus holding one []byte.
func readSeed(t *testing.T, path string) []byte {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(src)), "\n")
	if len(lines) != 2 || lines[0] != "go test fuzz v1" ||
		!strings.HasPrefix(lines[1], "[]byte(") || !strings.HasSuffix(lines[1], ")") {
		t.Fatalf("%s: not a one-[]byte corpus file", path)
	}
	v, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(v)
}
