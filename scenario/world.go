package scenario

import (
	"fmt"
	"strconv"

	"github.com/mirrorpath/mirrorpath/codec"
)

// world is the simulated deployment of one run: one strategy, fresh state.
// Not safe for concurrent use.
type world struct {
	strategy string
	opts     Options
	clusters []*cluster
	byName   map[string]*cluster
	topics   []topicDecl
	clients  map[string]*client
	groups   map[string]*group
	or       *oracle
	step     int
	clock    int64 // timestamps: deterministic, one tick per use
	markers  map[int64]markerTruth
	regs     registries
}

type topicDecl struct {
	name       string
	partitions int
}

// cluster is one Kafka cluster.
type cluster struct {
	name       string
	id         [16]byte
	replicas   int
	fetchBytes int
	failed     bool
	pids       pidAllocator
	txn        txnCoordinator
	parts      []*partition // in topic declaration order, then partition number
	faults     []fault
}

type fault struct {
	at    string
	times int
}

// partition is one partition of one cluster: its replicas and the
// controller's view of it (leader, leader epoch, mirror state).
type partition struct {
	c           *cluster
	topic       string
	n           int
	key         string // "t/0"
	reps        []replica
	leader      int
	leaderEpoch int32
	state       string   // controller view: stateNone, stateMirroring, …
	source      *cluster // mirror source while MIRRORING or STOPPING
	// srcPos is the next source offset the mirror fetcher reads. Mirrored
	// batches get this log's next offsets, so a partition can take batches
	// from a second source after a first one (fan-in).
	srcPos int64
	// After a stop: the log end offset and the source offset where
	// mirroring left off, and the source, persisted for failback.
	mirroredEnd  int64
	stopSrcPos   int64
	stopEnd      int64 // log end right after the successful STOPPING
	stoppedFrom  *cluster
	mirroredPIDs map[int64]pidOrigin // destination PID → origin, for I5/I6
	// pairs maps the offset of each data batch mirrored in the current
	// MIRRORING session to its offset in the source partition, until the
	// oracle has compared their read_committed visibility (I3).
	pairs     map[int64]int64
	localPIDs map[int64]bool // PIDs of local client batches, for I6
}

type pidOrigin struct {
	cluster string
	pid     int64
}

func (p *partition) lead() replica { return p.reps[p.leader] }

// markerTruth is what the coordinator knew when it wrote a marker.
type markerTruth struct {
	producer string
	serial   int
	abort    bool
}

// client is one producer instance (a zombie is one too).
type client struct {
	name      string
	c         *cluster
	txnID     string // "" idempotent
	pid       int64
	epoch     int16
	seq       map[*partition]int32
	inTxn     bool
	txnParts  map[*partition]bool
	txnSerial int
	fatal     bool // a fatal error (ProducerFencedException): only init revives it
	// needInit: InitProducerId failed (coordinator down); it is retried,
	// with the same forced values, before the next request.
	needInit    bool
	forcedPID   int64
	forcedEpoch int16
}

// ready retries a failed InitProducerId; false when the client still has no
// PID (the error is recorded).
func (w *world) ready(pr *client) bool {
	if pr.needInit {
		w.initProducer(pr, pr.forcedPID, pr.forcedEpoch, true)
	}
	return !pr.needInit
}

func (w *world) tick() int64 { w.clock++; return w.clock }

func newWorld(strategy string, opts Options) *world {
	w := &world{strategy: strategy, opts: opts, byName: map[string]*cluster{}, clients: map[string]*client{},
		groups: map[string]*group{}, markers: map[int64]markerTruth{}, clock: 1_000_000, regs: registries{}}
	w.or = newOracle(w)
	return w
}

func atoi(s string, def int) int {
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

func argInt(c *Command, key string, def int) int {
	v, _ := c.Get(key)
	return atoi(v, def)
}

func argInt64(c *Command, key string) (int64, bool) {
	v, ok := c.Get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// exec runs one command. Errors are internal failures of the broker
// packages (not client errors, which the oracle records).
func (w *world) exec(c *Command) error {
	w.step = c.Step
	switch c.Op {
	case OpCluster:
		return w.addCluster(c)
	case OpTopic:
		t := topicDecl{name: c.Args[0], partitions: argInt(c, "partitions", 1)}
		w.topics = append(w.topics, t)
		for _, cl := range w.clusters {
			if err := w.addPartitions(cl, t); err != nil {
				return err
			}
		}
	case OpMirror:
		return w.mirror(w.byName[c.Args[0]], w.byName[c.Args[1]], argStr(c, "topic"))
	case OpProducer:
		return w.newProducer(c)
	case OpInit:
		w.initProducer(w.clients[c.Args[0]], -1, -1, false)
	case OpZombie:
		w.newZombie(c.Args[0], w.clients[c.Args[1]])
	case OpSend:
		return w.send(c)
	case OpBegin:
		w.begin(w.clients[c.Args[0]])
	case OpCommit:
		w.endTxn(w.clients[c.Args[0]], false)
	case OpAbort:
		w.endTxn(w.clients[c.Args[0]], true)
	case OpGroup:
		cl := w.byName[c.Args[1]]
		w.groups[c.Args[0]] = &group{name: c.Args[0], c: cl, members: map[string]int32{}, instances: map[string]string{}}
	case OpJoin:
		g := w.groups[c.Args[0]]
		g.gen++
		g.members[c.Args[1]] = g.gen
		if inst, ok := c.Get("instance"); ok {
			g.instances[inst] = c.Args[1]
		}
	case OpLeave:
		g := w.groups[c.Args[0]]
		if _, ok := g.members[c.Args[1]]; ok {
			delete(g.members, c.Args[1])
			for inst, m := range g.instances {
				if m == c.Args[1] {
					delete(g.instances, inst)
				}
			}
			g.gen++
		}
	case OpRebalance:
		w.groups[c.Args[0]].gen++
	case OpOffsets:
		w.offsets(c)
	case OpSync:
		var dest *cluster
		if len(c.Args) > 0 {
			dest = w.byName[c.Args[0]]
		}
		return w.sync(dest)
	case OpFail:
		w.byName[c.Args[0]].failed = true
	case OpRecover:
		w.byName[c.Args[0]].failed = false
	case OpFault:
		cl := w.byName[c.Args[0]]
		cl.faults = append(cl.faults, fault{at: argStr(c, "at"), times: argInt(c, "times", 1)})
	case OpStop:
		variant := argStr(c, "variant")
		if variant == "" {
			variant = w.opts.Get("stop-variant")
		}
		return w.stop(w.byName[c.Args[0]], argStr(c, "topic"), variant)
	case OpRestart:
		return w.restart(w.byName[c.Args[0]])
	case OpElect:
		return w.elect(w.byName[c.Args[0]].part(c.Args[1]))
	case OpSet, OpExpect:
	}
	return nil
}

func argStr(c *Command, key string) string {
	v, _ := c.Get(key)
	return v
}

func (cl *cluster) part(key string) *partition {
	for _, p := range cl.parts {
		if p.key == key {
			return p
		}
	}
	return nil
}

func (w *world) addCluster(c *Command) error {
	cl := &cluster{name: c.Args[0], id: DefaultClusterID(c.Args[0]), replicas: argInt(c, "replicas", 1),
		fetchBytes: argInt(c, "fetch-bytes", 1<<20), txn: txnCoordinator{ids: map[string]*txnState{}}}
	if v, ok := c.Get("id"); ok {
		cl.id, _ = parseClusterID(v)
	}
	start, _ := argInt64(c, "pid-start")
	cl.pids = newPIDAllocator(start)
	w.clusters = append(w.clusters, cl)
	w.byName[cl.name] = cl
	for _, t := range w.topics {
		if err := w.addPartitions(cl, t); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) addPartitions(cl *cluster, t topicDecl) error {
	for n := 0; n < t.partitions; n++ {
		p := &partition{c: cl, topic: t.name, n: n, key: t.name + "/" + strconv.Itoa(n),
			mirroredPIDs: map[int64]pidOrigin{}, localPIDs: map[int64]bool{}}
		for i := 0; i < cl.replicas; i++ {
			r, err := openReplica(replicaConfig{Strategy: w.strategy, Options: w.opts, ClusterID: cl.id,
				Topic: t.name, Partition: int32(n), registries: w.regs})
			if err != nil {
				return fmt.Errorf("open %s %s replica %d: %w", cl.name, p.key, i, err)
			}
			p.reps = append(p.reps, r)
		}
		cl.parts = append(cl.parts, p)
	}
	return nil
}

// advanceHW sets the high watermark of every replica to the smallest log end
// offset (all replicas are in the ISR).
func (p *partition) advanceHW() {
	hw := p.lead().LogEndOffset()
	for _, r := range p.reps {
		hw = min(hw, r.LogEndOffset())
	}
	for _, r := range p.reps {
		if r.HighWatermark() != hw {
			r.SetHighWatermark(hw)
		}
	}
}

// --- producers and transactions -------------------------------------------

func (w *world) newProducer(c *Command) error {
	cl := w.byName[c.Args[1]]
	pr := &client{name: c.Args[0], c: cl, txnID: argStr(c, "transactional"), seq: map[*partition]int32{},
		txnParts: map[*partition]bool{}}
	w.clients[pr.name] = pr
	pid, forcePID := argInt64(c, "pid")
	epoch, forceEpoch := argInt64(c, "epoch")
	if !forcePID {
		pid = -1
	}
	if !forceEpoch {
		epoch = -1
	}
	w.initProducer(pr, pid, int16(epoch), true)
	return nil
}

// initProducer is InitProducerId (kafka-reference.md §5.2). forcedPID ≥ 0 or
// forcedEpoch ≥ 0 replace what the coordinator would hand out (raw edge
// cases); -1 means not forced. A forced PID may be any int64 except -1.
func (w *world) initProducer(pr *client, forcedPID int64, forcedEpoch int16, first bool) {
	cl := pr.c
	pr.seq = map[*partition]int32{}
	pr.inTxn, pr.txnParts, pr.fatal = false, map[*partition]bool{}, false
	if cl.failed {
		// The client has no PID; it retries InitProducerId before its next
		// request (ready).
		w.or.clientError(pr.name, cl, nil, errCoordinatorNA)
		pr.pid, pr.epoch, pr.needInit = -1, -1, true
		pr.forcedPID, pr.forcedEpoch = forcedPID, forcedEpoch
		return
	}
	pr.needInit = false
	if pr.txnID == "" {
		pr.pid, pr.epoch = cl.pids.take(), 0
		if first && forcedPID != -1 {
			pr.pid = forcedPID
		}
		if first && forcedEpoch >= 0 {
			pr.epoch = forcedEpoch
		}
		return
	}
	t := cl.txn.ids[pr.txnID]
	switch {
	case t == nil:
		t = &txnState{id: pr.txnID, pid: cl.pids.take()}
		cl.txn.ids[pr.txnID] = t
		cl.txn.order = append(cl.txn.order, t)
	case epochExhausted(t.epoch):
		w.abortOpen(cl, t, t.epoch)
		t.pid, t.epoch = cl.pids.take(), 0
	default:
		t.epoch++
		w.abortOpen(cl, t, t.epoch)
	}
	if first && forcedPID != -1 {
		t.pid = forcedPID
	}
	if first && forcedEpoch >= 0 {
		t.epoch = forcedEpoch
	}
	pr.pid, pr.epoch = t.pid, t.epoch
}

// abortOpen aborts t's open transaction with markers at epoch (the fence of
// InitProducerId).
func (w *world) abortOpen(cl *cluster, t *txnState, epoch int16) {
	if t.open {
		w.writeMarkers(cl, t, epoch, true, t.producer)
	}
}

// writeMarkers appends one COMMIT or ABORT marker per partition of t's
// transaction, COORDINATOR origin, and closes the transaction.
func (w *world) writeMarkers(cl *cluster, t *txnState, epoch int16, abort bool, who string) {
	for _, p := range t.parts {
		ts := w.tick()
		w.markers[ts] = markerTruth{producer: t.producer, serial: t.serial, abort: abort}
		b := codec.AppendEndTxnMarker(nil, t.pid, epoch, cl.txn.coordEpoch, abort, ts)
		if cl.failed {
			w.or.clientError(who, cl, p, errCoordinatorNA)
			continue
		}
		if _, err := p.lead().AppendCoordinator(b); err != nil {
			w.or.clientError(who, cl, p, errorName(err))
			continue
		}
		p.advanceHW()
	}
	t.open, t.parts = false, nil
}

func (w *world) newZombie(name string, of *client) {
	z := &client{name: name, c: of.c, txnID: of.txnID, pid: of.pid, epoch: of.epoch, seq: map[*partition]int32{},
		inTxn: of.inTxn, txnParts: map[*partition]bool{}, txnSerial: of.txnSerial}
	for p, s := range of.seq {
		z.seq[p] = s
	}
	for p := range of.txnParts {
		z.txnParts[p] = true
	}
	w.clients[name] = z
}

func (w *world) begin(pr *client) {
	if !w.ready(pr) {
		return
	}
	if pr.fatal {
		w.or.clientError(pr.name, pr.c, nil, errProducerFenced)
		return
	}
	if pr.inTxn {
		w.or.clientError(pr.name, pr.c, nil, errInvalidTxnState)
		return
	}
	pr.inTxn = true
	pr.txnParts = map[*partition]bool{}
	pr.txnSerial++
}

// coordinatorCheck is the coordinator's pid/epoch check of AddPartitionsToTxn
// and EndTxn.
func (w *world) coordinatorCheck(pr *client) (*txnState, string) {
	if pr.c.failed {
		return nil, errCoordinatorNA
	}
	t := pr.c.txn.ids[pr.txnID]
	switch {
	case t == nil || t.pid != pr.pid:
		return nil, errPIDMapping
	case t.epoch != pr.epoch:
		return nil, errProducerFenced
	}
	return t, ""
}

func (w *world) endTxn(pr *client, abort bool) {
	if !w.ready(pr) {
		return
	}
	if !pr.inTxn {
		w.or.clientError(pr.name, pr.c, nil, errInvalidTxnState)
		return
	}
	t, e := w.coordinatorCheck(pr)
	if e != "" {
		w.or.clientError(pr.name, pr.c, nil, e)
		pr.inTxn = false
		return
	}
	pr.inTxn = false
	if !t.open { // nothing was added: EndTxn on an empty transaction writes no marker
		return
	}
	w.writeMarkers(pr.c, t, t.epoch, abort, pr.name)
}

func (w *world) offsets(c *Command) {
	pr, g := w.clients[c.Args[0]], w.groups[c.Args[1]]
	member := c.Args[2]
	if member == "-" {
		member = ""
	}
	gen := int32(-1)
	if known, ok := g.members[member]; ok {
		gen = known
	}
	if v, ok := c.Get("generation"); ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		gen = int32(n)
	}
	if !pr.inTxn {
		w.or.clientError(pr.name, g.c, nil, errInvalidTxnState)
		return
	}
	if g.c.failed {
		w.or.clientError(pr.name, g.c, nil, errCoordinatorNA)
		return
	}
	e := g.checkTxnOffsetCommit(member, argStr(c, "instance"), gen)
	if e == "" {
		if t, ce := w.coordinatorCheck(pr); ce != "" {
			e = errInvalidProducerEpoch // the offsets write is fenced at the __consumer_offsets leader
		} else if !t.open {
			t.open, t.producer, t.serial = true, pr.name, pr.txnSerial
		}
	}
	if e == "" {
		return
	}
	w.or.clientError(pr.name, g.c, nil, e)
	switch e {
	case errIllegalGeneration, errUnknownMemberID, errFencedInstanceID:
		w.endTxn(pr, true) // CommitFailedException is abortable: the application aborts
	default:
		pr.fatal = true
	}
}

// send is one produce request of one batch.
func (w *world) send(c *Command) error {
	pr := w.clients[c.Args[0]]
	p := pr.c.part(c.Args[1])
	if !w.ready(pr) {
		return nil
	}
	if pr.fatal { // ProducerFencedException is fatal: the client refuses to send
		w.or.clientError(pr.name, pr.c, p, errProducerFenced)
		return nil
	}
	if pr.c.failed {
		w.or.clientError(pr.name, pr.c, p, errNetwork)
		return nil
	}
	if pr.inTxn && !pr.txnParts[p] { // AddPartitionsToTxn
		t, e := w.coordinatorCheck(pr)
		if e != "" {
			w.or.clientError(pr.name, pr.c, p, e)
			return nil
		}
		if !t.open {
			t.open, t.producer, t.serial = true, pr.name, pr.txnSerial
		}
		if !t.has(p) {
			t.parts = append(t.parts, p)
		}
		pr.txnParts[p] = true
	} else if pr.inTxn && w.opts.Get("txn-verification") == "on" && !openOn(p.lead(), pr.pid) {
		// KIP-890 verification (kafka-reference.md §3.5): the partition has
		// no transaction open for this PID, so the leader asks the
		// coordinator whether the partition belongs to the producer's
		// transaction at this epoch.
		if _, e := w.coordinatorCheck(pr); e != "" {
			w.or.clientError(pr.name, pr.c, p, e)
			return nil
		}
	}
	d := dataBatch{pid: pr.pid, epoch: pr.epoch, seq: pr.seq[p], records: argInt(c, "records", 1),
		bytes: argInt(c, "bytes", 16), txn: pr.inTxn, producer: pr.name, txnSerial: pr.txnSerial, ts: w.tick()}
	if pr.pid == -1 {
		d.seq, d.epoch = -1, -1
	}
	if v, ok := c.Get("seq"); ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		d.seq = int32(n)
	}
	if v, ok := c.Get("epoch"); ok {
		n, _ := strconv.ParseInt(v, 10, 16)
		d.epoch = int16(n)
	}
	b, err := d.build()
	if err != nil {
		return fmt.Errorf("build batch: %w", err)
	}
	leo := p.lead().LogEndOffset()
	p.localPIDs[d.pid] = true // I6 is about the PIDs that meet, appended or not
	res, err := p.lead().AppendClient(b)
	if err != nil {
		w.or.clientError(pr.name, pr.c, p, errorName(err))
		return nil
	}
	p.advanceHW()
	if d.seq >= 0 {
		pr.seq[p] = codec.IncrementSequence(d.seq, int32(d.records))
	}
	w.or.checkAck(pr, p, d, res, leo)
	return nil
}

// openOn reports whether r's producer state has a transaction open for pid.
func openOn(r replica, pid int64) bool {
	for _, e := range r.Producers() {
		if e.PID == pid {
			return e.TxnFirstOffset >= 0
		}
	}
	return false
}

// --- mirroring ---------------------------------------------------------------

// mirror makes dest's partitions (of topic, or all) start MIRRORING from src.
// Failback (src stopped mirroring from dest): dest truncates to the divergence
// point, the dest offset where src's mirroring left off, and fetches src from
// the offset src had reached then (mirroring.md §5). Otherwise dest fetches
// src from its start and appends after what it holds (fan-in).
func (w *world) mirror(dest, src *cluster, topic string) error {
	for _, p := range dest.parts {
		if topic != "" && p.topic != topic {
			continue
		}
		switch {
		case p.state == stateMirroring && p.source == src:
			continue // already mirroring src
		case p.state == stateStopping || p.state == stateFailed:
			return fmt.Errorf("%w: %s %s is %s: stop it before it mirrors again", ErrScenario, dest.name, p.key, p.state)
		}
		for x, hops := src.part(p.key), 0; x.source != nil && hops <= len(w.clusters); x, hops = x.source.part(p.key), hops+1 {
			if x.state != stateMirroring && x.state != stateStopping {
				break
			}
			if x.source == dest {
				return fmt.Errorf("%w: %s from %s would close a mirror cycle on %s", ErrScenario, dest.name, src.name, p.key)
			}
		}
		p.srcPos = 0
		if sp := src.part(p.key); sp.stoppedFrom == dest {
			div := sp.stopSrcPos
			p.srcPos = sp.mirroredEnd
			if div < p.lead().LogEndOffset() {
				w.or.truncated(p, div)
				for _, r := range p.reps {
					if err := r.Truncate(div); err != nil {
						return fmt.Errorf("truncate %s %s: %w", dest.name, p.key, err)
					}
				}
				w.or.rescan(p)
			}
		}
		for _, r := range p.reps {
			if err := r.StartMirroring(); err != nil {
				return fmt.Errorf("start mirroring %s %s: %w", dest.name, p.key, err)
			}
		}
		p.state, p.source, p.stoppedFrom = stateMirroring, src, nil
		p.pairs = map[int64]int64{}
		p.advanceHW()
	}
	return nil
}

// maxSyncRounds bounds the fetch loop of one sync (each round moves at least
// one batch).
const maxSyncRounds = 1 << 20

// sync runs replica fetchers everywhere and the mirror fetchers of dest (all
// when nil) until nothing moves.
func (w *world) sync(dest *cluster) error {
	for round := 0; round < maxSyncRounds; round++ {
		moved := false
		for _, cl := range w.clusters {
			if cl.failed {
				continue
			}
			for _, p := range cl.parts {
				m, err := w.replicaFetch(p)
				if err != nil {
					return err
				}
				moved = moved || m
				if (dest == nil || dest == cl) && p.state == stateMirroring && !p.source.failed {
					m, err := w.mirrorFetch(p)
					if err != nil {
						return err
					}
					moved = moved || m
				}
			}
		}
		if !moved {
			w.or.checkReplicasAgree()
			return nil
		}
	}
	return fmt.Errorf("sync did not converge in %d rounds", maxSyncRounds)
}

// batchesFrom returns every batch of r's log from offset on (test-sized logs).
func batchesFrom(r replica, offset int64) []codec.Batch {
	var out []codec.Batch
	for off := offset; off < r.LogEndOffset(); {
		chunk, err := r.Read(off, 1<<20)
		if err != nil || len(chunk) == 0 {
			break
		}
		next := off
		eachBatch(chunk, func(b codec.Batch) {
			if b.LastOffset() >= off {
				out = append(out, b)
				next = b.NextOffset()
			}
		})
		if next <= off {
			break
		}
		off = next
	}
	return out
}

// divergence is the first offset at which follower's log differs from
// leader's (Kafka finds it through leader epochs; the simulator compares the
// bytes), or follower's log end when it is a prefix of leader's.
func divergence(leader, follower replica) int64 {
	lb, fb := batchesFrom(leader, 0), batchesFrom(follower, 0)
	for i, b := range fb {
		if i >= len(lb) || string(lb[i]) != string(b) {
			return b.BaseOffset()
		}
	}
	return follower.LogEndOffset()
}

// reconcileFollowers truncates every follower to its divergence point from
// the leader, after the leader's log was cut or rewritten (STOPPING's
// truncate variant, a leader change).
func (w *world) reconcileFollowers(p *partition) error {
	for i, r := range p.reps {
		if i == p.leader {
			continue
		}
		if d := divergence(p.lead(), r); d < r.LogEndOffset() {
			if err := r.Truncate(d); err != nil {
				return fmt.Errorf("truncate follower %d of %s %s: %w", i, p.c.name, p.key, err)
			}
		}
	}
	return nil
}

// replicaFetch moves one fetch chunk to each follower that is behind.
func (w *world) replicaFetch(p *partition) (bool, error) {
	moved := false
	lead := p.lead()
	for i, r := range p.reps {
		if i == p.leader || r.LogEndOffset() >= lead.LogEndOffset() {
			continue
		}
		data, err := lead.Read(r.LogEndOffset(), p.c.fetchBytes)
		if err != nil || len(data) == 0 {
			return moved, fmt.Errorf("replica fetch %s %s: %v", p.c.name, p.key, err)
		}
		if _, err := r.AppendReplica(data); err != nil {
			return moved, fmt.Errorf("replica append %s %s: %w", p.c.name, p.key, err)
		}
		moved = true
	}
	before := lead.HighWatermark()
	p.advanceHW()
	return moved || lead.HighWatermark() != before, nil
}

// mirrorFetch moves one chunk (at most the destination's fetch-bytes, whole
// batches below the source's high watermark) from the source leader.
func (w *world) mirrorFetch(p *partition) (bool, error) {
	sp := p.source.part(p.key)
	src := sp.lead()
	from, hw := p.srcPos, src.HighWatermark()
	if from >= hw {
		return false, nil
	}
	data, err := src.Read(from, p.c.fetchBytes)
	if err != nil {
		return false, fmt.Errorf("mirror fetch %s %s from %s: %w", p.c.name, p.key, p.source.name, err)
	}
	n, done := 0, false
	eachBatch(data, func(b codec.Batch) {
		if done || b.LastOffset() >= hw {
			done = true
			return
		}
		n += b.Size()
	})
	data = data[:n]
	if len(data) == 0 {
		return false, nil
	}
	res, err := p.lead().AppendMirrored(data, p.source.id)
	if err != nil {
		if st := p.lead().State(); st == stateFailed {
			p.state = stateFailed
			w.or.report("FAIL", p, fmt.Sprintf("mirror partition FAILED: %s", errorName(err)))
			return false, nil
		}
		return false, fmt.Errorf("mirrored append %s %s: %w", p.c.name, p.key, err)
	}
	eachBatch(data, func(b codec.Batch) { p.srcPos = b.NextOffset() })
	w.or.mirrored(p, data, res.FirstOffset)
	p.advanceHW()
	return true, nil
}

// stop runs one STOPPING attempt on every mirrored partition of dest (of
// topic, or all).
func (w *world) stop(dest *cluster, topic, variant string) error {
	if dest.failed {
		return nil
	}
	for _, p := range dest.parts {
		if topic != "" && p.topic != topic {
			continue
		}
		if p.state != stateMirroring && p.state != stateStopping && p.state != stateFailed {
			continue
		}
		if p.state != stateStopping { // the first attempt: remember where mirroring left off
			p.mirroredEnd, p.stopSrcPos, p.stoppedFrom = p.lead().LogEndOffset(), p.srcPos, p.source
		}
		req := stopRequest{Variant: variant}
		for i := range dest.faults {
			if dest.faults[i].times > 0 {
				req.FailAt = dest.faults[i].at
				dest.faults[i].times--
				break
			}
		}
		lso := p.lead().LastStableOffset()
		err := p.lead().Stop(req)
		p.state = p.lead().State()
		if variant == "truncate" && lso < p.mirroredEnd {
			// The truncate variant cut the mirrored prefix back to the LSO:
			// that is where the two sides now diverge.
			p.stopSrcPos = max(0, p.stopSrcPos-(p.mirroredEnd-lso))
			p.mirroredEnd = lso
		}
		if err == nil && p.state != stateStopped {
			return fmt.Errorf("stop %s %s: state %s after success", dest.name, p.key, p.state)
		}
		if p.state == stateStopped {
			p.source = nil
			p.stopEnd = p.lead().LogEndOffset()
		}
		if err := w.reconcileFollowers(p); err != nil {
			return err
		}
		p.advanceHW()
		w.or.rescan(p)
	}
	return nil
}

// restart rebuilds every replica of cl from its log.
func (w *world) restart(cl *cluster) error {
	for _, p := range cl.parts {
		for _, r := range p.reps {
			if err := r.Restart(); err != nil {
				return fmt.Errorf("restart %s %s: %w", cl.name, p.key, err)
			}
		}
		w.or.rescan(p)
	}
	return nil
}

// elect moves leadership to the next replica at a new leader epoch; the new
// leader reopens from its log in the partition's mirror state, and followers
// truncate to their divergence point from it. A STOPPED partition whose new
// leader lacks part of the STOPPING output (closing markers, barrier: not yet
// replicated) runs STOPPING again, since it must never be writable without
// its barrier; its log cannot hold local writes yet, as they come after.
func (w *world) elect(p *partition) error {
	p.leader = (p.leader + 1) % len(p.reps)
	p.leaderEpoch++
	lead := p.lead()
	rerun := p.state == stateStopped && lead.LogEndOffset() < p.stopEnd
	state := p.state
	if rerun {
		state = stateMirroring
	}
	if err := lead.BecomeLeader(p.leaderEpoch, state); err != nil {
		return err
	}
	if rerun {
		if err := lead.Stop(stopRequest{Variant: w.opts.Get("stop-variant")}); err != nil {
			p.state = lead.State()
		} else {
			p.stopEnd = lead.LogEndOffset()
		}
	}
	if err := w.reconcileFollowers(p); err != nil {
		return err
	}
	p.advanceHW()
	w.or.rescan(p)
	return nil
}
