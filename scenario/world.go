package scenario

import (
	"fmt"
	"strconv"
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
	// txnIdentity maps a transactional.id to the true producer it names:
	// the first producer declared with it, on any cluster.
	txnIdentity map[string]string
	// pending are the acks=all produce requests and the coordinator's
	// markers that wait for the high watermark (acks.go); delivered holds
	// the timestamp of every data batch whose producer was acknowledged
	// and of every marker its partition replicated.
	pending   []*pendingWrite
	delivered map[int64]bool
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
	legacy     int  // the last legacy replicas of each partition predate control type 7
	noBarrier  bool // barrier-feature=0: STOPPING writes no barrier
	fetchBytes int
	failed     bool
	pids       pidAllocator
	// pendingAdvance is the next PID an asynchronous allocator advance
	// will set after the next InitProducerId (-1: none pending).
	pendingAdvance int64
	txn            txnCoordinator
	parts          []*partition // in topic declaration order, then partition number
	faults         []fault

	// segmentBytes and retainSegments: log.segment.bytes (0: the default),
	// and retention by segment count (0 keeps every segment).
	segmentBytes, retainSegments int
}

type fault struct {
	at    string
	times int
	crash bool // the leader crashes at the step (an unclean restart of its replica)
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
	// srcPos is the next source offset the mirror fetcher reads under
	// fan-in (align=fan-in), where mirrored batches get this log's next
	// offsets, so that a partition can take batches from a second source
	// after a first one. An offset-preserving mirror fetches from its log
	// end (fetchPos).
	srcPos int64
	fanIn  bool
	// After a stop: the log end offset and the source offset where
	// mirroring left off, and the source, persisted for failback.
	mirroredEnd int64
	stopSrcPos  int64
	stopEnd     int64 // log end right after the successful STOPPING
	// The lowest log end of the leader since this partition last began
	// to stop (ownFloor), and since a partition mirroring this one did
	// (peerFloor): a failback shares no history past them.
	ownFloor, peerFloor logFloor
	stoppedFrom         *cluster
	// missingStop: a multi-partition stop reported this partition missing
	// (stop-completion=first); the next stop of its cluster writes its
	// barrier again.
	missingStop bool
	// stopTried: a STOPPING attempt has run since the partition last
	// started MIRRORING (a failed one leaves it STOPPING or FAILED).
	stopTried    bool
	mirroredPIDs map[int64]pidOrigin // destination PID → true origin, for I5/I6
	// origins maps each PID stored in the log to its true origin: the
	// cluster and PID its producer wrote it with (local sends, and mirrored
	// batches followed back through their source's origins).
	origins map[int64]pidOrigin
	// pairs maps the offset of each data batch mirrored since the partition
	// last started MIRRORING to its offset in the source partition, until the
	// oracle has compared their read_committed visibility (I3).
	pairs map[int64]int64
	// localPIDs and mirroredBy map a PID to the true producers of the
	// local client batches and of the mirrored batches stored under it,
	// for I6.
	localPIDs, mirroredBy pidProducers
	// paused marks the replicas whose fetcher is held back (pause): they
	// fetch nothing, stay in the ISR and so hold the high watermark back.
	paused map[int]bool
}

type pidOrigin struct {
	cluster string
	pid     int64
}

func (p *partition) lead() replica { return p.reps[p.leader] }

// fetchPos is the next source offset p's mirror fetcher reads: its leader's
// log end, as the source's offsets are its own (mirrors preserve offsets),
// or under fan-in the position it reached in the source.
func (p *partition) fetchPos() int64 {
	if p.fanIn {
		return p.srcPos
	}
	return p.lead().LogEndOffset()
}

// markerTruth is what the coordinator knew when it wrote a marker.
type markerTruth struct {
	producer string
	serial   int
	abort    bool
}

// client is one producer instance (a zombie is one too).
type client struct {
	name string
	// identity is the true producer the oracle attributes the client's
	// batches and transactions to: its name, or for a transactional client
	// the first producer declared with its transactional.id (a
	// transactional.id names one producer, whichever cluster it
	// initialises on). A zombie is an instance of its own.
	identity  string
	c         *cluster
	txnID     string // "" idempotent
	oldFormat bool   // magic 0/1: no producer ID, no InitProducerId
	// acksOne: acks=1, acknowledged at the leader's append; such a
	// producer is not idempotent (no producer ID, no InitProducerId).
	// Otherwise acks=all: acknowledged once the high watermark passes the
	// batch (pendingAck).
	acksOne   bool
	pid       int64
	epoch     int16
	seq       map[*partition]int32
	inTxn     bool
	txnParts  map[*partition]bool
	txnSerial int
	fatal     bool // a fatal error (ProducerFencedException): only init revives it
	// txnStarted: under TV2 a send or an offsets commit was attempted in
	// the open transaction (TransactionManager#maybeAddPartition and
	// #sendOffsetsToTransaction set transactionStarted before any request),
	// so the client sends EndTxn even when the coordinator added no
	// partition of it; without it the client sends none.
	txnStarted bool
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
		groups: map[string]*group{}, markers: map[int64]markerTruth{}, clock: 1_000_000, regs: registries{},
		txnIdentity: map[string]string{}, delivered: map[int64]bool{}}
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

func argInt(c *command, key string, def int) int {
	v, _ := c.Get(key)
	return atoi(v, def)
}

func argInt64(c *command, key string) (int64, bool) {
	v, ok := c.Get(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// exec runs one command and the writes it leaves owed (settleWrites), and
// lowers the log floors of the failback (noteLogFloors) after each: a
// command that cuts a log (an unclean restart) can be followed by resends
// that raise its log end again before the command ends, and the floor must
// see the cut. Errors are internal failures of the broker packages (not
// client errors, which the oracle records).
func (w *world) exec(c *command) error {
	err := w.execOp(c)
	w.noteLogFloors()
	if err == nil {
		err = w.settleWrites()
		w.noteLogFloors()
	}
	return err
}

// execOp is exec without its bookkeeping.
func (w *world) execOp(c *command) error {
	w.step = c.Step
	switch c.opcode {
	case opCluster:
		return w.addCluster(c)
	case opTopic:
		t := topicDecl{name: c.Args[0], partitions: argInt(c, "partitions", 1)}
		w.topics = append(w.topics, t)
		for _, cl := range w.clusters {
			if err := w.addPartitions(cl, t); err != nil {
				return err
			}
		}
	case opMirror:
		return w.mirror(w.byName[c.Args[0]], w.byName[c.Args[1]], argStr(c, "topic"), argStr(c, "align"))
	case opProducer:
		return w.newProducer(c)
	case opInit:
		w.initProducer(w.clients[c.Args[0]], -1, -1, false)
	case opZombie:
		w.newZombie(c.Args[0], w.clients[c.Args[1]])
	case opSend:
		return w.send(c)
	case opAdd:
		w.add(c)
	case opBegin:
		w.begin(w.clients[c.Args[0]])
	case opCommit:
		w.endTxn(w.clients[c.Args[0]], false)
	case opAbort:
		w.endTxn(w.clients[c.Args[0]], true)
	case opGroup:
		cl := w.byName[c.Args[1]]
		w.groups[c.Args[0]] = &group{name: c.Args[0], c: cl, members: map[string]int32{}, instances: map[string]string{}}
	case opJoin:
		g := w.groups[c.Args[0]]
		g.gen++
		g.members[c.Args[1]] = g.gen
		if inst, ok := c.Get("instance"); ok {
			g.instances[inst] = c.Args[1]
		}
	case opLeave:
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
	case opRebalance:
		w.groups[c.Args[0]].gen++
	case opOffsets:
		w.offsets(c)
	case opSync:
		var dest *cluster
		if len(c.Args) > 0 {
			dest = w.byName[c.Args[0]]
		}
		return w.sync(dest)
	case opFail:
		w.byName[c.Args[0]].failed = true
	case opRecover:
		w.byName[c.Args[0]].failed = false
	case opFault:
		cl := w.byName[c.Args[0]]
		cl.faults = append(cl.faults, fault{at: argStr(c, "at"), times: argInt(c, "times", 1), crash: c.Has("crash")})
	case opStop:
		variant := argStr(c, "variant")
		if variant == "" {
			variant = w.opts.Get("stop-variant")
		}
		return w.stop(w.byName[c.Args[0]], argStr(c, "topic"), variant)
	case opRestart:
		return w.restart(w.byName[c.Args[0]], c.Has("unclean"))
	case opElect:
		target := -1
		if _, ok := c.Get("replica"); ok {
			target = argInt(c, "replica", 0)
		}
		return w.elect(w.byName[c.Args[0]].part(c.Args[1]), target, c.Has("unclean"))
	case opPause, opResume:
		p := w.byName[c.Args[0]].part(c.Args[1])
		if p.paused == nil {
			p.paused = map[int]bool{}
		}
		p.paused[argInt(c, "replica", 0)] = c.opcode == opPause
	case opClean:
		return w.clean(w.byName[c.Args[0]].part(c.Args[1]))
	case opRepoint:
		w.repoint(w.clients[c.Args[0]], w.byName[c.Args[1]])
	case opSet, opExpect:
	}
	return nil
}

func argStr(c *command, key string) string {
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

func (w *world) addCluster(c *command) error {
	cl := &cluster{name: c.Args[0], id: DefaultClusterID(c.Args[0]), replicas: argInt(c, "replicas", 1),
		fetchBytes: argInt(c, "fetch-bytes", 1<<20), txn: txnCoordinator{ids: map[string]*txnState{}}}
	if v, ok := c.Get("id"); ok {
		cl.id, _ = parseClusterID(v)
	}
	cl.legacy = argInt(c, "legacy-replicas", 0)
	cl.noBarrier = argInt(c, "barrier-feature", 1) == 0
	cl.segmentBytes, cl.retainSegments = argInt(c, "segment-bytes", 0), argInt(c, "retain-segments", 0)
	start, _ := argInt64(c, "pid-start")
	cl.pids = newPIDAllocator(start)
	cl.pendingAdvance = -1
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
			mirroredPIDs: map[int64]pidOrigin{}, localPIDs: pidProducers{},
			mirroredBy: pidProducers{}, origins: map[int64]pidOrigin{}}
		for i := 0; i < cl.replicas; i++ {
			r, err := openReplica(replicaConfig{Strategy: w.strategy, Options: w.opts, ClusterID: cl.id,
				Topic: t.name, Partition: int32(n), registries: w.regs, BarrierUnaware: i >= cl.replicas-cl.legacy,
				NoBarrier: cl.noBarrier, SegmentBytes: cl.segmentBytes, RetainSegments: cl.retainSegments})
			if err != nil {
				return fmt.Errorf("open %s %s replica %d: %w", cl.name, p.key, i, err)
			}
			p.reps = append(p.reps, &recorder{replica: r, p: p, o: w.or})
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
