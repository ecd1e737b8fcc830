package conform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mirrorpath/mirrorpath/codec"
)

// Verdict is the outcome of one case.
type Verdict string

const (
	OK          Verdict = "ok"
	Diverges    Verdict = "diverges"
	Unsupported Verdict = "unsupported"
)

// Result is one case's outcome. For Diverges, Diff is the first response that
// differs from Kafka's; the case stops there since the broker's state and the
// model's are no longer comparable.
type Result struct {
	Case    string  `json:"case"`
	Rule    string  `json:"rule"`
	Class   string  `json:"kafka_class"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"` // why unsupported
	Diff    *Diff   `json:"diff,omitempty"`
}

// Diff is the first differing response of a case.
type Diff struct {
	Step     string `json:"step"`
	Kafka    string `json:"kafka"`  // what Kafka answers
	Broker   string `json:"broker"` // what the broker answered
	Request  string `json:"request"`
	Response string `json:"response"`
}

// Summary is "diverges: <kafka> / <broker>" or the verdict.
func (r Result) Summary() string {
	switch r.Verdict {
	case Diverges:
		return "diverges: " + r.Diff.Kafka + " / " + r.Diff.Broker
	case Unsupported:
		return "unsupported (" + r.Reason + ")"
	}
	return string(r.Verdict)
}

// Case is one check of a Kafka producer rule reachable by a client.
type Case struct {
	Name  string
	Rule  string // the rule, in Kafka's terms
	Class string // the Kafka class or method that implements it
	// Needs lists the requests the case sends, each at the lowest version
	// that carries what the case needs.
	Needs []Need
	run   func(c *caseRun)
}

// errStop ends a case after a divergence or an unsupported step.
var errStop = errors.New("conform: case stopped")

type caseRun struct {
	ctx   context.Context
	t     *Target
	ref   *ref
	topic string
	res   *Result
	err   error // a connection error: the whole run stops

	now int64
}

// Run runs cases (all of Cases when nil) against t, each on its own new
// topic whose name starts with prefix. A connection error stops the run and
// is returned with the results so far.
func Run(ctx context.Context, t *Target, prefix string, cases []Case) ([]Result, error) {
	if cases == nil {
		cases = Cases()
	}
	var out []Result
	for _, c := range cases {
		res, err := RunCase(ctx, t, prefix, c)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// RunCase runs one case.
func RunCase(ctx context.Context, t *Target, prefix string, c Case) (Result, error) {
	res := Result{Case: c.Name, Rule: c.Rule, Class: c.Class, Verdict: OK}
	if n, lacks := t.Versions.lacks(c.Needs...); lacks {
		res.Verdict, res.Reason = Unsupported, n.String()
		return res, nil
	}
	cr := &caseRun{ctx: ctx, t: t, ref: newRef(), topic: prefix + c.Name, res: &res, now: time.Now().UnixMilli()}
	if err := t.CreateTopic(ctx, cr.topic); err != nil {
		if errors.Is(err, ErrConnect) {
			return res, err
		}
		res.Verdict, res.Reason = Unsupported, "topic setup: "+err.Error()
		return res, nil
	}
	func() {
		defer func() {
			if p := recover(); p != nil && p != errStop { //nolint:errorlint // sentinel identity
				panic(p)
			}
		}()
		c.run(cr)
	}()
	if !t.KeepTopics && cr.err == nil {
		t.DeleteTopic(ctx, cr.topic)
	}
	return res, cr.err
}

// fail ends the case on a request error: a connection error stops the run,
// an unsupported version marks the case unsupported, anything else diverges.
func (c *caseRun) fail(step string, req kmsg.Request, err error) {
	var ue *unsupportedError
	switch {
	case errors.Is(err, ErrConnect):
		c.err = err
		c.res.Verdict, c.res.Reason = Unsupported, "broker unreachable"
	case errors.As(err, &ue):
		c.res.Verdict, c.res.Reason = Unsupported, ue.Need.String()
	default:
		c.diverge(step, "an answer", "request error: "+err.Error(), req, nil)
		return
	}
	panic(errStop)
}

func (c *caseRun) diverge(step, kafka, broker string, req kmsg.Request, resp kmsg.Response) {
	c.res.Verdict = Diverges
	c.res.Diff = &Diff{Step: step, Kafka: kafka, Broker: broker, Request: describeRequest(req), Response: describeResponse(resp)}
	panic(errStop)
}

func (c *caseRun) unsupported(reason string) {
	c.res.Verdict, c.res.Reason = Unsupported, reason
	panic(errStop)
}

// codeName is an error code's name and number (NONE for 0).
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return fmt.Sprintf("%s (%d)", errName(code), code)
}

// producer is a producer ID and epoch with the next sequence to send.
type producer struct {
	pid   int64
	epoch int16
	seq   int32
	txnID *string
}

// initProducer asks the broker for an idempotent (txnID "") or
// transactional producer ID.
func (c *caseRun) initProducer(step, txnID string) *producer {
	var id *string
	if txnID != "" {
		s := c.topic + "-" + txnID
		id = &s
	}
	req, resp, err := c.t.initProducerID(c.ctx, id, -1, -1)
	if err != nil {
		c.fail(step, req, err)
	}
	if resp.ErrorCode != 0 {
		c.diverge(step, "NONE", codeName(resp.ErrorCode), req, resp)
	}
	return &producer{pid: resp.ProducerID, epoch: resp.ProducerEpoch, txnID: id}
}

// bumpProducer asks the coordinator to bump p's epoch, naming p's producer
// ID and epoch (InitProducerId v3, KIP-360); it returns the producer at the
// new epoch, whose sequence starts again at 0.
func (c *caseRun) bumpProducer(step string, p *producer) *producer {
	req, resp, err := c.t.initProducerID(c.ctx, p.txnID, p.pid, p.epoch)
	if err != nil {
		c.fail(step, req, err)
	}
	if resp.ErrorCode != 0 {
		c.diverge(step, "NONE", codeName(resp.ErrorCode), req, resp)
	}
	if resp.ProducerID != p.pid || resp.ProducerEpoch != p.epoch+1 {
		// TransactionCoordinator#handleInitProducerId keeps the producer
		// ID and bumps the epoch (a new ID only at epoch exhaustion).
		c.diverge(step, fmt.Sprintf("producer_id=%d epoch=%d", p.pid, p.epoch+1),
			fmt.Sprintf("producer_id=%d epoch=%d", resp.ProducerID, resp.ProducerEpoch), req, resp)
	}
	return &producer{pid: resp.ProducerID, epoch: resp.ProducerEpoch, txnID: p.txnID}
}

// batch is what one produce sends.
type batch struct {
	pid    int64
	epoch  int16
	seq    int32
	txn    bool
	values []string
}

func (c *caseRun) values(tag string, n int) []string {
	v := make([]string, n)
	for i := range v {
		v[i] = fmt.Sprintf("%s-%d", tag, i)
	}
	return v
}

// send produces b and compares the answer with Kafka's.
func (c *caseRun) send(step string, b batch) produceWant {
	h := codec.BatchHeader{
		PartitionLeaderEpoch: -1,
		BaseTimestamp:        c.now,
		ProducerID:           b.pid,
		ProducerEpoch:        b.epoch,
		BaseSequence:         b.seq,
	}
	if b.txn {
		h.Attributes |= codec.AttrTransactional
	}
	recs := make([]codec.Record, len(b.values))
	for i, v := range b.values {
		recs[i] = codec.Record{OffsetDelta: int32(i), Value: []byte(v)}
	}
	raw, err := codec.AppendBatch(nil, h, recs, codec.CompressionNone)
	if err != nil {
		c.err = fmt.Errorf("conform: %s: building the batch: %w", step, err)
		panic(errStop)
	}
	var txnID *string
	if b.txn {
		txnID = c.topicTxn(b.pid)
	}
	want := c.ref.produce(h, txnID, b.values, c.now)
	req, resp, err := c.t.produce(c.ctx, c.topic, txnID, raw)
	if err != nil {
		c.fail(step, req, err)
	}
	code, base := int16(-1), int64(-1)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			code, base = rp.ErrorCode, rp.BaseOffset
		}
	}
	if code != want.code {
		c.diverge(step, produceText(want.code, want.base), produceText(code, base), req, resp)
	}
	if code == 0 && base != want.base {
		c.diverge(step, produceText(want.code, want.base), produceText(code, base), req, resp)
	}
	return want
}

func produceText(code int16, base int64) string {
	if code == 0 {
		return fmt.Sprintf("base offset %d", base)
	}
	return codeName(code)
}

// topicTxn is the transactional ID a produce request from pid names, nil
// for none.
func (c *caseRun) topicTxn(pid int64) *string {
	s := c.txnIDs()[pid]
	if s == "" {
		return nil
	}
	return &s
}

func (c *caseRun) txnIDs() map[int64]string {
	if c.ref.txnIDs == nil {
		c.ref.txnIDs = map[int64]string{}
	}
	return c.ref.txnIDs
}

// begin adds the partition to p's transaction.
func (c *caseRun) begin(step string, p *producer) {
	req, resp, err := c.t.addPartition(c.ctx, *p.txnID, p.pid, p.epoch, c.topic)
	if err != nil {
		c.fail(step, req, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				c.diverge(step, "NONE", codeName(rp.ErrorCode), req, resp)
			}
		}
	}
	c.txnIDs()[p.pid] = *p.txnID
	c.ref.added[p.pid] = true
	c.ref.coordinated[p.pid] = true
}

// end commits or aborts p's transaction; the coordinator writes the marker.
func (c *caseRun) end(step string, p *producer, commit bool) {
	req, resp, err := c.t.endTxn(c.ctx, *p.txnID, p.pid, p.epoch, commit)
	if err != nil {
		c.fail(step, req, err)
	}
	if resp.ErrorCode != 0 {
		c.diverge(step, "NONE", codeName(resp.ErrorCode), req, resp)
	}
	if err := c.ref.marker(p.pid, p.epoch, !commit, c.now); err != nil {
		c.diverge(step, "marker written", "model refused the marker: "+err.Error(), req, resp)
	}
}

// data produces n records as p's next batch.
func (c *caseRun) data(step string, p *producer, txn bool, n int) produceWant {
	w := c.send(step, batch{pid: p.pid, epoch: p.epoch, seq: p.seq, txn: txn, values: c.values(fmt.Sprintf("%s/%d/%d", step, p.pid, p.seq), n)})
	if w.code == 0 {
		p.seq = codec.IncrementSequence(p.seq, int32(n))
	}
	return w
}

// check compares the high watermark, the LSO and what each isolation level
// reads with Kafka's.
func (c *caseRun) check(step string) {
	for _, iso := range []int8{0, 1} {
		want, what := c.ref.hw(), "high watermark"
		if iso == 1 {
			want, what = c.ref.lso(), "last stable offset"
		}
		s := step + ": ListOffsets latest " + isoName(iso)
		req, resp, err := c.t.listOffsets(c.ctx, c.topic, iso)
		if err != nil {
			c.fail(s, req, err)
		}
		got, code := int64(-1), int16(-1)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				got, code = rp.Offset, rp.ErrorCode
			}
		}
		if code != 0 {
			c.diverge(s, fmt.Sprintf("%s %d", what, want), codeName(code), req, resp)
		}
		if got != want {
			c.diverge(s, fmt.Sprintf("%s %d", what, want), fmt.Sprintf("%s %d", what, got), req, resp)
		}
	}
	for _, iso := range []int8{0, 1} {
		s := step + ": Fetch " + isoName(iso)
		req, resp, p := c.fetchAll(s, iso)
		if p.HighWatermark != c.ref.hw() {
			c.diverge(s, fmt.Sprintf("high watermark %d", c.ref.hw()), fmt.Sprintf("high watermark %d", p.HighWatermark), req, resp)
		}
		if p.LastStableOffset != c.ref.lso() {
			c.diverge(s, fmt.Sprintf("last stable offset %d", c.ref.lso()), fmt.Sprintf("last stable offset %d", p.LastStableOffset), req, resp)
		}
		want := c.ref.readUncommitted()
		if iso == 1 {
			want = c.ref.readCommitted()
		}
		got, err := consume(p, iso == 1)
		if err != nil {
			c.diverge(s, "well-formed batches", err.Error(), req, resp)
		}
		if !slices.Equal(got, want) {
			c.diverge(s, fmt.Sprintf("records %q", want), fmt.Sprintf("records %q", got), req, resp)
		}
	}
}

// maxFetches bounds the Fetch requests of one read of a partition.
const maxFetches = 64

// fetchAll reads topic/0 from offset 0 as a consumer does: Fetch from the
// offset after the last whole batch received, until the high watermark
// (read_uncommitted) or the last stable offset (read_committed) the first
// answer gave is reached, or an answer brings no whole batch. Kafka answers
// everything in one Fetch when it fits its byte limits (LocalLog#read); a
// broker may answer less, and a consumer asks again. It returns the last
// exchange, and one partition holding every batch and aborted transaction
// received.
func (c *caseRun) fetchAll(step string, iso int8) (*kmsg.FetchRequest, *kmsg.FetchResponse, *kmsg.FetchResponseTopicPartition) {
	var all *kmsg.FetchResponseTopicPartition
	seen := map[[2]int64]bool{}
	for offset, n := int64(0), 0; ; n++ {
		req, resp, err := c.t.Fetch(c.ctx, c.topic, offset, iso)
		if err != nil {
			c.fail(step, req, err)
		}
		var p *kmsg.FetchResponseTopicPartition
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				p = &resp.Topics[i].Partitions[j]
			}
		}
		if p == nil || p.ErrorCode != 0 || resp.ErrorCode != 0 {
			code := resp.ErrorCode
			if p != nil && code == 0 {
				code = p.ErrorCode
			}
			c.diverge(step, "NONE", codeName(code), req, resp)
		}
		if all == nil {
			cp := *p
			cp.RecordBatches, cp.AbortedTransactions = nil, nil
			all = &cp
		}
		for _, a := range p.AbortedTransactions {
			if k := [2]int64{a.ProducerID, a.FirstOffset}; !seen[k] {
				seen[k] = true
				all.AbortedTransactions = append(all.AbortedTransactions, a)
			}
		}
		next, buf := offset, p.RecordBatches
		for len(buf) > 0 {
			b, rest, err := codec.Next(buf)
			if err != nil {
				break // a cut batch, or one consume reports
			}
			if b.LastOffset() >= next {
				all.RecordBatches = append(all.RecordBatches, buf[:len(buf)-len(rest)]...)
				next = b.LastOffset() + 1
			}
			buf = rest
		}
		end := all.HighWatermark
		if iso == 1 {
			end = all.LastStableOffset
		}
		if len(buf) > 0 && next == offset {
			// Nothing whole before bytes that do not parse: consume says what.
			all.RecordBatches = append(all.RecordBatches, buf...)
		}
		if next == offset || next >= end || n+1 == maxFetches {
			return req, resp, all
		}
		offset = next
	}
}

func isoName(iso int8) string {
	if iso == 1 {
		return "read_committed"
	}
	return "read_uncommitted"
}

// consume returns the record values a consumer gets from one fetched
// partition. With readCommitted it drops the batches of aborted transactions
// as Kafka's consumer does (CompletedFetch): a transactional batch is
// skipped while its producer has an aborted transaction that started at or
// before it and whose ABORT marker has not been passed.
func consume(p *kmsg.FetchResponseTopicPartition, readCommitted bool) ([]string, error) {
	aborted := slices.Clone(p.AbortedTransactions)
	sort.Slice(aborted, func(i, j int) bool { return aborted[i].FirstOffset < aborted[j].FirstOffset })
	abortedPIDs := map[int64]bool{}
	var out []string
	buf := p.RecordBatches
	for len(buf) > 0 {
		b, rest, err := codec.Next(buf)
		if errors.Is(err, codec.ErrPartial) {
			break // a fetch may end in a cut batch
		}
		if err != nil {
			return out, err
		}
		buf = rest
		if readCommitted {
			for len(aborted) > 0 && aborted[0].FirstOffset <= b.LastOffset() {
				abortedPIDs[aborted[0].ProducerID] = true
				aborted = aborted[1:]
			}
		}
		if b.IsControl() {
			if readCommitted && b.IsTransactional() {
				if cr, err := b.ControlRecord(); err == nil && cr.Type == codec.ControlAbort {
					delete(abortedPIDs, b.ProducerID())
				}
			}
			continue
		}
		if readCommitted && b.IsTransactional() && abortedPIDs[b.ProducerID()] {
			continue
		}
		it := b.Records()
		for {
			r, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return out, err
			}
			out = append(out, string(r.Value))
		}
	}
	return out, nil
}
