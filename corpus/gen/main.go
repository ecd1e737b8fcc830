// Command gen writes mirrorpath's test corpus of real Kafka record batches.
//
// Default mode starts franz-go's in-process broker (kfake, one broker, listening on 127.0.0.1 only), produces
// every case of specs() with franz-go (kgo) and with sarama, reads each partition back with raw
// read_uncommitted Fetch requests and writes the stored bytes as a Kafka segment file
// corpus/<client>-<case>/00000000000000000000.log. With -malformed it instead derives the defective files of
// corpus/malformed/ from the good ones. Both modes rewrite corpus/MANIFEST.tsv.
//
// Run it from the module root:
//
//	go run ./corpus/gen && go run ./corpus/gen -malformed
//
// The run is deterministic except for the wall-clock timestamps (and so the CRC) of transaction markers,
// which kfake stamps with time.Now. kfake draws idempotent producer ids from math/rand's global source;
// the go:debug line below lets rand.Seed still seed it (Go 1.24 made Seed a no-op by default), and each
// case reseeds it from its name just before its producer starts, so those ids usually repeat too (other
// goroutines in the process may draw from the same source at timing-dependent moments).
//
//go:debug randseednop=0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// segmentName is the file name of a segment whose base offset is 0.
const segmentName = "00000000000000000000.log"

// primePartition is the partition kgo primes a topic's metadata with; the case itself is in partition 0.
const primePartition = 1

// clients are the producing clients, in the order they run.
var clients = []string{"kgo", "sarama"}

func main() {
	dir := flag.String("dir", "corpus", "corpus directory (run from the module root)")
	malformed := flag.Bool("malformed", false, "derive corpus/malformed/ from the good files instead of producing")
	timeout := flag.Duration("timeout", 2*time.Minute, "give up after this long")
	flag.Parse()

	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "gen: %s is not a directory; run from the module root\n", *dir)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	// sarama takes no context: a watchdog makes sure the run ends even if a client hangs.
	time.AfterFunc(*timeout+10*time.Second, func() {
		fmt.Fprintln(os.Stderr, "gen: timed out")
		os.Exit(1)
	})

	var err error
	if *malformed {
		err = writeMalformed(*dir)
	} else {
		err = produceAll(ctx, *dir)
	}
	if err == nil {
		err = writeManifest(*dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// loopbackOnly listens like net.Listen but refuses any address that is not 127.0.0.1, so the broker can
// never be reached from, or bind to, anything but this machine's loopback.
func loopbackOnly(network, address string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("refusing to listen on %q: loopback only", address)
	}
	return net.Listen(network, address)
}

// Each case attempt gets caseTimeout, and a case is tried up to attempts times before the run fails.
const (
	caseTimeout = 30 * time.Second
	attempts    = 3
)

// produceAll runs every case with every client and writes the segments. All cases are produced before any
// file is written, so a failed run leaves the corpus as it was.
func produceAll(ctx context.Context, dir string) error {
	type result struct {
		name string
		seg  []byte
	}
	var (
		results []result
		errs    []error
	)
	for _, client := range clients {
		for _, s := range specs() {
			name := client + "-" + s.name
			var seg []byte
			var err error
			for try := 1; try <= attempts; try++ {
				if seg, err = runCase(ctx, client, name, s); err == nil || ctx.Err() != nil {
					break
				}
				fmt.Fprintf(os.Stderr, "gen: %s: attempt %d of %d: %v\n", name, try, attempts, err)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			results = append(results, result{name, seg})
			fmt.Printf("%-32s %7d bytes\n", name, len(seg))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, r := range results {
		if err := os.MkdirAll(filepath.Join(dir, r.name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, r.name, segmentName), r.seg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// runCase produces one case into a fresh in-process broker (so every case starts from the same broker state:
// offsets, producer ids, transactional epochs) and returns partition 0 as stored, checked against the plan.
//
// A client that hangs is abandoned after caseTimeout: sarama takes no context, so it produces in its own
// goroutine, which closing the broker then ends.
func runCase(parent context.Context, client, name string, s spec) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, caseTimeout)
	defer cancel()
	cluster, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.ClusterID("mirrorpath-corpus"),
		kfake.SeedTopics(2, name), // the case in partition 0; partition 1 is primePartition
		kfake.ListenFn(loopbackOnly),
	)
	if err != nil {
		return nil, fmt.Errorf("start broker: %w", err)
	}
	defer cluster.Close()
	addrs := cluster.ListenAddrs()
	if len(addrs) != 1 {
		return nil, fmt.Errorf("broker listens on %v, want one address", addrs)
	}
	addr := addrs[0]
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		return nil, fmt.Errorf("broker listens on %s, want 127.0.0.1", addr)
	}

	// Reseed just before the producers ask for their ids (see the package doc).
	//lint:ignore SA1019 deliberate: kfake draws producer ids from the global source (see the package doc)
	rand.Seed(int64(rng(name).Uint64()))
	done := make(chan error, 1)
	go func() { done <- produceCase(ctx, addr, client, name, s) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("producing: %w", ctx.Err())
	}

	reader, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID("mirrorpath-corpus-fetch"))
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	seg, err := fetchStored(ctx, reader, name)
	if err != nil {
		return nil, err
	}
	if err := checkShape(seg, s); err != nil {
		return nil, err
	}
	return seg, nil
}

// produceCase produces s to topic name with the named client.
func produceCase(ctx context.Context, addr, client, name string, s spec) error {
	switch client {
	case "kgo":
		return produceKgo(ctx, addr, name, s)
	case "sarama":
		return produceSarama(addr, name, s)
	}
	return fmt.Errorf("unknown client %q", client)
}

// checkShape verifies that the stored segment holds the batches the case asked for: one per flushed batch
// with the planned record counts, plus the marker of a transactional case.
func checkShape(seg []byte, s spec) error {
	bs, err := split(seg)
	if err != nil {
		return err
	}
	if want := len(s.batches) + len(s.outcomes); len(bs) != want {
		return fmt.Errorf("stored %d batches, want %d", len(bs), want)
	}
	var data []batchView
	for i, b := range bs {
		if !b.control() {
			data = append(data, b)
		} else if !s.transactional() || len(data) == 0 || len(data)%s.txnSize() != 0 {
			return fmt.Errorf("batch %d: unexpected control batch", i)
		}
	}
	if len(data) != len(s.batches) {
		return fmt.Errorf("stored %d data batches, want %d", len(data), len(s.batches))
	}
	for i, recs := range s.batches {
		if n := data[i].recordsCount(); int(n) != len(recs) {
			return fmt.Errorf("data batch %d holds %d records, want %d", i, n, len(recs))
		}
		if data[i].codec() != s.codec {
			return fmt.Errorf("data batch %d has codec %v, want %v", i, data[i].codec(), s.codec)
		}
	}
	return nil
}
