package scenario

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Sentinel errors of Parse, classified with errors.Is; the *Error that wraps
// them says where.
var (
	ErrSyntax    = errors.New("scenario: syntax error")
	ErrReference = errors.New("scenario: reference error")
	// ErrLimit reports a file over a size cap: MaxFileBytes, MaxBatchBytes
	// or MaxRunBytes.
	ErrLimit = errors.New("scenario: over a limit")
)

// Error is a parse error at a line of a file; it prints as `file:line: message`.
type Error struct {
	File string
	Line int
	Msg  string
	Err  error // ErrSyntax, ErrReference or ErrLimit
}

func (e *Error) Error() string { return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// MaxLineBytes bounds one line; longer lines are a syntax error, so that hostile
// input cannot make the parser hold more than the input.
const MaxLineBytes = 4096

// MaxFileBytes bounds a scenario file: reading stops with an error at the
// line that passes it, so that a huge file, a sparse one or a device
// (/dev/zero) costs no more than this much reading and memory. The catalog's
// largest file is under 3 KiB.
const MaxFileBytes = 1 << 20

// ParseFile opens the scenario file at path and parses it as ParseReader
// does. The file is streamed line by line: memory is one line's buffer
// (MaxLineBytes) and the Script, whatever the file's size.
func ParseFile(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseReader(path, f)
}

// Parse parses the scenario file src as ParseReader does; the Script does
// not alias src.
func Parse(file string, src []byte) (*Script, error) {
	return ParseReader(file, bytes.NewReader(src))
}

// ParseReader reads a scenario file from r, line by line. It checks the
// syntax of every line and every reference (declared before use, partitions
// in range, no name declared twice) and the limits (MaxLineBytes,
// MaxFileBytes, the bounded keys, MaxBatchBytes, MaxRunBytes), and returns
// the first error as an *Error naming the file and line, or r's read error.
// Cost O(bytes read), at most MaxFileBytes; memory one line and the Script.
// Safe for concurrent use on distinct readers.
func ParseReader(file string, r io.Reader) (*Script, error) {
	p := parser{file: file, s: &Script{File: file}, refs: newRefs()}
	br := bufio.NewReaderSize(r, MaxLineBytes+1) // a longest line and its newline
	line, step, read := 0, 0, 0
	for {
		raw, err := br.ReadSlice('\n')
		if len(raw) == 0 && err == io.EOF {
			return p.s, nil
		}
		line++
		read += len(raw)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, p.errf(line, ErrSyntax, "line longer than %d bytes", MaxLineBytes)
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		case read > MaxFileBytes:
			return nil, p.errf(line, ErrLimit, "file longer than %d bytes", MaxFileBytes)
		}
		text := strings.TrimSuffix(string(raw), "\n")
		if len(text) > MaxLineBytes {
			return nil, p.errf(line, ErrSyntax, "line longer than %d bytes", MaxLineBytes)
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		if words := strings.Fields(text); len(words) > 0 {
			step++
			c, err := p.command(line, words)
			if err != nil {
				return nil, err
			}
			c.Step = step
			if err := p.resolve(&c); err != nil {
				return nil, err
			}
			if err := p.bound(&c); err != nil {
				return nil, err
			}
			p.s.commands = append(p.s.commands, c)
		}
		if err == io.EOF {
			return p.s, nil
		}
	}
}

type parser struct {
	file string
	s    *Script
	refs *refs
	// name is the longest producer name declared; run the bytes of the
	// batches of the send lines so far (sendBytes); replicas the replicas
	// of the clusters declared so far.
	name, run, replicas int64
}

// bound checks c against the byte caps MaxBatchBytes and MaxRunBytes. A
// batch is held at most once by each replica of each cluster (its own
// cluster's and those of the clusters mirroring it), so a run holds at most
// the bytes of all sends times all replicas; the check runs at every send
// and every cluster line, whichever comes first in the file.
func (p *parser) bound(c *command) error {
	switch c.opcode {
	case opProducer, opZombie:
		p.name = max(p.name, int64(len(c.Args[0])))
		return nil
	case opCluster:
		p.replicas += int64(argInt(c, "replicas", 1))
	case opSend:
		records, bytes := int64(argInt(c, "records", 1)), int64(argInt(c, "bytes", defaultSendBytes))
		n := sendBytes(records, bytes, p.name)
		if n > MaxBatchBytes {
			return p.errf(c.Line, ErrLimit, "send: a batch of records=%d bytes=%d is up to %d bytes, above the limit %d (Kafka's message.max.bytes)",
				records, bytes, n, MaxBatchBytes)
		}
		p.run += n
	default:
		return nil
	}
	if held := p.run * p.replicas; held > MaxRunBytes {
		return p.errf(c.Line, ErrLimit, "%s: the batches sent, up to %d bytes, held by %d replicas are up to %d bytes, above the limit %d of a run",
			c.opcode, p.run, p.replicas, held, MaxRunBytes)
	}
	return nil
}

func (p *parser) errf(line int, kind error, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// command checks one line against the grammar.
func (p *parser) command(line int, words []string) (command, error) {
	c := command{Line: line}
	for o := opcode(1); o < opCount; o++ {
		if opNames[o] == words[0] {
			c.opcode = o
		}
	}
	if c.opcode == 0 {
		return c, p.errf(line, ErrSyntax, "unknown command %q", words[0])
	}
	g := &grammar[c.opcode]
	rest := words[1:]
	for _, w := range g.words {
		optional := strings.HasPrefix(w, "?")
		w = strings.TrimPrefix(w, "?")
		if len(rest) == 0 || strings.Contains(rest[0], "=") {
			if optional {
				break
			}
			return c, p.errf(line, ErrSyntax, "%s: missing %s", c.opcode, strings.ToLower(w))
		}
		if w == strings.ToLower(w) { // literal keyword
			if rest[0] != w {
				return c, p.errf(line, ErrSyntax, "%s: want %q, got %q", c.opcode, w, rest[0])
			}
			rest = rest[1:]
			continue
		}
		if err := checkWord(w, rest[0]); err != nil {
			return c, p.errf(line, ErrSyntax, "%s: %v", c.opcode, err)
		}
		c.Args = append(c.Args, rest[0])
		rest = rest[1:]
	}
	for _, w := range rest {
		k, v, isKV := strings.Cut(w, "=")
		if !isKV {
			if !contains(g.flags, w) {
				return c, p.errf(line, ErrSyntax, "%s: unexpected word %q", c.opcode, w)
			}
			if c.Has(w) {
				return c, p.errf(line, ErrSyntax, "%s: %q given twice", c.opcode, w)
			}
			c.Flags = append(c.Flags, w)
			continue
		}
		if _, dup := c.Get(k); dup {
			return c, p.errf(line, ErrSyntax, "%s: %s given twice", c.opcode, k)
		}
		if c.opcode == opSet {
			if err := checkOption(k, v); err != nil {
				return c, p.errf(line, ErrSyntax, "set: %v", strings.TrimPrefix(err.Error(), ErrOption.Error()+": "))
			}
		} else {
			kind, ok := g.keys[k]
			if !ok {
				return c, p.errf(line, ErrSyntax, "%s: unknown argument %q", c.opcode, k)
			}
			if err := checkValue(kind, v); err != nil {
				return c, p.errf(line, ErrSyntax, "%s: %s=%q: %v", c.opcode, k, v, err)
			}
			if max, ok := limits[k]; ok {
				if n, _ := strconv.ParseInt(v, 10, 64); n > max {
					return c, p.errf(line, ErrSyntax, "%s: %s=%s above the limit %d", c.opcode, k, v, max)
				}
			}
		}
		c.keyValue = append(c.keyValue, keyValue{k, v})
	}
	for _, k := range g.required {
		if _, ok := c.Get(k); !ok {
			return c, p.errf(line, ErrSyntax, "%s: missing %s=", c.opcode, k)
		}
	}
	switch c.opcode {
	case opSet:
		if len(c.keyValue) == 0 {
			return c, p.errf(line, ErrSyntax, "set: want KEY=VALUE")
		}
	case opExpect:
		_, modes := c.Get("modes")
		if modes == c.Has("ok") {
			return c, p.errf(line, ErrSyntax, "expect: want exactly one of ok and modes=")
		}
	case opProducer:
		if _, txn := c.Get("transactional"); txn && c.Has("idempotent") {
			return c, p.errf(line, ErrSyntax, "producer: idempotent and transactional= exclude each other")
		}
		if acks, _ := c.Get("acks"); acks == "1" && !c.Has("old-format") {
			// ProducerConfig: enabling idempotence requires acks=all.
			for _, k := range []string{"idempotent", "transactional", "pid", "epoch"} {
				if _, kv := c.Get(k); kv || c.Has(k) {
					return c, p.errf(line, ErrSyntax, "producer: acks=1 excludes %s (idempotence requires acks=all)", k)
				}
			}
		}
		if c.Has("old-format") {
			for _, k := range []string{"idempotent", "transactional", "pid", "epoch"} {
				if _, kv := c.Get(k); kv || c.Has(k) {
					return c, p.errf(line, ErrSyntax, "producer: old-format excludes %s", k)
				}
			}
		}
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '.' || b == '-') {
			return false
		}
	}
	return true
}

// splitPartition splits TOPIC/N.
func splitPartition(s string) (topic string, n int, err error) {
	t, num, ok := strings.Cut(s, "/")
	if !ok || !validName(t) {
		return "", 0, fmt.Errorf("want TOPIC/N, got %q", s)
	}
	n, err = strconv.Atoi(num)
	if err != nil || n < 0 || num != strconv.Itoa(n) {
		return "", 0, fmt.Errorf("bad partition number in %q", s)
	}
	return t, n, nil
}

func checkWord(kind, w string) error {
	switch kind {
	case wPartition:
		_, _, err := splitPartition(w)
		return err
	case wMember:
		if w == "-" {
			return nil
		}
	}
	if !validName(w) {
		return fmt.Errorf("bad %s %q", strings.ToLower(kind), w)
	}
	return nil
}

func checkValue(kind valueKind, v string) error {
	switch kind {
	case vCount, vNat:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return errors.New("want a number from 0 to 2^31-1")
		}
		if kind == vCount && n < 1 {
			return errors.New("want a number from 1")
		}
	case vInt64:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return errors.New("want an int64")
		}
	case vInt32:
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return errors.New("want an int32")
		}
	case vInt16:
		if _, err := strconv.ParseInt(v, 10, 16); err != nil {
			return errors.New("want an int16")
		}
	case vName, vTopic:
		if !validName(v) {
			return errors.New("want a name")
		}
	case vUUID:
		if _, err := parseClusterID(v); err != nil {
			return err
		}
	case vAcks:
		if v != "1" && v != "all" {
			return errors.New("want 1|all")
		}
	case vAlign:
		if v != "divergence" && v != "scratch" && v != "fan-in" {
			return errors.New("want divergence|scratch|fan-in")
		}
	case vAt:
		if !contains(stopSteps, v) {
			return errors.New("want " + strings.Join(stopSteps, "|"))
		}
	case vVariant:
		if !contains(stopVariants, v) {
			return errors.New("want " + strings.Join(stopVariants, "|"))
		}
	case vStrategy:
		if !validStrategy(v) {
			return errors.New("want one of " + strings.Join(strategyNames, ", "))
		}
	case vCodes:
		for _, c := range strings.Split(v, ",") {
			if !validCode(c) {
				return fmt.Errorf("unknown code %q (want %s)", c, codeNames(Codes, ","))
			}
		}
	}
	return nil
}

// parseClusterID accepts RFC 4122 text (36 characters) and Kafka's URL-safe
// base64 without padding (22 characters), the spelling of Kafka's cluster.id;
// both name the same 16 bytes.
func parseClusterID(s string) ([16]byte, error) {
	var id [16]byte
	switch len(s) {
	case 36:
		u, err := uuid.Parse(s)
		if err != nil {
			return id, errors.New("bad UUID")
		}
		return u, nil
	case 22:
		n, err := base64.RawURLEncoding.Decode(id[:], []byte(s))
		if err != nil || n != 16 {
			return id, errors.New("bad base64 cluster id")
		}
		return id, nil
	}
	return id, errors.New("want a UUID (36 characters) or a Kafka cluster id (22 characters of base64)")
}

// clusterNamespace derives default cluster ids: id(NAME) =
// uuid.NewSHA1(clusterNamespace, "mirrorpath/cluster/"+NAME), a version 5 UUID.
var clusterNamespace = uuid.NameSpaceURL

// DefaultClusterID is the id of a cluster declared without id=: the version 5
// UUID of "mirrorpath/cluster/NAME" in the URL namespace. Stable across runs.
func DefaultClusterID(name string) [16]byte {
	return uuid.NewSHA1(clusterNamespace, []byte("mirrorpath/cluster/"+name))
}

// refs holds what has been declared so far, for reference checks.
type refs struct {
	clusters  map[string]bool
	replicas  map[string]int  // per cluster
	topics    map[string]int  // partitions
	compacted map[string]bool // topics declared compacted
	producers map[string]bool // transactional
	groups    map[string]bool
}

func newRefs() *refs {
	return &refs{clusters: map[string]bool{}, replicas: map[string]int{}, topics: map[string]int{},
		compacted: map[string]bool{}, producers: map[string]bool{},
		groups: map[string]bool{}}
}

// resolve checks c's references against earlier declarations and declares
// what c declares.
func (p *parser) resolve(c *command) error {
	r := p.refs
	g := &grammar[c.opcode]
	ref := func(kind, w string) error {
		switch kind {
		case wCluster:
			if !r.clusters[w] {
				return p.errf(c.Line, ErrReference, "%s: unknown cluster %q", c.opcode, w)
			}
		case wProducer:
			if _, ok := r.producers[w]; !ok {
				return p.errf(c.Line, ErrReference, "%s: unknown producer %q", c.opcode, w)
			}
		case wGroup:
			if !r.groups[w] {
				return p.errf(c.Line, ErrReference, "%s: unknown group %q", c.opcode, w)
			}
		case wTopic:
			if _, ok := r.topics[w]; !ok {
				return p.errf(c.Line, ErrReference, "%s: unknown topic %q", c.opcode, w)
			}
		case wPartition:
			t, n, _ := splitPartition(w)
			parts, ok := r.topics[t]
			if !ok {
				return p.errf(c.Line, ErrReference, "%s: unknown topic %q", c.opcode, t)
			}
			if n >= parts {
				return p.errf(c.Line, ErrReference, "%s: topic %q has %d partitions, no %d", c.opcode, t, parts, n)
			}
		}
		return nil
	}
	i := 0
	for _, w := range g.words {
		w = strings.TrimPrefix(w, "?")
		if w == strings.ToLower(w) {
			continue
		}
		if i >= len(c.Args) {
			break
		}
		if err := ref(w, c.Args[i]); err != nil {
			return err
		}
		i++
	}
	for _, kv := range c.keyValue {
		if c.opcode != opSet && g.keys[kv.Key] == vTopic {
			if err := ref(wTopic, kv.Value); err != nil {
				return err
			}
		}
	}
	name := ""
	if len(c.Args) > 0 {
		name = c.Args[0]
	}
	if v, ok := c.Get("replica"); ok {
		if n, _ := strconv.Atoi(v); n >= r.replicas[name] {
			return p.errf(c.Line, ErrReference, "%s: cluster %q has %d replicas, no replica %s", c.opcode, name,
				r.replicas[name], v)
		}
	}
	txnOf := func(prod string) error {
		if !r.producers[prod] {
			return p.errf(c.Line, ErrReference, "%s: producer %q is not transactional", c.opcode, prod)
		}
		return nil
	}
	switch c.opcode {
	case opCluster:
		if r.clusters[name] {
			return p.errf(c.Line, ErrReference, "cluster %q declared twice", name)
		}
		r.clusters[name] = true
		r.replicas[name] = 1
		if v, ok := c.Get("replicas"); ok {
			r.replicas[name], _ = strconv.Atoi(v)
		}
	case opTopic:
		if _, dup := r.topics[name]; dup {
			return p.errf(c.Line, ErrReference, "topic %q declared twice", name)
		}
		n := 1
		if v, ok := c.Get("partitions"); ok {
			n, _ = strconv.Atoi(v)
		}
		r.topics[name] = n
		r.compacted[name] = c.Has("compacted")
	case opClean:
		if t, _, _ := splitPartition(c.Args[1]); !r.compacted[t] {
			return p.errf(c.Line, ErrReference, "clean: topic %q is not compacted", t)
		}
	case opMirror:
		if c.Args[0] == c.Args[1] {
			return p.errf(c.Line, ErrReference, "mirror: cluster %q cannot mirror itself", name)
		}
	case opProducer, opZombie:
		if _, dup := r.producers[name]; dup {
			return p.errf(c.Line, ErrReference, "producer %q declared twice", name)
		}
		if c.opcode == opZombie {
			r.producers[name] = r.producers[c.Args[1]]
		} else {
			_, txn := c.Get("transactional")
			r.producers[name] = txn
		}
	case opGroup:
		if r.groups[name] {
			return p.errf(c.Line, ErrReference, "group %q declared twice", name)
		}
		r.groups[name] = true
	case opBegin, opCommit, opAbort, opOffsets, opAdd:
		return txnOf(name)
	}
	return nil
}
