package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Kafka error names the coordinators return (org.apache.kafka.common.protocol.Errors).
const (
	errProducerFenced       = "PRODUCER_FENCED"
	errInvalidProducerEpoch = "INVALID_PRODUCER_EPOCH"
	errInvalidTxnState      = "INVALID_TXN_STATE"
	errIllegalGeneration    = "ILLEGAL_GENERATION"
	errUnknownMemberID      = "UNKNOWN_MEMBER_ID"
	errFencedInstanceID     = "FENCED_INSTANCE_ID"
	errCoordinatorNA        = "COORDINATOR_NOT_AVAILABLE"
	errNetwork              = "NETWORK_EXCEPTION"
	errPIDMapping           = "INVALID_PRODUCER_ID_MAPPING"
	errCoordinatorLoading   = "COORDINATOR_LOAD_IN_PROGRESS"
	errConcurrentTxns       = "CONCURRENT_TRANSACTIONS"
)

// pidBlockSize is the size of the PID blocks a cluster's controller hands to
// its coordinators (ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const pidBlockSize = 1000

// pidAllocator hands out PIDs in order from pid-start, in blocks of 1000
// (one coordinator, so the blocks are consecutive).
type pidAllocator struct {
	next, blockEnd int64
}

func newPIDAllocator(start int64) pidAllocator { return pidAllocator{next: start, blockEnd: start} }

// advance makes next the next PID handed out, when it is above the current
// one (an allocator never goes back); the next take claims a fresh block.
func (a *pidAllocator) advance(next int64) {
	if next > a.next {
		a.next, a.blockEnd = next, next
	}
}

// take hands out the next PID; ok is false, and nothing changes, when the
// next block cannot be claimed: the controller refuses a block that would
// end past MaxInt64 (ProducerIdControlManager#generateNextProducerId), and
// the coordinator answers InitProducerId with COORDINATOR_LOAD_IN_PROGRESS
// (RPCProducerIdManager) for as long as it has no block.
func (a *pidAllocator) take() (pid int64, ok bool) {
	if a.next >= a.blockEnd { // claim the next block from the controller
		if a.next > math.MaxInt64-pidBlockSize {
			return 0, false
		}
		a.blockEnd = a.next + pidBlockSize
	}
	p := a.next
	a.next++
	return p, true
}

// errAllocatorExhausted: the highest PID of a cluster is within the
// allocator margin of MaxInt64, so no advance can clear it; the failover is
// impossible (appendpath.ErrPromotionImpossible).
var errAllocatorExhausted = errors.New("scenario: PID allocator cannot advance past the highest producer ID")

// takePID is the cluster's InitProducerId draw. A pending asynchronous
// allocator advance (allocator-mode=async) lands only after it: the reset
// loses the race with the first local InitProducerId.
func (cl *cluster) takePID() (int64, bool) {
	p, ok := cl.pids.take()
	if !ok {
		return 0, false
	}
	if cl.pendingAdvance >= 0 {
		cl.pids.advance(cl.pendingAdvance)
		cl.pendingAdvance = -1
	}
	return p, true
}

// allocatorPromote is strategy allocator's promotion step for one STOPPING
// attempt on cl: it scans the highest producer ID over every partition of cl
// (the leaders' producer state; STOPPING adds none, its markers use known
// PIDs), and returns the step that moves the PID allocator to it plus
// allocator-margin before the partition becomes writable. The step runs
// under the partition's lock, hence the scan before. A maximum within the
// margin of MaxInt64 is a terminal refusal. Under allocator-mode=async the
// advance is only scheduled (takePID).
func (w *world) allocatorPromote(cl *cluster) func() error {
	high := int64(-1)
	for _, p := range cl.parts {
		for _, e := range p.lead().Producers() {
			high = max(high, e.PID)
		}
	}
	return func() error {
		margin, err := strconv.ParseInt(w.opts.Get("allocator-margin"), 10, 64)
		if err != nil {
			return fmt.Errorf("scenario: allocator-margin: %w", err)
		}
		if high < 0 {
			return nil // no producer ID to clear
		}
		if high > math.MaxInt64-margin {
			return fmt.Errorf("%w: %s: highest producer ID %d is within %d of MaxInt64", errAllocatorExhausted, cl.name, high, margin)
		}
		if w.opts.Get("allocator-mode") == "async" {
			cl.pendingAdvance = max(cl.pendingAdvance, high+margin)
			return nil
		}
		cl.pids.advance(high + margin)
		return nil
	}
}

// txnState is the transaction coordinator's metadata of one transactional.id.
type txnState struct {
	id       string
	pid      int64
	epoch    int16
	open     bool
	parts    []*partition // partitions added to the open transaction, in order
	serial   int          // serial of the current (or last) transaction
	producer string       // name of the client that opened the transaction
	// pending is the end marker the coordinator decided on while a
	// partition of parts refused it: the transaction stays open on those
	// partitions until a retry lands it, or, cancelled, until a reload of
	// the coordinator sends it again (reloadCoordinator).
	pending *pendingEnd
	// prevPID is the PID an EndTxn under TV2 rotated away from, its epoch
	// exhausted (TransactionMetadata's prevProducerId), -1 when none: the
	// retry of that EndTxn comes with it (retryOnOverflow).
	prevPID int64
	// ended is the outcome of the transaction an EndTxn completed last,
	// "commit" or "abort" (TransactionMetadata in CompleteCommit or
	// CompleteAbort); "" once InitProducerId starts the id afresh (Empty).
	ended string
}

// pendingEnd is an end marker the coordinator has decided on (PrepareCommit
// or PrepareAbort in Kafka's TransactionMetadata) and not yet written on
// every partition of the transaction.
type pendingEnd struct {
	pid   int64 // the transaction's PID, kept when InitProducerId rotates it
	epoch int16
	abort bool
	who   string
	// cancelled: a partition refused a marker with INVALID_PRODUCER_EPOCH
	// or TRANSACTION_COORDINATOR_FENCED, and the coordinator sends none of
	// them again until it reloads the transaction (cancelMarkers).
	cancelled bool
}

func (t *txnState) has(p *partition) bool {
	for _, q := range t.parts {
		if q == p {
			return true
		}
	}
	return false
}

// txnCoordinator maps transactional ids to PIDs and epochs on one cluster.
type txnCoordinator struct {
	ids        map[string]*txnState
	order      []*txnState // declaration order, for deterministic scans
	coordEpoch int32       // leader epoch of the __transaction_state partition
}

// epochExhausted is TransactionMetadata.isEpochExhausted.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// group is a classic consumer group on the group coordinator.
type group struct {
	name      string
	c         *cluster
	gen       int32
	members   map[string]int32  // member id → generation it last joined at
	instances map[string]string // group.instance.id → member id
}

// checkTxnOffsetCommit applies the KIP-447 checks of GroupCoordinator
// validateOffsetCommit(isTransactional=true).
// member "" is no member; instance "" is no static instance.
func (g *group) checkTxnOffsetCommit(member, instance string, gen int32) string {
	if gen < 0 && len(g.members) == 0 {
		return "" // Empty group: accepted
	}
	if gen >= 0 || member != "" || instance != "" {
		if instance != "" {
			if owner, ok := g.instances[instance]; ok && owner != member {
				return errFencedInstanceID
			} else if !ok {
				return errUnknownMemberID
			}
		}
		if _, ok := g.members[member]; !ok {
			return errUnknownMemberID
		}
		if gen != g.gen {
			return errIllegalGeneration
		}
	}
	return "" // old-style commit (generation -1, no member): accepted unchecked
}
