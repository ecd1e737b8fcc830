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

// Target is one broker reached over the wire. Dial asks it which versions
// it accepts (ApiVersions, falling back from v3 to v0), and every request is
// then sent at the highest version both the broker and the suite accept
// (maxVersions: Kafka 3.6's, the transaction protocol before KIP-890's
// implicit partition addition and per-transaction epoch bump).
type Target struct {
	Addr    string
	Timeout time.Duration
	// Versions is what the broker's ApiVersions answer lists, and
	// APIVersion the ApiVersions version it answered.
	Versions   Versions
	APIVersion int16
	// Fallbacks says why each ApiVersions version above APIVersion failed.
	Fallbacks []string
	cl        *kgo.Client
	// Restart, when set, moves or restarts the leader of a partition while
	// keeping its log (the in-process kfake cluster can). Nil: the
	// leader-restart case is unsupported.
	Restart func(topic string, partition int32) error
	// KeepTopics leaves each case's topic on the broker after the case
	// (for inspection); by default it is deleted.
	KeepTopics bool
	// Left lists the topics the run created and could not delete (the
	// broker has no DeleteTopics, or refused it).
	Left []string
	// noAutoCreate is set when a topic could not be made by Metadata: the
	// broker does not auto-create, and later cases are told so at once.
	noAutoCreate error
}

// Dial connects to addr and asks which versions it accepts, each attempt
// bounded by timeout.
func Dial(ctx context.Context, addr string, timeout time.Duration) (*Target, error) {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	apiVersion, brokerVersions, fallbacks, err := negotiate(ctx, addr, timeout)
	if err != nil {
		return nil, err
	}
	var why []string
	for _, e := range fallbacks {
		why = append(why, e.Error())
	}
	vs := kversion.V3_6_0()
	for k, v := range maxVersions {
		vs.SetMaxKeyVersion(k, v)
	}
	// The client's own ApiVersions request goes at the version that answered.
	vs.SetMaxKeyVersion(int16(kmsg.ApiVersions), apiVersion)
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
	return &Target{Addr: addr, Timeout: timeout, Versions: brokerVersions, APIVersion: apiVersion, Fallbacks: why, cl: cl}, nil
}

// Close closes the connections.
func (t *Target) Close() { t.cl.Close() }

func (t *Target) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	rctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	resp, err := t.cl.Request(rctx, req)
	return resp, t.classify(req, err)
}

// classify wraps the errors that mean the broker is gone or silent in a
// connectError, and the client's refusal to send a request the broker does
// not list in an unsupportedError.
func (t *Target) classify(req kmsg.Request, err error) error {
	var ne net.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne),
		strings.Contains(err.Error(), "unable to dial"):
		return &connectError{t.Addr, err}
	case errors.Is(err, kerr.UnsupportedVersion), strings.Contains(err.Error(), "too old"):
		return &unsupportedError{Need{req.Key(), req.GetVersion()}}
	}
	return err
}

// supports returns an unsupportedError when the broker cannot answer n.
func (t *Target) supports(n Need) error {
	if lacks, ok := t.Versions.lacks(n); ok {
		return &unsupportedError{lacks}
	}
	return nil
}

// toLeader sends req to the leader of topic/partition.
func (t *Target) toLeader(ctx context.Context, topic string, partition int32, req kmsg.Request) (kmsg.Response, error) {
	leader, err := t.leader(ctx, topic, partition, false)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	resp, err := t.cl.Broker(int(leader)).Request(rctx, req)
	return resp, t.classify(req, err)
}

// leader asks Metadata for the leader of topic/partition; autoCreate asks
// the broker to create the topic if it does not exist (explicitly from
// Metadata v4; below v4 a broker that auto-creates topics always does).
func (t *Target) leader(ctx context.Context, topic string, partition int32, autoCreate bool) (int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = autoCreate
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

// CreateTopic makes topic exist with an empty partition 0. A broker with
// CreateTopics gets one (one partition, its default replication factor),
// sent to the controller Metadata names and, when that cannot be reached or
// named, to the bootstrap broker. A broker without CreateTopics, or whose
// CreateTopics fails without an answer, is asked through Metadata, which
// creates a topic on brokers that auto-create (auto.create.topics.enable
// in Kafka); the topic then has the broker's default partition count. The
// partition's leader is awaited for up to the timeout.
func (t *Target) CreateTopic(ctx context.Context, topic string) error {
	autoCreate, why := true, "no CreateTopics"
	if err := t.supports(Need{int16(kmsg.CreateTopics), 0}); err == nil {
		err := t.createTopics(ctx, topic)
		var ke *kerr.Error
		switch {
		case err == nil:
			autoCreate = false
		case errors.Is(err, ErrConnect), errors.As(err, &ke):
			// Unreachable, or an answer: an existing topic is an error
			// too, its log would not be the empty one the model starts
			// from.
			return fmt.Errorf("conform: creating topic %s: %w", topic, err)
		default:
			why = fmt.Sprintf("CreateTopics failed (%v)", err)
		}
	}
	if autoCreate && t.noAutoCreate != nil {
		return t.noAutoCreate
	}
	deadline := time.Now().Add(t.Timeout)
	for {
		_, err := t.leader(ctx, topic, 0, autoCreate)
		if err == nil || errors.Is(err, ErrConnect) {
			return err
		}
		if time.Now().After(deadline) {
			if autoCreate {
				t.noAutoCreate = fmt.Errorf("conform: topic %s: %s, and the broker did not create it on Metadata: %w", topic, why, err)
				return t.noAutoCreate
			}
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// createTopics sends CreateTopics to the controller, then, when the client
// could not route it there (no controller, or one missing from the broker
// list), to the bootstrap broker. A refusal is returned as its *kerr.Error.
func (t *Target) createTopics(ctx context.Context, topic string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = 1
	rt.ReplicationFactor = -1
	if v, _ := t.Versions.use(int16(kmsg.CreateTopics)); v < 4 {
		rt.ReplicationFactor = 1 // -1, the broker's default, from v4 (KIP-464)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(t.Timeout / time.Millisecond)
	resp, err := t.request(ctx, req)
	var ue *unsupportedError
	if err != nil && !errors.Is(err, ErrConnect) && !errors.As(err, &ue) {
		rctx, cancel := context.WithTimeout(ctx, t.Timeout)
		resp, err = t.cl.SeedBrokers()[0].Request(rctx, req)
		cancel()
		err = t.classify(req, err)
	}
	if err != nil {
		return err
	}
	for _, ct := range resp.(*kmsg.CreateTopicsResponse).Topics {
		if err := kerr.ErrorForCode(ct.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

// DeleteTopic deletes topic when the broker has DeleteTopics; a topic it
// cannot delete is added to Left. Nothing else depends on the answer.
func (t *Target) DeleteTopic(ctx context.Context, topic string) {
	if t.supports(Need{int16(kmsg.DeleteTopics), 0}) != nil {
		t.Left = append(t.Left, topic)
		return
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TopicNames = []string{topic}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = int32(t.Timeout / time.Millisecond)
	resp, err := t.request(ctx, req)
	if err != nil {
		t.Left = append(t.Left, topic)
		return
	}
	for _, dt := range resp.(*kmsg.DeleteTopicsResponse).Topics {
		if dt.ErrorCode != 0 {
			t.Left = append(t.Left, topic)
		}
	}
}

// initProducerID asks for a producer ID; txnID nil asks for an idempotent
// one. pid and epoch are -1, or (from v3, KIP-360) the producer's current
// ones, which the coordinator bumps.
func (t *Target) initProducerID(ctx context.Context, txnID *string, pid int64, epoch int16) (*kmsg.InitProducerIDRequest, *kmsg.InitProducerIDResponse, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	need := needInitPID
	if pid >= 0 {
		need = needInitPIDBump
	}
	if err := t.supports(need); err != nil {
		return req, nil, err
	}
	req.TransactionalID = txnID
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	resp, err := t.request(ctx, req)
	if err != nil {
		return req, nil, err
	}
	return req, resp.(*kmsg.InitProducerIDResponse), nil
}

// produce sends one batch (acks all) to topic/0.
func (t *Target) produce(ctx context.Context, topic string, txnID *string, batch []byte) (*kmsg.ProduceRequest, *kmsg.ProduceResponse, error) {
	req := kmsg.NewPtrProduceRequest()
	if err := t.supports(needProduce); err != nil {
		return req, nil, err
	}
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

// addPartition adds topic/0 to the transaction.
func (t *Target) addPartition(ctx context.Context, txnID string, pid int64, epoch int16, topic string) (*kmsg.AddPartitionsToTxnRequest, *kmsg.AddPartitionsToTxnResponse, error) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	if err := t.supports(needAddPart); err != nil {
		return req, nil, err
	}
	req.TransactionalID = txnID
	req.ProducerID, req.ProducerEpoch = pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic = topic
	rt.Partitions = []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := t.request(ctx, req)
	if err != nil {
		return req, nil, err
	}
	return req, resp.(*kmsg.AddPartitionsToTxnResponse), nil
}

// endTxn commits or aborts the transaction.
func (t *Target) endTxn(ctx context.Context, txnID string, pid int64, epoch int16, commit bool) (*kmsg.EndTxnRequest, *kmsg.EndTxnResponse, error) {
	req := kmsg.NewPtrEndTxnRequest()
	if err := t.supports(needEndTxn); err != nil {
		return req, nil, err
	}
	req.TransactionalID = txnID
	req.ProducerID, req.ProducerEpoch = pid, epoch
	req.Commit = commit
	resp, err := t.request(ctx, req)
	if err != nil {
		return req, nil, err
	}
	return req, resp.(*kmsg.EndTxnResponse), nil
}

// listOffsets returns the latest offset of topic/0 for the isolation level
// (0 read_uncommitted: the high watermark; 1 read_committed: the LSO).
func (t *Target) listOffsets(ctx context.Context, topic string, isolation int8) (*kmsg.ListOffsetsRequest, *kmsg.ListOffsetsResponse, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	if err := t.supports(needListOffset); err != nil {
		return req, nil, err
	}
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
		return req, nil, err
	}
	return req, resp.(*kmsg.ListOffsetsResponse), nil
}

// Fetch reads topic/0 from offset at the isolation level.
func (t *Target) Fetch(ctx context.Context, topic string, offset int64, isolation int8) (*kmsg.FetchRequest, *kmsg.FetchResponse, error) {
	req := kmsg.NewPtrFetchRequest()
	if err := t.supports(needFetch); err != nil {
		return req, nil, err
	}
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
	rp.FetchOffset = offset
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = 8 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := t.toLeader(ctx, topic, 0, req)
	if err != nil {
		return req, nil, err
	}
	return req, resp.(*kmsg.FetchResponse), nil
}
