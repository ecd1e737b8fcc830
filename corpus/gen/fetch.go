package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fetchStored returns partition 0 of topic exactly as the broker stored it: the RecordBatches bytes of raw
// read_uncommitted fetch responses, from offset 0 up to the high watermark. A kgo consumer would decode and
// re-encode nothing useful here; the raw response carries the stored batches verbatim.
func fetchStored(ctx context.Context, cl *kgo.Client, topic string) ([]byte, error) {
	id, err := topicID(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	var out []byte
	var offset int64
	for round := 0; ; round++ {
		if round > 100 {
			return nil, fmt.Errorf("fetch %s: no progress after %d rounds at offset %d", topic, round, offset)
		}
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 100
		req.MinBytes = 1
		req.MaxBytes = 8 << 20
		req.IsolationLevel = 0 // read_uncommitted: aborted data and markers too
		req.SessionEpoch = -1  // a full fetch outside any fetch session
		t := kmsg.NewFetchRequestTopic()
		t.Topic = topic
		t.TopicID = id
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = 0
		p.FetchOffset = offset
		p.PartitionMaxBytes = 8 << 20
		p.CurrentLeaderEpoch = -1
		p.LogStartOffset = -1
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)

		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %w", topic, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return nil, fmt.Errorf("fetch %s: %w", topic, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return nil, fmt.Errorf("fetch %s: response has %d topics", topic, len(resp.Topics))
		}
		rp := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
			return nil, fmt.Errorf("fetch %s partition 0: %w", topic, err)
		}
		if offset >= rp.HighWatermark {
			return out, nil
		}
		// A broker may end a response with a partial batch; keep whole batches only.
		got, err := split(rp.RecordBatches)
		if err != nil && !errors.Is(err, errPartial) {
			return nil, fmt.Errorf("fetch %s: %w", topic, err)
		}
		if len(got) == 0 {
			continue
		}
		for _, b := range got {
			if b.baseOffset() != offset && len(out) > 0 {
				return nil, fmt.Errorf("fetch %s: batch at %d, want %d", topic, b.baseOffset(), offset)
			}
			out = append(out, b...)
			offset = b.baseOffset() + int64(b.lastOffsetDelta()) + 1
		}
	}
}

// topicID asks the broker for the topic's ID, which fetch v13 and later address topics by.
func topicID(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, fmt.Errorf("metadata %s: %w", topic, err)
	}
	for _, rt := range resp.Topics {
		if rt.Topic != nil && *rt.Topic == topic {
			if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
				return [16]byte{}, fmt.Errorf("metadata %s: %w", topic, err)
			}
			return rt.TopicID, nil
		}
	}
	return [16]byte{}, fmt.Errorf("metadata %s: topic missing", topic)
}
