package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/pid"
)

// opcode is the command of one scenario line.
type opcode uint8

// The commands of the language (docs/scenarios.md), the original ones first.
const (
	opCluster opcode = iota + 1
	opTopic
	opMirror
	opProducer
	opInit
	opZombie
	opSend
	opBegin
	opCommit
	opAbort
	opGroup
	opJoin
	opLeave
	opRebalance
	opOffsets
	opSync
	opFail
	opRecover
	opFault
	opStop
	opRestart
	opElect
	opSet
	opExpect
	opRepoint
	opPause
	opResume
	opClean
	opAdd
	opCount
)

var opNames = [opCount]string{"", "cluster", "topic", "mirror", "producer", "init", "zombie", "send", "begin",
	"commit", "abort", "group", "join", "leave", "rebalance", "offsets", "sync", "fail", "recover", "fault", "stop",
	"restart", "elect", "set", "expect", "repoint", "pause", "resume", "clean", "add"}

// String returns the command word as written in a file.
func (o opcode) String() string {
	if o > 0 && o < opCount {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// keyValue is one key=value argument.
type keyValue struct {
	Key, Value string
}

// command is one parsed line. Args are the positional words without the
// literal keywords of the syntax ("from", "on", "of"); Flags are the bare words
// allowed after them ("idempotent", "ok"); keyValue keeps the key=value arguments in
// file order. A command owns its slices.
type command struct {
	Line     int // 1-based line in the file
	Step     int // 1-based step number: comments and blank lines are not steps
	opcode   opcode
	Args     []string
	Flags    []string
	keyValue []keyValue
}

// Get returns the value of key and whether it was given.
func (c *command) Get(key string) (string, bool) {
	for _, kv := range c.keyValue {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Has reports whether the bare word flag was given.
func (c *command) Has(flag string) bool {
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
	commands []command
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
	for i := range s.commands {
		c := &s.commands[i]
		if c.opcode != opExpect {
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
	for i := range s.commands {
		c := &s.commands[i]
		if c.opcode == opSet {
			for _, kv := range c.keyValue {
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
	vVariant                       // a STOPPING variant (stopVariants)
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
var stopSteps = namesOf(appendpath.StopSteps())

// stopVariants are appendpath.StopVariant's names: abort and truncate.
var stopVariants = namesOf(appendpath.StopVariants())

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
	opCluster: {words: []string{wName},
		keys: map[string]valueKind{"id": vUUID, "replicas": vCount, "fetch-bytes": vCount, "pid-start": vNat,
			"legacy-replicas": vNat, "barrier-feature": vNat, "segment-bytes": vCount, "retain-segments": vNat}},
	opTopic: {words: []string{wName}, flags: []string{"compacted"}, keys: map[string]valueKind{"partitions": vCount}},
	opMirror: {words: []string{wCluster, "from", wCluster},
		keys: map[string]valueKind{"topic": vTopic, "align": vAlign}},
	opProducer: {words: []string{wName, "on", wCluster}, flags: []string{"idempotent", "old-format"},
		keys: map[string]valueKind{"transactional": vName, "pid": vInt64, "epoch": vInt16, "acks": vAcks}},
	opInit:   {words: []string{wProducer}},
	opZombie: {words: []string{wName, "of", wProducer}},
	opSend: {words: []string{wProducer, wPartition},
		keys: map[string]valueKind{"records": vCount, "seq": vInt32, "epoch": vInt16, "bytes": vNat}},
	opBegin:     {words: []string{wProducer}},
	opCommit:    {words: []string{wProducer}},
	opAbort:     {words: []string{wProducer}},
	opGroup:     {words: []string{wName, "on", wCluster}},
	opJoin:      {words: []string{wGroup, wMember}, keys: map[string]valueKind{"instance": vName}},
	opLeave:     {words: []string{wGroup, wMember}},
	opRebalance: {words: []string{wGroup}},
	opOffsets: {words: []string{wProducer, wGroup, wMember},
		keys: map[string]valueKind{"generation": vInt32, "instance": vName}},
	opSync:    {words: []string{"?" + wCluster}},
	opFail:    {words: []string{wCluster}},
	opRecover: {words: []string{wCluster}},
	opFault: {words: []string{wCluster}, flags: []string{"crash"},
		keys: map[string]valueKind{"at": vAt, "times": vCount}, required: []string{"at"}},
	opStop:    {words: []string{wCluster}, keys: map[string]valueKind{"topic": vTopic, "variant": vVariant}},
	opRestart: {words: []string{wCluster}, flags: []string{"unclean"}},
	opElect: {words: []string{wCluster, wPartition}, flags: []string{"unclean"},
		keys: map[string]valueKind{"replica": vNat}},
	opSet: {},
	opExpect: {flags: []string{"ok"}, keys: map[string]valueKind{"strategy": vStrategy, "modes": vCodes},
		required: []string{"strategy"}},
	opRepoint: {words: []string{wProducer, "to", wCluster}},
	opPause: {words: []string{wCluster, wPartition}, keys: map[string]valueKind{"replica": vNat},
		required: []string{"replica"}},
	opResume: {words: []string{wCluster, wPartition}, keys: map[string]valueKind{"replica": vNat},
		required: []string{"replica"}},
	opClean: {words: []string{wCluster, wPartition}},
	opAdd:   {words: []string{wProducer, wPartition}},
}

// strategyNames are pid's strategies' names in table order
// (docs/strategies.md): the scenario language spells a strategy as pid does.
var strategyNames = namesOf(pid.Strategies())

// defaultFirst returns the names of values with def's first (an option's
// Values[0] is its default), the others in their order.
func defaultFirst[T comparable](def T, values []T) []string {
	names := []string{fmt.Sprint(def)}
	for _, v := range values {
		if v != def {
			names = append(names, fmt.Sprint(v))
		}
	}
	return names
}

// namesOf returns the String of each value: the scenario language spells
// pid's enums (strategy, CRC fix, fold, policy) as pid does.
func namesOf[T fmt.Stringer](values []T) []string {
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = v.String()
	}
	return names
}

func validStrategy(s string) bool {
	for _, n := range strategyNames {
		if n == s {
			return true
		}
	}
	return false
}
