package conform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// DefaultRequestTimeout bounds every request the suite sends.
const DefaultRequestTimeout = 5 * time.Second

// ErrConnect is matched by every error that means the broker could not be
// reached or did not answer in time (exit status 2 in the CLI).
var ErrConnect = errors.New("conform: broker unreachable")

type connectError struct {
	addr string
	err  error
}

func (e *connectError) Error() string {
	return fmt.Sprintf("conform: broker %s unreachable: %v", e.addr, e.err)
}
func (e *connectError) Is(t error) bool { return t == ErrConnect }
func (e *connectError) Unwrap() error   { return e.err }

// Target is one broker reached over the wire. Requests are pinned to the
// versions of Kafka 3.6 (Produce v9, EndTxn v3, AddPartitionsToTxn v3,
// Fetch v12): the
// transaction protocol before KIP-890's implicit partition addition and
// per-transaction epoch bump, which is the one the cases model.
type Target struct {
	Addr    string
	Timeout time.Duration
	cl      *kgo.Client
	// Restart, when set, moves or restarts the leader of a partition while
	// keeping its log (the in-process kfake cluster can). Nil: the
	// leader-restart case is unsupported.
	Restart func(topic string, partition int32) error
	// KeepTopics leaves each case's topic on the broker after the case
	// (for inspection); by default it is deleted.
	KeepTopics bool
}

// Dial connects to addr and checks that it answers ApiVersions within timeout.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Target, error) {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	vs := kversion.V3_6_0()
	vs.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), 3)
	vs.SetMaxKeyVersion(int16(kmsg.Fetch), 12) // topic names, not IDs
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(addr),
		kgo.MaxVersions(vs),
		kgo.DialTimeout(timeout),
		kgo.RequestRetries(0),
		kgo.RetryTimeout(timeout),
		kgo.RequestTimeoutOverhead(timeout),
	)
	if err != nil {
		return nil, &connectError{addr, err}
	}
	t := &Target{Addr: addr, Timeout: timeout, cl: cl}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := cl.SeedBrokers()[0].Request(rctx, kmsg.NewPtrApiVersionsRequest()); err != nil {
		cl.Close()
		return nil, &connectError{addr, err}
	}
	return t, nil
}

// Close closes the connections.
func (t *Target) Close() { t.cl.Close() }

func (t *Target) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	rctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	resp, err := t.cl.Request(rctx, req)
	return resp, t.classify(err)
}

// classify wraps the errors that mean the broker is gone or silent in a
// connectError.
func (t *Target) classify(err error) error {
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne),
		strings.Contains(err.Error(), "unable to dial"):
		return &connectError{t.Addr, err}
	}
	return err
}

// toLeader sends req to the leader of topic/partition.
func (t *Target) toLeader(ctx context.Context, topic string, partition int32, req kmsg.Request) (kmsg.Response, error) {
	leader, err := t.leader(ctx, topic, partition)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	resp, err := t.cl.Broker(int(leader)).Request(rctx, req)
	return resp, t.classify(err)
}

func (t *Target) leader(ctx context.Context, topic string, partition int32) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := t.request(ctx, req)
	if err != nil {
		return 0, err
	}
	for _, mt := range resp.(*kmsg.MetadataResponse).Topics {
		if err := kerr.ErrorForCode(mt.ErrorCode); err != nil {
			return 0, fmt.Errorf("conform: metadata for %s: %w", topic, err)
		}
		for _, p := range mt.Partitions {
			if p.Partition == partition && p.ErrorCode == 0 && p.Leader >= 0 {
				return p.Leader, nil
			}
		}
	}
	return 0, fmt.Errorf("conform: no leader for %s/%d", topic, partition)
}

// CreateTopic creates a one-partition topic with the broker's default
// replication factor.
func (t *Target) CreateTopic(ctx context.Context, topic string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = 1
	rt.ReplicationFactor = -1
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(t.Timeout / time.Millisecond)
	resp, err := t.request(ctx, req)
	if err != nil {
		return err
	}
	for _, ct := range resp.(*kmsg.CreateTopicsResponse).Topics {
		// An existing topic is an error too: its log would not be the
		// empty one the model starts from.
		if err := kerr.ErrorForCode(ct.ErrorCode); err != nil {
			return fmt.Errorf("conform: creating topic %s: %w", topic, err)
		}
	}
	// The leader may take a moment to be known; metadata is retried briefly.
	deadline := time.Now().Add(t.Timeout)
	for {
		if _, err := t.leader(ctx, topic, 0); err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DeleteTopic deletes topic; the answer is not checked (a broker may not
// allow deletions, and nothing depends on it).
func (t *Target) DeleteTopic(ctx context.Context, topic string) {
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{topic}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(t.Timeout / time.Millisecond)
	_, _ = t.request(ctx, req)
}

// InitProducerID asks for a producer ID; txnID nil asks for an idempotent one.
func (t *Target) InitProducerID(ctx context.Context, txnID *string) (*kmsg.InitProducerIDResponse, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = txnID
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	resp, err := t.request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.InitProducerIDResponse), nil
}

// Produce sends one batch (acks all) to topic/0.
func (t *Target) Produce(ctx context.Context, topic string, txnID *string, batch []byte) (*kmsg.ProduceRequest, *kmsg.ProduceResponse, error) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = int32(t.Timeout / time.Millisecond)
	req.TransactionID = txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = 0
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := t.toLeader(ctx, topic, 0, req)
	if err != nil {
		return req, nil, err
	}
	return req, resp.(*kmsg.ProduceResponse), nil
}

// AddPartition adds topic/0 to the transaction.
func (t *Target) AddPartition(ctx context.Context, txnID string, pid int64, epoch int16, topic string) (*kmsg.AddPartitionsToTxnResponse, error) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID = txnID
	req.ProducerID, req.ProducerEpoch = pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic = topic
	rt.Partitions = []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := t.request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.AddPartitionsToTxnResponse), nil
}

// EndTxn commits or aborts the transaction.
func (t *Target) EndTxn(ctx context.Context, txnID string, pid int64, epoch int16, commit bool) (*kmsg.EndTxnResponse, error) {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID = txnID
	req.ProducerID, req.ProducerEpoch = pid, epoch
	req.Commit = commit
	resp, err := t.request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.EndTxnResponse), nil
}

// ListOffsets returns the latest offset of topic/0 for the isolation level
// (0 read_uncommitted: the high watermark; 1 read_committed: the LSO).
func (t *Target) ListOffsets(ctx context.Context, topic string, isolation int8) (*kmsg.ListOffsetsResponse, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	req.IsolationLevel = isolation
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = 0
	rp.Timestamp = -1
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := t.toLeader(ctx, topic, 0, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.ListOffsetsResponse), nil
}

// Fetch reads topic/0 from offset 0 at the isolation level.
func (t *Target) Fetch(ctx context.Context, topic string, isolation int8) (*kmsg.FetchResponse, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = isolation
	req.SessionEpoch = -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = 0
	rp.FetchOffset = 0
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = 8 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := t.toLeader(ctx, topic, 0, req)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.FetchResponse), nil
}
