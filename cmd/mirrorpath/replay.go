package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

func init() {
	register(command{
		name:    "replay",
		summary: "run your own .log segments through the append path under each strategy: throughput and conflations",
		run:     runReplay,
	})
}

var replayUsage = "usage: mirrorpath replay [--strategy NAME|all] [--crc " + nameList(pid.CRCFixes(), "|") + "] [--chunk BYTES] [--count N] [--min-time D] [--max-input BYTES] SEGMENT|DIR..."

// Bounds of replay's flags: each is checked when the flags are parsed, so
// that no size reaches an allocation unchecked.
const (
	// maxReplayChunk bounds --chunk: a mirror fetch is at most
	// fetch.max.bytes (50 MiB by default), and replay holds one chunk more
	// than the input.
	maxReplayChunk = 1 << 30
	// maxReplayInput bounds --max-input, the bytes of batches held in memory.
	maxReplayInput = 4 << 30
	maxReplayCount = 1000
	maxReplayTime  = time.Hour
)

// minReplayBatches is the input below which replay says that its timings
// mean little: a pass over fewer batches is dominated by what every pass
// costs whatever its length (truncating the partition, a producer's first
// batch, a table's first probe), not by the per-batch work the ratios
// compare.
const minReplayBatches = 1000

// runReplay is `mirrorpath replay`: every SEGMENT (a Kafka .log file), and
// every segment of each partition DIR (its <20-digit base offset>.log files
// in offset order, as Kafka's log directory holds them), is
// streamed and checked, its batches held in memory up to --max-input bytes
// in all, cut into fetch-sized chunks of whole batches, and
// appended as mirrored data to a fresh in-memory partition under each
// strategy. Segments in one directory come from one source cluster (one
// partition's log); segments from different directories are different
// sources fanned in to one partition, which is where PIDs can meet.
//
// Exit status: 0 ok; 1 a segment is corrupt (position reported), cannot be
// read, or a strategy rejected the data; 2 usage.
func runReplay(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	strategy := fs.String("strategy", "all", "strategy (`NAME`: "+strategyList()+") or all")
	cfg := replayConfig{fix: pid.Patch, policy: pid.Reject, hasPID: psm.NonNegativeOne}
	fs.TextVar(&cfg.fix, "crc", cfg.fix, "CRC fix of rewriting strategies (`"+nameList(pid.CRCFixes(), "|")+"`)")
	chunk := intFlag(fs, "chunk", 1<<20, 1, maxReplayChunk, "mirror fetch size in `BYTES` (whole batches, at least one per chunk)")
	count := intFlag(fs, "count", 3, 1, maxReplayCount, "timed measurements per strategy (`N`); the fastest is reported")
	minTime := durationFlag(fs, "min-time", 200*time.Millisecond, 0, maxReplayTime, "append time per measurement (`D`): whole passes over the input are repeated until it is spent")
	fs.TextVar(&cfg.hasPID, "has-producer-id", cfg.hasPID, "which PIDs producer state tracks (`"+nameList(psm.HasProducerIDRules(), "|")+"`)")
	fs.TextVar(&cfg.policy, "pid-policy", cfg.policy, "bitfield: PIDs >= 2^31 (`"+nameList(pid.Policies(), "|")+"`)")
	maxInput := int64Flag(fs, "max-input", defaultReplayInput, 1, maxReplayInput, "most `BYTES` of batches held in memory and replayed; every segment is still checked whole, streamed")
	if code, ok := parseFlags(fs, args, stderr, replayUsage); !ok {
		return code
	}
	cfg.chunk, cfg.count, cfg.minTime = *chunk, *count, *minTime
	if *strategy == "all" {
		cfg.strategies = pid.Strategies()
	} else {
		s, err := pid.ParseStrategy(*strategy)
		if err != nil {
			return usageError(fs, stderr, err.Error())
		}
		cfg.strategies = []pid.Strategy{s}
	}
	if fs.NArg() == 0 {
		return usageError(fs, stderr, "no SEGMENT or DIR given")
	}
	paths, err := segmentPaths(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 1
	}
	in, err := loadSegments(paths, *maxInput)
	if err != nil {
		fmt.Fprintf(stderr, "replay: %v\n", err)
		return 1
	}
	rep := cfg.run(in)
	rep.write(stdout, cfg)
	if rep.failed {
		return 1
	}
	return 0
}

type replayConfig struct {
	strategies []pid.Strategy
	fix        pid.CRCFix
	policy     pid.Policy
	hasPID     psm.HasProducerIDRule
	chunk      int
	count      int
	minTime    time.Duration
}

// replayInput is every segment, checked and cut into chunks.
type replayInput struct {
	segments []string
	sources  [][16]byte // per source directory
	dirs     []string
	segs     []replayChunk // one per segment: its batches held in memory
	bytes    int64         // held in memory and replayed
	batches  int
	// checkedBytes and checkedBatches count every batch checked; they
	// exceed bytes and batches when --max-input cut the replayed input.
	checkedBytes   int64
	checkedBatches int
}

// defaultReplayInput bounds the input replay holds in memory: the timed
// loop appends from memory so that it measures the append path, not the
// disk. Whole passes are repeated until --min-time, so a larger input adds
// no precision.
const defaultReplayInput = 256 << 20

type replayChunk struct {
	data    []byte
	source  int // index into sources
	batches int
}

// sourceID derives a stable cluster ID for a source directory.
func sourceID(dir string) [16]byte {
	sum := sha256.Sum256([]byte(dir))
	var id [16]byte
	copy(id[:], sum[:16])
	return id
}

// strategyList is every strategy's name, in pid.Strategies order: the one
// list replay's help and its --strategy all read.
func strategyList() string { return nameList(pid.Strategies(), ", ") }

// segmentPaths expands the arguments of replay: a file is a segment; a
// directory is a partition's log directory, its segments the
// <20-digit base offset>.log files in it in offset order (Kafka's
// LogSegment file names), its other files (indexes, snapshots, .deleted,
// .cleaned, .swap) left out. A directory holding no segment is an error.
func segmentPaths(args []string) ([]string, error) {
	var paths []string
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			paths = append(paths, arg)
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, err
		}
		type segment struct {
			base int64
			path string
		}
		var segs []segment
		for _, e := range entries {
			name := e.Name()
			digits, ok := strings.CutSuffix(name, ".log")
			if !ok || len(digits) != 20 || e.IsDir() {
				continue
			}
			base, err := strconv.ParseInt(digits, 10, 64)
			if err != nil || base < 0 {
				continue
			}
			segs = append(segs, segment{base, filepath.Join(arg, name)})
		}
		if len(segs) == 0 {
			return nil, fmt.Errorf("%s: no segment (<20-digit base offset>.log) in the directory", arg)
		}
		sort.Slice(segs, func(i, j int) bool { return segs[i].base < segs[j].base })
		for _, sg := range segs {
			paths = append(paths, sg.path)
		}
	}
	return paths, nil
}

// loadSegments streams every segment, verifying framing and CRCs (a corrupt
// or cut batch is an error naming the file and byte position) with memory
// bounded by the largest batch, and keeps in memory the batches that fit in
// maxInput bytes, in order: those are replayed.
func loadSegments(paths []string, maxInput int64) (replayInput, error) {
	in := replayInput{segments: paths}
	dirIndex := map[string]int{}
	for _, path := range paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			return in, err
		}
		dir := filepath.Dir(abs)
		src, ok := dirIndex[dir]
		if !ok {
			src = len(in.sources)
			dirIndex[dir] = src
			in.sources = append(in.sources, sourceID(dir))
			in.dirs = append(in.dirs, dir)
		}
		data, err := loadSegment(path, &in, maxInput)
		if err != nil {
			return in, err
		}
		in.segs = append(in.segs, replayChunk{data: data, source: src})
	}
	return in, nil
}

// loadSegment checks the segment at path and returns the batches of it that
// fit in what maxInput leaves, counting them in in.
func loadSegment(path string, in *replayInput, maxInput int64) ([]byte, error) {
	f, size, err := openStream(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var data []byte // grown batch by batch: size may be a sparse file's
	r := codec.NewBatchReader(f, 0, size, 0)
	full := false
	for {
		b, _, err := r.Next()
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			var fe *codec.FormatError
			if errors.As(err, &fe) {
				return nil, fmt.Errorf("%s: corrupt at byte %d (%s): %w", path, fe.Pos, fe.Field, fe.Err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		in.checkedBatches++
		in.checkedBytes += int64(len(b))
		if full = full || in.bytes+int64(len(b)) > maxInput; !full {
			data = append(data, b...)
			in.batches++
			in.bytes += int64(len(b))
		}
	}
}

// split cuts each segment into chunks of whole batches of at most n bytes
// (at least one batch each). The chunks alias the segment data.
func (in *replayInput) split(n int) []replayChunk {
	var out []replayChunk
	for _, seg := range in.segs {
		data := seg.data
		for len(data) > 0 {
			size, count := 0, 0
			for rest := data[size:]; len(rest) > 0; rest = data[size:] {
				b, _, err := codec.Next(rest)
				if err != nil || (count > 0 && size+len(b) > n) {
					break
				}
				size += len(b)
				count++
			}
			out = append(out, replayChunk{data: data[:size], source: seg.source, batches: count})
			data = data[size:]
		}
	}
	return out
}

// replayResult is one strategy's run.
type replayResult struct {
	strategy   pid.Strategy
	elapsed    time.Duration
	producers  int
	conflated  int // PSM keys holding more than one (source, pid)
	origins    int // (source, pid) pairs in those keys
	err        error
	errAt      string
	finalState appendpath.MirrorState
}

type replayReport struct {
	sink    uint32 // keeps the limit's CRCs alive
	in      replayInput
	limit   time.Duration
	fused   time.Duration // the limit in one pass (codec.ChecksumCopy)
	results []replayResult
	asis    time.Duration
	failed  bool
}

func (c replayConfig) run(in replayInput) replayReport {
	rep := replayReport{in: in}
	chunks := in.split(c.chunk)
	// The limit: one CRC pass over batch[21:] and one copy of the bytes; and
	// the same in one pass, the CRC computed while copying, which is what
	// the path does for batches of 1 KiB or more.
	dst := make([]byte, min(int64(c.chunk), in.bytes)+int64(in.maxBatch()))
	var sink uint32
	limitPass := func(fused bool) time.Duration {
		start := time.Now()
		for _, ch := range chunks {
			pos := 0
			for rest := ch.data; len(rest) > 0; {
				b, r, _ := codec.Next(rest)
				if fused {
					d := dst[pos : pos+len(b)]
					copy(d[:codec.CRCStart], b)
					sink += codec.ChecksumCopy(d[codec.CRCStart:], b[codec.CRCStart:])
				} else {
					sink += codec.Checksum(b[codec.CRCStart:])
				}
				pos += len(b)
				rest = r
			}
			if !fused {
				copy(dst, ch.data)
			}
		}
		return time.Since(start)
	}
	measure := func(fused bool) time.Duration {
		limitPass(fused) // warm
		return best(c.count, func() time.Duration {
			var spent time.Duration
			n := 0
			for n == 0 || spent < c.minTime {
				spent += limitPass(fused)
				n++
			}
			return spent / time.Duration(n)
		})
	}
	rep.limit, rep.fused = measure(false), measure(true)
	rep.sink = sink
	strategies := c.strategies
	if strategies[0] != pid.Verbatim {
		strategies = append([]pid.Strategy{pid.Verbatim}, strategies...) // the as-is baseline
	}
	for _, s := range strategies {
		r := c.runStrategy(s, in, chunks)
		if r.err != nil {
			rep.failed = true
		}
		if s == pid.Verbatim {
			rep.asis = r.elapsed
		}
		rep.results = append(rep.results, r)
	}
	return rep
}

func (in *replayInput) maxBatch() int {
	m := 0
	for _, ch := range in.segs {
		for rest := ch.data; len(rest) > 0; {
			b, r, _ := codec.Next(rest)
			m = max(m, len(b))
			rest = r
		}
	}
	return m
}

func best(n int, run func() time.Duration) time.Duration {
	var d time.Duration
	for i := range n {
		if t := run(); i == 0 || t < d {
			d = t
		}
	}
	return d
}

func (c replayConfig) partition(s pid.Strategy) (*appendpath.Partition, error) {
	return appendpath.Open(appendpath.Config{
		State: appendpath.Mirroring, Strategy: s, CRCFix: c.fix, Policy: c.policy,
		MirrorOffsets: appendpath.AssignOffsets, SegmentBytes: 64 << 20, RetainSegments: 1, SkipRollSnapshots: true,
		PSMOptions: psm.Options{HasProducerID: c.hasPID},
	})
}

// runStrategy appends every chunk once untimed (warming tables and buffers,
// and finding any rejection), then times passes over the whole input until
// minTime has been spent appending, truncating the log between passes so each
// pass starts from an empty partition with warm tables; the best of count
// such measurements is the time of one pass.
func (c replayConfig) runStrategy(s pid.Strategy, in replayInput, chunks []replayChunk) replayResult {
	res := replayResult{strategy: s}
	p, err := c.partition(s)
	if err != nil {
		res.err = err
		return res
	}
	pass := func() (time.Duration, error) {
		if err := p.Truncate(0); err != nil {
			return 0, err
		}
		start := time.Now()
		for i, ch := range chunks {
			if _, err := p.AppendMirrored(ch.data, in.sources[ch.source]); err != nil {
				res.errAt = fmt.Sprintf("chunk %d of %s", i, in.dirs[ch.source])
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	if _, res.err = pass(); res.err != nil {
		res.finalState = p.State()
		return res
	}
	res.producers = p.ProducerCount()
	res.finalState = p.State()
	res.elapsed = best(c.count, func() time.Duration {
		var spent time.Duration
		n := 0
		for n == 0 || spent < c.minTime {
			d, err := pass()
			if err != nil {
				res.err = err
				return 0
			}
			spent += d
			n++
		}
		return spent / time.Duration(n)
	})
	res.conflated, res.origins = c.conflations(s, in)
	return res
}

// conflations maps every batch's PID as the strategy did (a fresh Mapper
// sees the batches in the same order, so it makes the same choices) and
// counts the PSM keys that hold more than one (source, pid).
func (c replayConfig) conflations(s pid.Strategy, in replayInput) (keys, origins int) {
	m := pid.NewMapper(pid.Config{Strategy: s, Policy: c.policy})
	type origin struct {
		src int
		pid int64
	}
	byKey := map[int64]map[origin]bool{}
	for _, ch := range in.segs {
		for rest := ch.data; len(rest) > 0; {
			b, r, _ := codec.Next(rest)
			rest = r
			p := b.ProducerID()
			key := p
			if s.Rewrites() {
				var err error
				if key, err = m.Map(in.sources[ch.source], p); err != nil {
					return keys, origins // the run failed there too
				}
			}
			tracked := key != codec.NoProducerID && (c.hasPID == psm.NonNegativeOne || key > codec.NoProducerID)
			if !tracked {
				continue
			}
			set := byKey[key]
			if set == nil {
				set = map[origin]bool{}
				byKey[key] = set
			}
			set[origin{ch.source, p}] = true
		}
	}
	for _, set := range byKey {
		if len(set) > 1 {
			keys++
			origins += len(set)
		}
	}
	return keys, origins
}

func (rep replayReport) write(w io.Writer, c replayConfig) {
	mb := float64(rep.in.bytes) / 1e6
	fmt.Fprintf(w, "replay: %d segments, %d sources, %d batches, %.3f MB; crc fix %s, chunk %d bytes, best of %d × %s\n",
		len(rep.in.segments), len(rep.in.sources), rep.in.batches, mb, c.fix, c.chunk, c.count, c.minTime)
	if rep.in.checkedBatches > rep.in.batches {
		fmt.Fprintf(w, "  replayed the first %d of %d batches (%.3f of %.3f MB checked): --max-input holds the replayed input in memory\n",
			rep.in.batches, rep.in.checkedBatches, mb, float64(rep.in.checkedBytes)/1e6)
	}
	for i, d := range rep.in.dirs {
		fmt.Fprintf(w, "  source %d: %s (cluster %s)\n", i, d, pid.FormatClusterID(rep.in.sources[i]))
	}
	if rep.in.batches < minReplayBatches {
		fmt.Fprintf(w, "  input too small to time: %d batches replayed, fewer than %d; a pass this short measures what every pass costs whatever its length (truncating the partition, each producer's first batch), not the per-batch work: the ratios below do not describe the append path\n",
			rep.in.batches, minReplayBatches)
	}
	fmt.Fprintf(w, "limit (one CRC pass + one copy): %.1f MB/s; fused limit (the CRC computed while copying): %.1f MB/s\n\n",
		mb/rep.limit.Seconds(), mb/rep.fused.Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tMB/s\tbatches/s\tvs asis\tvs limit\tvs fused\tproducers\tconflated keys\tconflated origins\tresult\t")
	sort.SliceStable(rep.results, func(i, j int) bool { return rep.results[i].strategy < rep.results[j].strategy })
	for _, r := range rep.results {
		result := "ok"
		if r.err != nil {
			result = fmt.Sprintf("%v at %s (state %s)", r.err, r.errAt, r.finalState)
		}
		secs := r.elapsed.Seconds()
		if r.err != nil || secs == 0 {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t%d\t%d\t%d\t%s\t\n", r.strategy, r.producers, r.conflated, r.origins, result)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.0f\t%.3f×\t%.3f×\t%.3f×\t%d\t%d\t%d\t%s\t\n", r.strategy, mb/secs, float64(rep.in.batches)/secs,
			secs/rep.asis.Seconds(), secs/rep.limit.Seconds(), secs/rep.fused.Seconds(), r.producers, r.conflated, r.origins, result)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nvs asis, vs limit, vs fused: time ratios (lower is faster); asis is verbatim, the byte-preserving path.")
}
