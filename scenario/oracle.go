package scenario

// The oracle's state and its report: the checks live in one file per family
// (oracle_entries.go: conflation, tracking and epoch regressions;
// oracle_ack.go: acknowledgements and resends; oracle_loss.go: lost writes;
// oracle_mapping.go: PID mappings; oracle_txn.go: transactions, committed
// data and the LSO; oracle_replicas.go: replicas agreeing), and what it
// records of every write in oracle_record.go.

import (
	"github.com/mirrorpath/mirrorpath/codec"
)

// Violation is one oracle finding: each (code, cluster, partition) is
// reported once, at the first step it appeared; ERR once per error kind.
type Violation struct {
	Code      Code   `json:"code"`
	Step      int    `json:"step"`
	Cluster   string `json:"cluster"`
	Partition string `json:"partition"`
	Detail    string `json:"detail"`
	// endLost marks an M6 whose pinning transaction had its acknowledged
	// end marker truncated away (oracle.truncatedEnds): the hang follows
	// from that loss, which is RPO, not from a design's own marker.
	endLost bool
}

// ClientError is an error a client saw (every one, in step order).
type ClientError struct {
	Step     int    `json:"step"`
	Producer string `json:"producer"`
	Error    string `json:"error"`
}

// oracle checks the invariants of docs/scenarios.md after every step. It reads
// the truth from record headers and marker timestamps (doc.go) and the
// broker's state through the replica interface; it never decides what the
// broker should have accepted except through those invariants.
type oracle struct {
	w            *world
	seen         map[string]bool
	violations   []Violation
	clientErrors []ClientError
	shadows      map[replica]*shadow
	// sends is every client batch sent, by its timestamp (sent); written
	// every batch written to each partition (record); txnData the
	// offsets of each transaction's data on each partition.
	sends   map[int64]sendTruth
	written map[*partition]written
	txnData map[txnKey][]placedWrite
	// removed is what truncations removed of acknowledged writes, until
	// it is settled (settleLosses).
	removed []removal
	// truncatedEnds is the step at which a truncation first removed an
	// acknowledged end marker of each transaction, on any partition
	// (ackedLost): the transaction stays open wherever that log, or a
	// mirror of it, held its data (reportPinned).
	truncatedEnds map[txnRef]int
	// commits are the COMMIT markers written whose data read_committed
	// has not decided yet (checkCommitsDelivered).
	commits []commitCheck
	// regressions are the offsets of the epoch regressions each partition
	// accepted (I7), regressionAt the index of its finding.
	regressions  map[*partition]map[int64]bool
	regressionAt map[*partition]int
}

// shadow is the oracle's view of one replica's log: which true producer
// each producer-state entry has taken batches from, and the transactions a
// read_committed consumer sees open, per stored PID.
type shadow struct {
	scanned     int64 // next offset to read
	owners      map[int64]owner
	lastBarrier int64 // offset of the last barrier, -1 none
	open        map[int64][]txnRef
	unseen      map[int64]int64 // PID → offset of a data batch whose entry must exist after the scan
}

type owner struct {
	producer string
	epoch    int16
	lastSeq  int32
}

type txnRef struct {
	producer string
	serial   int
}

func newOracle(w *world) *oracle {
	return &oracle{w: w, seen: map[string]bool{}, shadows: map[replica]*shadow{}, sends: map[int64]sendTruth{},
		written: map[*partition]written{}, txnData: map[txnKey][]placedWrite{},
		regressions: map[*partition]map[int64]bool{}, regressionAt: map[*partition]int{},
		truncatedEnds: map[txnRef]int{}}
}

func newShadow() *shadow {
	return &shadow{owners: map[int64]owner{}, lastBarrier: -1,
		open: map[int64][]txnRef{}, unseen: map[int64]int64{}}
}

func (o *oracle) shadowOf(r replica) *shadow {
	s := o.shadows[r]
	if s == nil {
		s = newShadow()
		o.shadows[r] = s
	}
	return s
}

// report records code for (cluster, partition) unless already reported.
func (o *oracle) report(code Code, p *partition, detail string) {
	o.reportAt(code, p, o.w.step, detail)
}

// reportAt is report of a finding that appeared at an earlier step; it
// returns the finding it recorded (reportKey).
func (o *oracle) reportAt(code Code, p *partition, step int, detail string) *Violation {
	return o.reportKey(code, string(code)+"|"+p.c.name+"|"+p.key, step, p.c.name, p.key, detail)
}

// reportKey records a finding under key unless one was; it returns the
// finding it recorded, nil when key was already reported.
func (o *oracle) reportKey(code Code, key string, step int, cluster, part, detail string) *Violation {
	if o.seen[key] {
		return nil
	}
	o.seen[key] = true
	o.violations = append(o.violations, Violation{Code: code, Step: step, Cluster: cluster, Partition: part,
		Detail: detail})
	return &o.violations[len(o.violations)-1]
}

// clientError records a visible client error; the first of each kind is an
// ERR violation.
func (o *oracle) clientError(producer string, cl *cluster, p *partition, name string) {
	o.clientErrors = append(o.clientErrors, ClientError{Step: o.w.step, Producer: producer, Error: name})
	part := ""
	if p != nil {
		part = p.key
	}
	o.reportKey(CodeERR, "ERR|"+name, o.w.step, cl.name, part, producer+": "+name)
}

// afterStep runs the checks that hold after every step.
func (o *oracle) afterStep() {
	o.settleLosses(nil, false, false)
	for _, cl := range o.w.clusters {
		for _, p := range cl.parts {
			for _, r := range p.reps {
				o.scan(p, r)
			}
			o.checkFailed(p)
			o.checkLSO(p)
			o.checkMapping(p)
			o.checkReadCommitted(p)
		}
	}
	o.checkCommitsDelivered()
}

// rescan makes the oracle read every replica of p from offset 0 again
// (after a truncation, an election or a restart), and drops what p no longer
// holds from its records (prune, pruneMappings). Findings already reported
// stay reported once.
func (o *oracle) rescan(p *partition) {
	for _, r := range p.reps {
		o.shadows[r] = newShadow()
	}
	o.prune(p)
	o.pruneMappings(p)
}

// batchAt returns the batch of r's log that holds offset.
func batchAt(r replica, offset int64) (codec.Batch, bool) {
	data, err := r.Read(offset, 1)
	if err != nil {
		return nil, false
	}
	var found codec.Batch
	eachBatch(data, func(b codec.Batch) {
		if found == nil && b.BaseOffset() <= offset && offset <= b.LastOffset() {
			found = b
		}
	})
	return found, found != nil
}

// checkFailed is FAIL: the partition's leader moved to FAILED.
func (o *oracle) checkFailed(p *partition) {
	if p.c.failed {
		return
	}
	if p.lead().State() == stateFailed {
		p.state = stateFailed
		o.report(CodeFAIL, p, "mirror partition moved to FAILED")
	}
}

// finish settles what the run leaves open: removals no sync settled.
func (o *oracle) finish() {
	o.settleLosses(nil, true, true)
	o.countRegressions()
}
