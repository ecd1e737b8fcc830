package conform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
		return "unsupported: " + r.Reason
	}
	return string(r.Verdict)
}

// Case is one check of a Kafka producer rule reachable by a client.
type Case struct {
	Name  string
	Rule  string // the rule, in Kafka's terms
	Class string // the Kafka class or method that implements it
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
	now   int64
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
	cr := &caseRun{ctx: ctx, t: t, ref: newRef(), topic: prefix + c.Name, res: &res, now: time.Now().UnixMilli()}
	if err := t.CreateTopic(ctx, cr.topic); err != nil {
		return res, err
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
	switch {
	case errors.Is(err, ErrConnect):
		c.err = err
		c.res.Verdict, c.res.Reason = Unsupported, "broker unreachable"
	case errors.Is(err, kerr.UnsupportedVersion) || strings.Contains(err.Error(), "too old"):
		c.res.Verdict, c.res.Reason = Unsupported, step+": "+err.Error()
	default:
		c.diverge(step, "an answer", "request error: "+err.Error(), req, nil)
		return
	}
	panic(errStop)
}

func (c *caseRun) diverge(step, kafka, broker string, req kmsg.Request, resp kmsg.Response) {
	c.res.Verdict = Diverges
	c.res.Diff = &Diff{Step: step, Kafka: kafka, Broker: broker, Request: dump(req), Response: dump(resp)}
	panic(errStop)
}

func (c *caseRun) unsupported(reason string) {
	c.res.Verdict, c.res.Reason = Unsupported, reason
	panic(errStop)
}

func dump(v any) string {
	switch r := v.(type) {
	case nil:
		return ""
	case *kmsg.ProduceRequest:
		if r == nil {
			return ""
		}
		return describeProduce(r)
	}
	return fmt.Sprintf("%+v", v)
}

// describeProduce names the fields of a one-batch produce request that the
// cases vary, then the batch in hex.
func describeProduce(r *kmsg.ProduceRequest) string {
	txn := "null"
	if r.TransactionID != nil {
		txn = strconv.Quote(*r.TransactionID)
	}
	s := fmt.Sprintf("Produce v%d acks=%d transactional_id=%s", r.Version, r.Acks, txn)
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			s += fmt.Sprintf(" topic=%s partition=%d", t.Topic, p.Partition)
			if b, err := codec.ParseBatch(p.Records); err == nil {
				s += fmt.Sprintf(" producer_id=%d epoch=%d base_sequence=%d records=%d transactional=%t",
					b.ProducerID(), b.ProducerEpoch(), b.BaseSequence(), b.RecordsCount(), b.IsTransactional())
			}
			s += fmt.Sprintf(" batch=%x", p.Records)
		}
	}
	return s
}

func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		var ke *kerr.Error
		if errors.As(err, &ke) {
			return fmt.Sprintf("%s (%d)", ke.Message, code)
		}
	}
	return fmt.Sprintf("error %d", code)
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
	resp, err := c.t.InitProducerID(c.ctx, id)
	if err != nil {
		c.fail(step, nil, err)
	}
	if resp.ErrorCode != 0 {
		c.diverge(step, "NONE", codeName(resp.ErrorCode), nil, resp)
	}
	return &producer{pid: resp.ProducerID, epoch: resp.ProducerEpoch, txnID: id}
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
	req, resp, err := c.t.Produce(c.ctx, c.topic, txnID, raw)
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
	resp, err := c.t.AddPartition(c.ctx, *p.txnID, p.pid, p.epoch, c.topic)
	if err != nil {
		c.fail(step, nil, err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				c.diverge(step, "NONE", codeName(rp.ErrorCode), nil, resp)
			}
		}
	}
	c.txnIDs()[p.pid] = *p.txnID
	c.ref.added[p.pid] = true
}

// end commits or aborts p's transaction; the coordinator writes the marker.
func (c *caseRun) end(step string, p *producer, commit bool) {
	resp, err := c.t.EndTxn(c.ctx, *p.txnID, p.pid, p.epoch, commit)
	if err != nil {
		c.fail(step, nil, err)
	}
	if resp.ErrorCode != 0 {
		c.diverge(step, "NONE", codeName(resp.ErrorCode), nil, resp)
	}
	if err := c.ref.marker(p.pid, p.epoch, !commit, c.now); err != nil {
		c.diverge(step, "marker written", "model refused the marker: "+err.Error(), nil, resp)
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
		resp, err := c.t.ListOffsets(c.ctx, c.topic, iso)
		if err != nil {
			c.fail(s, nil, err)
		}
		got, code := int64(-1), int16(-1)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				got, code = rp.Offset, rp.ErrorCode
			}
		}
		if code != 0 {
			c.diverge(s, fmt.Sprintf("%s %d", what, want), codeName(code), nil, resp)
		}
		if got != want {
			c.diverge(s, fmt.Sprintf("%s %d", what, want), fmt.Sprintf("%s %d", what, got), nil, resp)
		}
	}
	for _, iso := range []int8{0, 1} {
		s := step + ": Fetch " + isoName(iso)
		resp, err := c.t.Fetch(c.ctx, c.topic, iso)
		if err != nil {
			c.fail(s, nil, err)
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
			c.diverge(s, "NONE", codeName(code), nil, resp)
		}
		if p.HighWatermark != c.ref.hw() {
			c.diverge(s, fmt.Sprintf("high watermark %d", c.ref.hw()), fmt.Sprintf("high watermark %d", p.HighWatermark), nil, resp)
		}
		if p.LastStableOffset != c.ref.lso() {
			c.diverge(s, fmt.Sprintf("last stable offset %d", c.ref.lso()), fmt.Sprintf("last stable offset %d", p.LastStableOffset), nil, resp)
		}
		want := c.ref.readUncommitted()
		if iso == 1 {
			want = c.ref.readCommitted()
		}
		got, err := consume(p, iso == 1)
		if err != nil {
			c.diverge(s, "well-formed batches", err.Error(), nil, resp)
		}
		if !slices.Equal(got, want) {
			c.diverge(s, fmt.Sprintf("records %q", want), fmt.Sprintf("records %q", got), nil, resp)
		}
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
