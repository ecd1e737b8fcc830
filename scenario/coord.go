package scenario

import "math"

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

func (a *pidAllocator) take() int64 {
	if a.next >= a.blockEnd { // claim the next block from the controller
		a.blockEnd = a.next + pidBlockSize
	}
	p := a.next
	a.next++
	return p
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
