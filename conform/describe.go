package conform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mirrorpath/mirrorpath/codec"
)

// describeRequest is one line naming the API, the version sent and the
// fields the cases vary.
func describeRequest(req kmsg.Request) string {
	if req == nil {
		return ""
	}
	head := fmt.Sprintf("%s v%d", apiName(req.Key()), req.GetVersion())
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		s := head + fmt.Sprintf(" acks=%d transactional_id=%s", r.Acks, quoteOrNull(r.TransactionID))
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d: %s", t.Topic, p.Partition, describeBatches(p.Records))
			}
		}
		return s
	case *kmsg.InitProducerIDRequest:
		return head + fmt.Sprintf(" transactional_id=%s producer_id=%d epoch=%d", quoteOrNull(r.TransactionalID), r.ProducerID, r.ProducerEpoch)
	case *kmsg.AddPartitionsToTxnRequest:
		s := head + fmt.Sprintf(" transactional_id=%q producer_id=%d epoch=%d", r.TransactionalID, r.ProducerID, r.ProducerEpoch)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d", t.Topic, p)
			}
		}
		return s
	case *kmsg.EndTxnRequest:
		what := "ABORT"
		if r.Commit {
			what = "COMMIT"
		}
		return head + fmt.Sprintf(" transactional_id=%q producer_id=%d epoch=%d %s", r.TransactionalID, r.ProducerID, r.ProducerEpoch, what)
	case *kmsg.ListOffsetsRequest:
		s := head + " isolation=" + isoName(r.IsolationLevel)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d timestamp=%d", t.Topic, p.Partition, p.Timestamp)
			}
		}
		return s
	case *kmsg.FetchRequest:
		s := head + " isolation=" + isoName(r.IsolationLevel)
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d offset=%d", t.Topic, p.Partition, p.FetchOffset)
			}
		}
		return s
	}
	return head
}

// describeResponse is one line naming the API, the version and, for each
// partition, the error name and the fields the cases compare.
func describeResponse(resp kmsg.Response) string {
	if resp == nil {
		return ""
	}
	head := fmt.Sprintf("%s v%d response", apiName(resp.Key()), resp.GetVersion())
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		s := head
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d: %s base_offset=%d", t.Topic, p.Partition, errName(p.ErrorCode), p.BaseOffset)
			}
		}
		return s
	case *kmsg.InitProducerIDResponse:
		return head + fmt.Sprintf(": %s producer_id=%d epoch=%d", errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
	case *kmsg.AddPartitionsToTxnResponse:
		s := head
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d: %s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
		}
		return s
	case *kmsg.EndTxnResponse:
		return head + ": " + errName(r.ErrorCode)
	case *kmsg.ListOffsetsResponse:
		s := head
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d: %s offset=%d", t.Topic, p.Partition, errName(p.ErrorCode), p.Offset)
			}
		}
		return s
	case *kmsg.FetchResponse:
		s := head
		if r.ErrorCode != 0 {
			s += ": " + errName(r.ErrorCode)
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				s += fmt.Sprintf(" %s/%d: %s high_watermark=%d last_stable_offset=%d", t.Topic, p.Partition,
					errName(p.ErrorCode), p.HighWatermark, p.LastStableOffset)
				var ab []string
				for _, a := range p.AbortedTransactions {
					ab = append(ab, fmt.Sprintf("producer_id=%d first_offset=%d", a.ProducerID, a.FirstOffset))
				}
				s += " aborted=[" + strings.Join(ab, ", ") + "] " + describeBatches(p.RecordBatches)
			}
		}
		return s
	}
	return head
}

// describeBatches names each v2 batch of a record set: its offsets, producer
// ID, epoch, sequences, record count, and whether it is transactional or a
// control batch; then what is left that does not parse.
func describeBatches(buf []byte) string {
	var bs []string
	for len(buf) > 0 {
		b, rest, err := codec.Next(buf)
		if errors.Is(err, codec.ErrPartial) {
			bs = append(bs, fmt.Sprintf("a cut batch of %d bytes", len(buf)))
			break
		}
		if err != nil {
			bs = append(bs, fmt.Sprintf("%d bytes that do not parse (%v)", len(buf), err))
			break
		}
		buf = rest
		s := fmt.Sprintf("offsets %d..%d producer_id=%d epoch=%d", b.BaseOffset(), b.LastOffset(), b.ProducerID(), b.ProducerEpoch())
		switch {
		case b.IsControl():
			what := "control"
			if cr, err := b.ControlRecord(); err == nil {
				switch cr.Type {
				case codec.ControlCommit:
					what = "COMMIT"
				case codec.ControlAbort:
					what = "ABORT"
				}
			}
			s += " " + what + " marker"
		default:
			n := b.RecordsCount()
			s += fmt.Sprintf(" sequence=%d..%d records=%d", b.BaseSequence(), codec.IncrementSequence(b.BaseSequence(), n-1), n)
			if b.IsTransactional() {
				s += " transactional"
			}
		}
		bs = append(bs, s)
	}
	return "batches=[" + strings.Join(bs, "; ") + "]"
}

func quoteOrNull(s *string) string {
	if s == nil {
		return "null"
	}
	return strconv.Quote(*s)
}
