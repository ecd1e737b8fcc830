//go:build e2e

package appendpath

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/psm"
)

// TestKgoRetryResendsSameCRC: a real client's genuine retry resends the batch
// with the CRC it first sent, so dedup-check=crc (psm.Options.DedupCRC) keeps
// acknowledging it as a duplicate. An idempotent kgo producer writes to the
// in-process kfake broker, whose first Produce connection is cut after the
// request is read (forcing kgo to resend); every Produce attempt's batch is
// recorded. Both attempts carry one CRC, and fed in order to a partition
// with the option on, the second is the duplicate of the first.
func TestKgoRetryResendsSameCRC(t *testing.T) {
	const topic = "retry"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	var mu sync.Mutex
	var attempts [][]byte
	cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		cluster.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		mu.Lock()
		defer mu.Unlock()
		for _, tp := range pr.Topics {
			for _, p := range tp.Partitions {
				attempts = append(attempts, append([]byte(nil), p.Records...))
			}
		}
		if len(attempts) == 1 {
			return nil, errors.New("connection cut before the response"), true
		}
		return nil, nil, false
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordRetries(10), kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("once")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) < 2 {
		t.Fatalf("%d Produce attempts, want a retry", len(attempts))
	}
	first, retry := codec.Batch(attempts[0]), codec.Batch(attempts[1])
	if first.CRC() != retry.CRC() || first.ProducerID() != retry.ProducerID() || first.BaseSequence() != retry.BaseSequence() {
		t.Fatalf("retry CRC %#x PID %d seq %d, first %#x PID %d seq %d", retry.CRC(), retry.ProducerID(),
			retry.BaseSequence(), first.CRC(), first.ProducerID(), first.BaseSequence())
	}
	p := mustOpen(t, Config{PSMOptions: psm.Options{HasProducerID: psm.NonNegativeOne, DedupCRC: true}})
	if res, err := p.AppendClient(attempts[0]); err != nil || res.Duplicate {
		t.Fatalf("first attempt: %+v %v", res, err)
	}
	if res, err := p.AppendClient(attempts[1]); err != nil || !res.Duplicate {
		t.Fatalf("retry: %+v %v, want a duplicate", res, err)
	}
}
