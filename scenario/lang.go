package scenario

import (
	"strconv"
	"strings"
)

// Op is the command of one scenario line.
type Op uint8

// The commands of the language (docs/scenarios.md), the original ones first.
const (
	OpCluster Op = iota + 1
	OpTopic
	OpMirror
	OpProducer
	OpInit
	OpZombie
	OpSend
	OpBegin
	OpCommit
	OpAbort
	OpGroup
	OpJoin
	OpLeave
	OpRebalance
	OpOffsets
	OpSync
	OpFail
	OpRecover
	OpFault
	OpStop
	OpRestart
	OpElect
	OpSet
	OpExpect
	OpRepoint
	OpPause
	OpResume
	OpClean
	OpAdd
	opCount
)

var opNames = [opCount]string{"", "cluster", "topic", "mirror", "producer", "init", "zombie", "send", "begin",
	"commit", "abort", "group", "join", "leave", "rebalance", "offsets", "sync", "fail", "recover", "fault", "stop",
	"restart", "elect", "set", "expect", "repoint", "pause", "resume", "clean", "add"}

// String returns the command word as written in a file.
func (o Op) String() string {
	if o > 0 && o < opCount {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// KV is one key=value argument.
type KV struct {
	Key, Value string
}

// Command is one parsed line. Args are the positional words without the
// literal keywords of the syntax ("from", "on", "of"); Flags are the bare words
// allowed after them ("idempotent", "ok"); KV keeps the key=value arguments in
// file order. A Command owns its slices.
type Command struct {
	Line  int // 1-based line in the file
	Step  int // 1-based step number: comments and blank lines are not steps
	Op    Op
	Args  []string
	Flags []string
	KV    []KV
}

// Get returns the value of key and whether it was given.
func (c *Command) Get(key string) (string, bool) {
	for _, kv := range c.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Has reports whether the bare word flag was given.
func (c *Command) Has(flag string) bool {
	for _, f := range c.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// Script is a parsed scenario file: every command in file order. Set and
// expect lines are commands (and steps) too; Settings and Expects read them.
// A Script is immutable once parsed and safe to share between goroutines.
type Script struct {
	File     string
	Commands []Command
}

// Expect is one expect line: under Strategy the set of codes seen is exactly
// Codes (empty for "ok").
type Expect struct {
	Line     int
	Strategy string
	Codes    []Code // sorted, deduplicated
}

// Expects returns the expect lines of s in file order.
func (s *Script) Expects() []Expect {
	var out []Expect
	for i := range s.Commands {
		c := &s.Commands[i]
		if c.Op != OpExpect {
			continue
		}
		st, _ := c.Get("strategy")
		e := Expect{Line: c.Line, Strategy: st}
		if m, ok := c.Get("modes"); ok {
			for _, c := range strings.Split(m, ",") {
				e.Codes = append(e.Codes, Code(c))
			}
			e.Codes = sortedCodes(e.Codes)
		}
		out = append(out, e)
	}
	return out
}

// Settings returns the set lines of s merged in file order (later wins).
func (s *Script) Settings() map[string]string {
	out := map[string]string{}
	for i := range s.Commands {
		c := &s.Commands[i]
		if c.Op == OpSet {
			for _, kv := range c.KV {
				out[kv.Key] = kv.Value
			}
		}
	}
	return out
}

// word kinds of the positional grammar.
const (
	wName      = "NAME"      // a new name being declared
	wCluster   = "CLUSTER"   // a declared cluster
	wTopic     = "TOPIC"     // a declared topic
	wProducer  = "PRODUCER"  // a declared producer or zombie
	wGroup     = "GROUP"     // a declared group
	wMember    = "MEMBER"    // a member id, or "-" for none
	wPartition = "PARTITION" // TOPIC/N of a declared topic
)

// value kinds of key=value arguments.
type valueKind uint8

const (
	vCount    valueKind = iota + 1 // integer ≥ 1
	vNat                           // integer ≥ 0
	vInt64                         // any int64
	vInt32                         // any int32
	vInt16                         // any int16
	vName                          // [A-Za-z0-9_.-]+
	vTopic                         // a declared topic
	vUUID                          // RFC 4122 text or Kafka base64
	vAt                            // a STOPPING step (stopSteps)
	vVariant                       // abort|truncate
	vStrategy                      // a strategy name
	vCodes                         // CODE,CODE...
	vAlign                         // divergence|scratch|fan-in
	vAcks                          // 1|all
)

// stopSteps are the STOPPING steps a fault can hit (appendpath.StopStep), in
// the order STOPPING runs them: remove the fetcher, close open transactions
// (abort: its start; epoch: the leader-epoch bump; marker: each ABORT
// marker), persist the last mirrored offset, append the barrier, advance the
// PID allocator (strategy allocator: the scan or the reset fails).
var stopSteps = []string{"fetcher", "abort", "epoch", "marker", "persist", "barrier", "allocator"}

// Limits keep a hostile file from sizing the simulation beyond reason: each
// bounded key is refused above its limit (Parse reports it as a syntax error).
var limits = map[string]int64{
	"replicas":    9,
	"partitions":  64,
	"records":     10000,
	"bytes":       1 << 16, // value bytes per record
	"fetch-bytes": 64 << 20,

	// log.segment.bytes, and the segments retention keeps
	"segment-bytes":   1 << 30,
	"retain-segments": 1000,
}

// syntax describes one command: words is the positional pattern, where an
// upper-case entry is a word of that kind, a lower-case entry a literal
// keyword, and a leading '?' marks the optional last word. flags are the
// allowed bare words after the positional part; keys the allowed arguments.
type syntax struct {
	words    []string
	flags    []string
	keys     map[string]valueKind
	required []string
}

var grammar = [opCount]syntax{
	OpCluster: {words: []string{wName},
		keys: map[string]valueKind{"id": vUUID, "replicas": vCount, "fetch-bytes": vCount, "pid-start": vNat,
			"legacy-replicas": vNat, "barrier-feature": vNat, "segment-bytes": vCount, "retain-segments": vNat}},
	OpTopic: {words: []string{wName}, flags: []string{"compacted"}, keys: map[string]valueKind{"partitions": vCount}},
	OpMirror: {words: []string{wCluster, "from", wCluster},
		keys: map[string]valueKind{"topic": vTopic, "align": vAlign}},
	OpProducer: {words: []string{wName, "on", wCluster}, flags: []string{"idempotent", "old-format"},
		keys: map[string]valueKind{"transactional": vName, "pid": vInt64, "epoch": vInt16, "acks": vAcks}},
	OpInit:   {words: []string{wProducer}},
	OpZombie: {words: []string{wName, "of", wProducer}},
	OpSend: {words: []string{wProducer, wPartition},
		keys: map[string]valueKind{"records": vCount, "seq": vInt32, "epoch": vInt16, "bytes": vNat}},
	OpBegin:     {words: []string{wProducer}},
	OpCommit:    {words: []string{wProducer}},
	OpAbort:     {words: []string{wProducer}},
	OpGroup:     {words: []string{wName, "on", wCluster}},
	OpJoin:      {words: []string{wGroup, wMember}, keys: map[string]valueKind{"instance": vName}},
	OpLeave:     {words: []string{wGroup, wMember}},
	OpRebalance: {words: []string{wGroup}},
	OpOffsets: {words: []string{wProducer, wGroup, wMember},
		keys: map[string]valueKind{"generation": vInt32, "instance": vName}},
	OpSync:    {words: []string{"?" + wCluster}},
	OpFail:    {words: []string{wCluster}},
	OpRecover: {words: []string{wCluster}},
	OpFault: {words: []string{wCluster}, flags: []string{"crash"},
		keys: map[string]valueKind{"at": vAt, "times": vCount}, required: []string{"at"}},
	OpStop:    {words: []string{wCluster}, keys: map[string]valueKind{"topic": vTopic, "variant": vVariant}},
	OpRestart: {words: []string{wCluster}, flags: []string{"unclean"}},
	OpElect: {words: []string{wCluster, wPartition}, flags: []string{"unclean"},
		keys: map[string]valueKind{"replica": vNat}},
	OpSet: {},
	OpExpect: {flags: []string{"ok"}, keys: map[string]valueKind{"strategy": vStrategy, "modes": vCodes},
		required: []string{"strategy"}},
	OpRepoint: {words: []string{wProducer, "to", wCluster}},
	OpPause: {words: []string{wCluster, wPartition}, keys: map[string]valueKind{"replica": vNat},
		required: []string{"replica"}},
	OpResume: {words: []string{wCluster, wPartition}, keys: map[string]valueKind{"replica": vNat},
		required: []string{"replica"}},
	OpClean: {words: []string{wCluster, wPartition}},
	OpAdd:   {words: []string{wProducer, wPartition}},
}

// StrategyNames are the strategies in table order (docs/strategies.md).
var StrategyNames = []string{"verbatim", "negate", "negate-skip", "bitfield", "barrier", "allocator"}

func validStrategy(s string) bool {
	for _, n := range StrategyNames {
		if n == s {
			return true
		}
	}
	return false
}
