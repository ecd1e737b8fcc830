package pid

import (
	"math/rand/v2"

	"github.com/mirrorpath/mirrorpath/codec"
	"github.com/mirrorpath/mirrorpath/internal/invariants"
)

// MaxSaltDraws bounds the salts a Mapper draws for one collision before it
// gives up with ErrNoFreeRegion. With 2^32 regions and a handful in use, the
// first draw succeeds unless the random source is broken.
const MaxSaltDraws = 1024

// Config configures a Mapper: one destination partition's mapping.
type Config struct {
	Strategy Strategy
	Policy   Policy // bitfield: PIDs >= 2^31
	Fold     Fold   // bitfield: cluster ID → region
	// Rand draws salts (the low 32 bits of each Uint64). Inject a seeded
	// source (rand.NewPCG) for deterministic tests; nil uses math/rand/v2's
	// runtime-seeded generator.
	Rand rand.Source
	// Registry holds the salts and their log. nil turns salt records off: a
	// collision is counted (Stats.Unresolved) and the colliding PID returned,
	// so the two origins are conflated, except for the -1 slot, which gives
	// ErrReserved.
	Registry *Registry
	// TopicID and Partition name the destination partition in salt records.
	TopicID   [16]byte
	Partition int32
}

// Stats counts a Mapper's collision work.
type Stats struct {
	Origins    int    // entries in the origins table
	Clusters   int    // source clusters seen
	Collisions uint64 // mappings that found their slot held (or -1)
	Salted     uint64 // collisions resolved with a new salt
	Unresolved uint64 // collisions left in place (salts off, or a negative PID that cannot move)
}

// Mapper maps the producer IDs of mirrored batches for one destination
// partition. Under bitfield it keeps the partition's origins table (mapped PID
// → source cluster and PID, not persisted) and resolves collisions with salts
// kept in a Registry; under the other strategies it is the pure function.
//
// Not safe for concurrent use: it belongs to the partition's append path,
// which Kafka serializes per partition. It reads the Registry's salts without
// a lock, so other partitions' Mappers may add salts at the same time.
type Mapper struct {
	strategy Strategy
	policy   Policy
	fold     Fold
	rnd      rand.Source
	reg      *Registry
	salts    *partSalts // &noSalts when reg is nil
	topic    [16]byte
	part     int32

	// The cluster of the previous call, copied out of clusters for the fast
	// path: index, ID, unsalted region; lastOK is false until the first call.
	last       int
	lastOK     bool
	lastID     [16]byte
	lastRegion uint32
	snap       *saltSet // the salt snapshot snapSalted was computed from
	snapSalted bool     // lastID has salts in snap
	fast       bool     // bitfield, lastOK and !snapSalted: mapPID may take its fast path

	clusters []clusterEntry
	origins  originTable
	regions  map[uint32]struct{} // regions holding at least one origin
	stats    Stats
}

type clusterEntry struct {
	id     [16]byte
	region uint32 // fold of id, unsalted
	marked bool   // region is in Mapper.regions
}

// noSalts is the salts of every Mapper without a Registry: never published,
// so its snapshot stays nil. Shared and read-only.
var noSalts partSalts

type runtimeSource struct{}

func (runtimeSource) Uint64() uint64 { return rand.Uint64() }

// NewMapper returns the Mapper of one destination partition. Allocates its
// tables; cheap enough to build one per leader epoch.
func NewMapper(cfg Config) *Mapper {
	m := &Mapper{
		strategy: cfg.Strategy,
		policy:   cfg.Policy,
		fold:     cfg.Fold,
		rnd:      cfg.Rand,
		reg:      cfg.Registry,
		topic:    cfg.TopicID,
		part:     cfg.Partition,
	}
	if m.rnd == nil {
		m.rnd = runtimeSource{}
	}
	m.salts = &noSalts
	if m.reg != nil {
		m.salts = m.reg.partition(cfg.TopicID, cfg.Partition)
	}
	m.Reset()
	return m
}

// Reset forgets the origins table and the clusters seen, as a new leader that
// knows only the Registry's salts does. Collisions with mappings made before
// Reset go undetected: the origins table is not persisted (docs/strategies.md).
func (m *Mapper) Reset() {
	m.last, m.lastOK, m.snap, m.snapSalted, m.fast = 0, false, nil, false, false
	m.clusters = m.clusters[:0]
	m.origins.init(64)
	m.regions = make(map[uint32]struct{})
	m.stats = Stats{}
}

// Strategy returns the strategy m applies.
func (m *Mapper) Strategy() Strategy { return m.strategy }

// Map returns the producer ID that a batch of source cluster cluster carrying
// PID p gets in this partition. -1 maps to -1 under every strategy.
//
// Cost: verbatim, barrier, negate, negate-skip are pure arithmetic (~2 ns
// CPU per call, see results/pid.md). Bitfield, for a PID seen before from the
// previous call's cluster when that cluster has no salt, is the cached
// region, one atomic load of the partition's salt snapshot pointer, the
// arithmetic and one probe of the pointer-free origins table (~4 ns); a
// cluster that has salts adds a probe of the immutable salt snapshot (~13
// ns); a cluster other than the previous call's adds a scan of the clusters
// seen. No lock and no allocation on these paths. A PID seen for the first
// time inserts into the origins table (amortized growth); a collision draws a
// salt and appends a record to the Registry's log under its mutex.
//
// Errors, returned bare: ErrUnmappable (bitfield, policy reject, p >= 2^31),
// ErrReserved (salts off and the -1 slot), ErrNoFreeRegion, and errors
// matching ErrLogWrite when the salt record could not be written. On error
// the first result is p and nothing is recorded.
func (m *Mapper) Map(cluster [16]byte, p int64) (int64, error) {
	if invariants.Enabled {
		return m.mapChecked(cluster, p)
	}
	return m.mapPID(cluster, p)
}

func (m *Mapper) mapPID(cluster [16]byte, p int64) (int64, error) {
	// Fast path (m.fast implies bitfield): the previous call's cluster, which
	// had no salt in the partition's snapshot, unchanged since; a PID in
	// [0, 2^31); and its slot already held by this very origin.
	if m.fast && uint64(p) <= LowMask && cluster == m.lastID && m.salts.snap.Load() == m.snap {
		mapped := Compose(m.lastRegion, p)
		if i, found := m.origins.find(mapped); found && m.origins.slots[i].origin == (origin{pid: p, cluster: uint32(m.last)}) {
			return mapped, nil
		}
	}
	switch m.strategy {
	case Negate:
		return MapNegate(p), nil
	case NegateSkip:
		return MapNegateSkip(p), nil
	case Bitfield:
	default:
		return p, nil
	}
	return m.mapBitfield(cluster, p)
}

// lastSalted reports whether the previous call's cluster has any salt in the
// partition's current snapshot. One atomic load; the cluster scan runs only
// when the snapshot or the cluster changed.
func (m *Mapper) lastSalted() bool {
	snap := m.salts.snap.Load()
	if snap == nil {
		return false
	}
	if snap != m.snap {
		m.snap, m.snapSalted = snap, snap.hasCluster(m.lastID)
		m.fast = m.strategy == Bitfield && !m.snapSalted
	}
	return m.snapSalted
}

func (m *Mapper) mapBitfield(cluster [16]byte, p int64) (int64, error) {
	if p == minusOne {
		return p, nil
	}
	ci := m.last
	if !m.lastOK || m.lastID != cluster {
		ci = m.clusterIndex(cluster)
	}
	mapped := p
	if p >= 0 {
		low := p
		if p > LowMask {
			if m.policy != Alias {
				return p, ErrUnmappable
			}
			low &= LowMask
		}
		region := m.clusters[ci].region
		if m.lastSalted() { // also re-arms the fast path after a snapshot change
			if salt, ok := m.snap.probe(cluster, p); ok {
				region ^= salt
			}
		}
		mapped = Compose(region, low)
		if mapped == minusOne {
			return m.collide(ci, p, -1)
		}
	}
	i, found := m.origins.find(mapped)
	if !found {
		m.origins.insert(i, mapped, origin{pid: p, cluster: uint32(ci)})
		m.markRegion(ci, mapped)
		return mapped, nil
	}
	o := m.origins.slots[i].origin
	if o.cluster == uint32(ci) && (o.pid == p || o.pid >= 0 && p >= 0) {
		// The same origin, or the same cluster's PIDs p and p+k·2^31 under
		// Alias: the conflation Alias exists to show.
		return mapped, nil
	}
	if p < 0 {
		// A negative PID passes through unchanged (idempotence); it cannot
		// move to another slot.
		m.stats.Collisions++
		m.stats.Unresolved++
		return mapped, nil
	}
	return m.collide(ci, p, int(o.cluster))
}

// mapChecked is Map with the invariants checked after each call
// (invariants.Enabled: -tags invariants or -race): -1 only from -1; under bitfield the result is the layout of
// the cluster's region XOR its recorded salt over the low 31 bits, and the
// origins table holds an origin for it that may share it.
func (m *Mapper) mapChecked(cluster [16]byte, p int64) (int64, error) {
	mapped, err := m.mapPID(cluster, p)
	if err != nil {
		if mapped != p {
			panic("pid: invariant: error result is not p")
		}
		return mapped, err
	}
	if (mapped == minusOne) != (p == minusOne) {
		panic("pid: invariant: -1 produced or lost")
	}
	if m.strategy != Bitfield || p == minusOne {
		return mapped, err
	}
	if p < 0 {
		if mapped != p {
			panic("pid: invariant: negative PID did not pass through")
		}
		return mapped, err
	}
	region, low, ok := Unbitfield(mapped)
	want := m.fold.Region(cluster)
	if salt, found := m.salts.snap.Load().lookup(cluster, p); found {
		want ^= salt
	}
	if !ok || low != p&LowMask || region != want {
		panic("pid: invariant: mapped PID is not region|low of its cluster and salt")
	}
	c, op, held := m.Origin(mapped)
	if !held {
		panic("pid: invariant: mapped PID has no origin")
	}
	if (c != cluster || op != p) && m.reg != nil && !(c == cluster && op >= 0 && m.policy == Alias) {
		panic("pid: invariant: two origins share a mapped PID with salts on")
	}
	return mapped, err
}

// clusterIndex finds or adds cluster. O(clusters seen); runs only when the
// cluster differs from the previous call's.
func (m *Mapper) clusterIndex(cluster [16]byte) int {
	i := 0
	for i < len(m.clusters) && m.clusters[i].id != cluster {
		i++
	}
	if i == len(m.clusters) {
		m.clusters = append(m.clusters, clusterEntry{id: cluster, region: m.fold.Region(cluster)})
	}
	m.last, m.lastOK = i, true
	m.lastID, m.lastRegion = cluster, m.clusters[i].region
	m.snap, m.snapSalted = nil, false
	m.fast = m.strategy == Bitfield
	return i
}

// markRegion notes that an origin of cluster ci now lives in mapped's region.
func (m *Mapper) markRegion(ci int, mapped int64) {
	r := uint32(uint64(mapped) >> LowBits)
	ce := &m.clusters[ci]
	if r == ce.region {
		if ce.marked {
			return
		}
		ce.marked = true
	}
	m.regions[r] = struct{}{}
}

// collide resolves a collision of (cluster ci, p ≥ 0): the slot is held by
// cluster holder (-1: the slot is -1). It draws salts until region XOR salt
// holds no origin in this partition, writes the salt record, and records the
// new origin.
func (m *Mapper) collide(ci int, p int64, holder int) (int64, error) {
	m.stats.Collisions++
	ce := m.clusters[ci]
	low := p & LowMask // p > LowMask only under Alias
	if m.reg == nil {
		mapped := Compose(ce.region, low)
		if mapped == minusOne {
			return p, ErrReserved
		}
		m.stats.Unresolved++
		return mapped, nil
	}
	colliding := ""
	if holder >= 0 {
		colliding = FormatClusterID(m.clusters[holder].id)
	}
	for range MaxSaltDraws {
		salt := uint32(m.rnd.Uint64())
		r := ce.region ^ salt
		if salt == 0 {
			continue
		}
		if _, used := m.regions[r]; used {
			continue
		}
		mapped := Compose(r, low)
		if mapped == minusOne {
			continue
		}
		err := m.reg.add(Salt{
			TopicID:          m.topic,
			Partition:        m.part,
			Cluster:          ce.id,
			PID:              p,
			Salt:             int64(salt),
			CollidingCluster: colliding,
		})
		if err != nil {
			return p, err
		}
		i, _ := m.origins.find(mapped) // free: its region holds no origin
		m.origins.insert(i, mapped, origin{pid: p, cluster: uint32(ci)})
		m.regions[r] = struct{}{}
		m.stats.Salted++
		return mapped, nil
	}
	return p, ErrNoFreeRegion
}

// Origin returns the source cluster and PID recorded for mapped in this
// partition's origins table: the first origin mapped there since the Mapper
// was built or Reset. Only bitfield keeps the table; under the other
// strategies ok is false (negate and negate-skip invert with MapNegate and do
// not encode the cluster). O(1), no allocation.
func (m *Mapper) Origin(mapped int64) (cluster [16]byte, pid int64, ok bool) {
	if mapped == 0 { // the empty-slot marker; no mapping yields 0
		return cluster, 0, false
	}
	i, found := m.origins.find(mapped)
	if !found {
		return cluster, 0, false
	}
	o := m.origins.slots[i].origin
	return m.clusters[o.cluster].id, o.pid, true
}

// Stats returns the collision counters and table sizes.
func (m *Mapper) Stats() Stats {
	s := m.stats
	s.Origins = m.origins.n
	s.Clusters = len(m.clusters)
	return s
}

// RewriteBatch maps b's producer ID for source cluster cluster and, when the
// strategy rewrites and the PID changes, writes it into b with the CRC fixed
// by fix (see Rewrite). It returns the new PID. On error b is unchanged.
// Cost: Map plus Rewrite; no allocation on the paths Map does not allocate.
func (m *Mapper) RewriteBatch(b codec.Batch, cluster [16]byte, fix CRCFix) (int64, error) {
	p := b.ProducerID()
	np, err := m.Map(cluster, p)
	if err != nil {
		return p, err
	}
	if np != p {
		Rewrite(b, np, fix)
	}
	return np, nil
}

// origin is one origins-table value: the source PID and the index of its
// cluster in Mapper.clusters.
type origin struct {
	pid     int64
	cluster uint32
}

// originSlot is a key and its value side by side, so that a hit touches one
// cache line.
type originSlot struct {
	key int64
	origin
}

// originTable is an open-addressing (linear probing) map mapped PID → origin,
// pointer-free so the GC never scans it. Key 0 marks an empty slot: mapped
// values are negative (bitfield sets bit 63, pass-through PIDs are negative)
// and -1 is never stored. Load factor at most 1/2; 24 bytes per slot.
type originTable struct {
	slots []originSlot
	n     int
	shift uint8
}

func (t *originTable) init(size int) {
	shift := uint8(64)
	for s := size; s > 1; s >>= 1 {
		shift--
	}
	t.slots = make([]originSlot, size)
	t.n = 0
	t.shift = shift
}

// find returns the slot of key (non-zero), or the empty slot where it would
// go. Expected O(1); no allocation.
func (t *originTable) find(key int64) (int, bool) {
	mask := len(t.slots) - 1
	i := int(uint64(key) * golden64 >> t.shift)
	for {
		k := t.slots[i&mask].key
		if k == key {
			return i & mask, true
		}
		if k == 0 {
			return i & mask, false
		}
		i++
	}
}

// insert stores key at slot i (from find), growing the table first when it
// would pass half full. Amortized O(1); allocates when it grows.
func (t *originTable) insert(i int, key int64, v origin) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
		i, _ = t.find(key)
	}
	t.slots[i] = originSlot{key, v}
	t.n++
}

func (t *originTable) grow() {
	old := t.slots
	t.init(2 * len(old))
	for _, s := range old {
		if s.key != 0 {
			i, _ := t.find(s.key)
			t.slots[i] = s
			t.n++
		}
	}
}
