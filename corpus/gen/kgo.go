package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kgoCodec maps a codec to franz-go's option.
func kgoCodec(c codec) kgo.CompressionCodec {
	switch c {
	case codecGzip:
		return kgo.GzipCompression()
	case codecSnappy:
		return kgo.SnappyCompression()
	case codecLZ4:
		return kgo.Lz4Compression()
	case codecZstd:
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}

// produceKgo produces s to topic with franz-go: fresh clients per case (so sequences start at 0), manual
// flushing so that each of s.batches becomes exactly one batch.
func produceKgo(ctx context.Context, addr, topic string, s spec) error {
	clients := make([]*kgo.Client, len(s.producers))
	for j, m := range s.producers {
		opts := []kgo.Opt{
			kgo.SeedBrokers(addr),
			kgo.ClientID("mirrorpath-corpus-kgo"),
			kgo.DefaultProduceTopic(topic),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ManualFlushing(),
			kgo.ProducerBatchCompression(kgoCodec(s.codec)),
			kgo.ProducerBatchMaxBytes(1 << 20),
			kgo.MaxBufferedRecords(2000),
			kgo.RetryTimeout(10 * time.Second),
		}
		switch m {
		case modePlain:
			opts = append(opts, kgo.DisableIdempotentWrite())
		case modeTransactional:
			opts = append(opts, kgo.TransactionalID("mirrorpath-corpus-kgo-"+s.name))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		defer cl.Close()
		clients[j] = cl
	}

	primed := make([]bool, len(clients))
	for i, batch := range s.batches {
		cl := clients[s.producer(i)]
		if s.transactional() && i%s.txnSize() == 0 {
			if err := cl.BeginTransaction(); err != nil {
				return fmt.Errorf("begin transaction: %w", err)
			}
		}
		// Prime: deliver one record to partition 1 so that the topic's metadata is loaded before the case's
		// records are buffered. Otherwise the records wait for the first metadata load and the Flush below
		// can drain partition 0 while they are still being moved in, splitting a planned batch in two.
		if !primed[s.producer(i)] {
			primed[s.producer(i)] = true
			prime := []record{{key: []byte("prime"), value: []byte("loads the topic's metadata"), timestamp: baseTimestamp}}
			if err := kgoFlushBatch(ctx, cl, topic, primePartition, prime); err != nil {
				return fmt.Errorf("prime: %w", err)
			}
		}
		if err := kgoFlushBatch(ctx, cl, topic, 0, batch); err != nil {
			return err
		}
		if s.transactional() && i%s.txnSize() == s.txnSize()-1 {
			end := kgo.TryAbort
			if s.outcomes[i/s.txnSize()] {
				end = kgo.TryCommit
			}
			if err := cl.EndTransaction(ctx, end); err != nil {
				return fmt.Errorf("end transaction: %w", err)
			}
		}
	}
	return nil
}

// kgoFlushBatch buffers recs for one partition and flushes them; with manual flushing they leave as one batch.
func kgoFlushBatch(ctx context.Context, cl *kgo.Client, topic string, partition int32, recs []record) error {
	var (
		mu   sync.Mutex
		errs []error
	)
	for _, r := range recs {
		kr := &kgo.Record{
			Topic:     topic,
			Partition: partition,
			Key:       r.key,
			Value:     r.value,
			Timestamp: time.UnixMilli(r.timestamp),
		}
		for _, h := range r.headers {
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.key, Value: h.value})
		}
		cl.Produce(ctx, kr, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	// Flush returns once every record is acknowledged, but the sink's drain loop may still be running, and
	// it sends whatever is buffered without looking at ManualFlushing: records of the next batch produced in
	// that window would leave early, splitting the batch. Let the loop wind down first. (runCase checks the
	// stored shape and retries a case whose batches still came out split.)
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	return errors.Join(errs...)
}
