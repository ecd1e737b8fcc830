package main

import (
	"fmt"
	"time"

	"github.com/IBM/sarama"
)

// saramaCodec maps a codec to sarama's setting.
func saramaCodec(c codec) sarama.CompressionCodec {
	switch c {
	case codecGzip:
		return sarama.CompressionGZIP
	case codecSnappy:
		return sarama.CompressionSnappy
	case codecLZ4:
		return sarama.CompressionLZ4
	case codecZstd:
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

// produceSarama produces s to topic with sarama's SyncProducer: fresh producers per case, and a flush
// trigger of exactly one batch's record count, so that each SendMessages call leaves as one batch.
func produceSarama(addr, topic string, s spec) error {
	per := len(s.batches[0])
	for _, b := range s.batches {
		if len(b) != per {
			return fmt.Errorf("sarama: case %s: batches must be of equal size", s.name)
		}
	}
	producers := make([]sarama.SyncProducer, len(s.producers))
	for j, m := range s.producers {
		cfg := sarama.NewConfig()
		cfg.ClientID = "mirrorpath-corpus-sarama"
		cfg.Version = sarama.V2_8_0_0
		cfg.Metadata.Full = false
		cfg.Producer.Return.Successes = true
		cfg.Producer.Partitioner = sarama.NewManualPartitioner
		cfg.Producer.Compression = saramaCodec(s.codec)
		cfg.Producer.Flush.Messages = per
		cfg.Producer.Flush.MaxMessages = per
		cfg.Producer.Flush.Frequency = 0
		cfg.Producer.MaxMessageBytes = 1 << 20
		cfg.Producer.Timeout = 10 * time.Second
		cfg.Producer.Retry.Max = 3
		if m != modePlain {
			cfg.Producer.Idempotent = true
			cfg.Producer.RequiredAcks = sarama.WaitForAll
			cfg.Net.MaxOpenRequests = 1
		}
		if m == modeTransactional {
			cfg.Producer.Transaction.ID = "mirrorpath-corpus-sarama-" + s.name
		}
		p, err := sarama.NewSyncProducer([]string{addr}, cfg)
		if err != nil {
			return fmt.Errorf("sarama: new producer: %w", err)
		}
		defer p.Close()
		producers[j] = p
	}

	for i, batch := range s.batches {
		p := producers[s.producer(i)]
		if s.transactional() && i%s.txnSize() == 0 {
			if err := p.BeginTxn(); err != nil {
				return fmt.Errorf("sarama: begin transaction: %w", err)
			}
		}
		msgs := make([]*sarama.ProducerMessage, len(batch))
		for k, r := range batch {
			m := &sarama.ProducerMessage{
				Topic:     topic,
				Partition: 0,
				Timestamp: time.UnixMilli(r.timestamp),
			}
			if r.key != nil {
				m.Key = sarama.ByteEncoder(r.key)
			}
			if r.value != nil {
				m.Value = sarama.ByteEncoder(r.value)
			}
			for _, h := range r.headers {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.key), Value: h.value})
			}
			msgs[k] = m
		}
		if err := p.SendMessages(msgs); err != nil {
			return fmt.Errorf("sarama: send: %w", err)
		}
		if s.transactional() && i%s.txnSize() == s.txnSize()-1 {
			var err error
			if s.outcomes[i/s.txnSize()] {
				err = p.CommitTxn()
			} else {
				err = p.AbortTxn()
			}
			if err != nil {
				return fmt.Errorf("sarama: end transaction: %w", err)
			}
		}
	}
	return nil
}
