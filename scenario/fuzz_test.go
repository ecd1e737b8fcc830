package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuzzOps bounds the commands a fuzz input can generate.
const maxFuzzOps = 40

// fuzzOptions are the option values a FuzzScenario input selects.
type fuzzOptions struct {
	// The transaction version and the Kafka release's producer-state
	// rules, and the barrier's value: the design covers every choice.
	txnVersion, release, barrierSource string
	// prototype holds the KIP-1279 prototype's STOPPING switches that
	// differ from the design's (docs/strategies.md, "The prototype's
	// STOPPING, switch by switch"), as name → value; empty is the design.
	prototype map[string]string
}

// genOptions decodes the options argument of FuzzScenario. Zero is the
// design's STOPPING under transaction version 1 and Kafka 4.2 rules (what
// every seed found before the options existed ran under). Bits 0-3 choose
// the version, release and barrier value; bit 4 turns on the prototype's
// STOPPING switches, which bits 5-15 then choose, each at its design value
// unless its bits select one of the prototype's.
func genOptions(opt uint16) fuzzOptions {
	o := fuzzOptions{
		txnVersion:    []string{"1", "2"}[opt&1],
		release:       []string{"4.2", "4.0", "3.6", "4.1"}[opt>>1&3],
		barrierSource: []string{"off", "on"}[opt>>3&1],
		prototype:     map[string]string{},
	}
	if opt>>4&1 == 0 {
		return o
	}
	sw := opt >> 5
	bits := func(n uint) int { v := int(sw & (1<<n - 1)); sw >>= n; return v }
	// Each list starts with the design's value.
	for _, s := range []struct {
		name   string
		n      uint
		values []string
	}{
		{"unknown-source", 2, []string{"write", "skip", "retry", "fail"}},
		{"stop-errors", 2, []string{"retry", "failed", "stuck", "retry"}},
		{"hazard-r2", 1, []string{"off", "on"}},
		{"empty-stop", 1, []string{"stop", "hang"}},
		{"recovery-barrier", 1, []string{"apply", "ignore"}},
		{"stop-completion", 1, []string{"each", "first"}},
		{"stop-abort-marker", 2, []string{"versioned", "current-epoch", "prototype", "versioned"}},
		{"failback-position", 1, []string{"direct", "any"}},
	} {
		if v := s.values[bits(s.n)]; v != s.values[0] {
			o.prototype[s.name] = v
		}
	}
	return o
}

// leavesTxnOpen reports whether a prototype switch of o can leave a
// transaction open at STOPPING with nothing left to close it, which pins
// the LSO (M6) as that switch's catalog scenario shows: an ignored ABORT
// failure (hazard-r2, scenarios/40-r2-abort-ignored.scn), an abort step
// failure that leaves the partition stuck
// (scenarios/62-stop-errors-stuck.scn), or an ABORT that Kafka 4.2 refuses
// on every retry (scenarios/55-kafka-19446-prototype-abort.scn,
// 57-tv2-abort-current-epoch.scn).
func (o fuzzOptions) leavesTxnOpen() bool {
	refused := o.release == "4.2" && (o.prototype["stop-abort-marker"] == "prototype" ||
		o.prototype["stop-abort-marker"] == "current-epoch" && o.txnVersion == "2")
	return o.prototype["hazard-r2"] == "on" || o.prototype["stop-errors"] == "stuck" || refused
}

// stopMayNotComplete reports whether a prototype switch of o can leave a
// stop of the generator's incomplete for good, which the generator cannot
// foresee from its commands: the partition stays STOPPING (unknown-source
// retry, stop-errors=stuck after a fault, empty-stop=hang, an ABORT that
// Kafka 4.2 refuses on every retry) or FAILED (unknown-source=fail, every
// retry fails again). A failback onto it is then a file error
// (ErrScenario: a STOPPING or FAILED partition cannot mirror), and one from
// it closes a mirror loop: not what the failback the generator means.
func (o fuzzOptions) stopMayNotComplete() bool {
	us := o.prototype["unknown-source"]
	refused := o.release == "4.2" && o.prototype["hazard-r2"] != "on" &&
		(o.prototype["stop-abort-marker"] == "prototype" ||
			o.prototype["stop-abort-marker"] == "current-epoch" && o.txnVersion == "2")
	return us == "retry" || us == "fail" || o.prototype["stop-errors"] == "stuck" ||
		o.prototype["empty-stop"] == "hang" || refused
}

// voidsBarrier reports whether a prototype switch of o breaks what the
// barrier strategy claims (no M1-M4): STOPPED without a barrier
// (unknown-source=skip, hazard R1, scenarios/39-r1-no-source-id.scn), a
// recovery replay that brings back the entries a barrier cleared
// (scenarios/69-crash-after-stopped.scn), or a second barrier after local
// producers wrote (scenarios/65-multi-partition-stop.scn).
func (o fuzzOptions) voidsBarrier() bool {
	return o.prototype["unknown-source"] == "skip" || o.prototype["recovery-barrier"] == "ignore" ||
		o.prototype["stop-completion"] == "first"
}

// line is the set line of o: every STOPPING option at the design's value
// unless o.prototype names another, since the options' defaults are the
// prototype's.
func (o fuzzOptions) line() string {
	design := [][2]string{
		{"unknown-source", "write"}, {"stop-errors", "retry"}, {"hazard-r2", "off"}, {"empty-stop", "stop"},
		{"recovery-barrier", "apply"}, {"stop-completion", "each"}, {"stop-abort-marker", "versioned"},
		{"failback-position", "direct"},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "txn-version=%s kafka-release=%s barrier-source=%s", o.txnVersion, o.release, o.barrierSource)
	for _, d := range design {
		v := d[1]
		if p, ok := o.prototype[d[0]]; ok {
			v = p
		}
		fmt.Fprintf(&b, " %s=%s", d[0], v)
	}
	return b.String()
}

// genState is what the generator remembers of its own commands, so that it
// only writes sequences inside what the barrier design claims to cover: no
// client keeps a source PID across a failover (every PID comes from its
// cluster's allocator, no pid=/epoch=/seq= forcing), no unclean election
// (every elect follows a sync of a live cluster), zombies are fenced at
// once, and a mirror starts only on an empty partition or as a failback.
type genState struct {
	b        []byte
	clusters []string
	failed   map[string]bool
	role     map[string]string // "src", "mirroring:X", "stopped:X"
	txnOpen  map[string]bool
	txnProds []string
	prods    []string
	zombies  []string
	nextName int
	parts    int
	out      strings.Builder
}

func (g *genState) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *genState) pick(n int) int { return int(g.byte()) % n }

func (g *genState) line(format string, args ...any) {
	fmt.Fprintf(&g.out, format, args...)
	g.out.WriteByte('\n')
}

func (g *genState) writable(c string) bool {
	return !g.failed[c] && (g.role[c] == "src" || strings.HasPrefix(g.role[c], "stopped:"))
}

// genScenario turns fuzz bytes into a valid scenario. Topology 0 is A⇒B with
// failback back and forth; topology 1 is the chain A⇒B⇒C without failback,
// without STOPPING's truncate variant on B while C mirrors it and without an
// unclean restart of a cluster another one mirrors (each truncates the
// middle of a chain, bumping no epoch that C could see, which no design
// covers: scenarios/48-upstream-truncation.scn).
func genScenario(data []byte, opt uint16) []byte {
	g := &genState{b: data, failed: map[string]bool{}, role: map[string]string{}, txnOpen: map[string]bool{}}
	fo := genOptions(opt)
	g.line("set %s", fo.line())
	chain := g.pick(2) == 1
	g.clusters = []string{"A", "B"}
	if chain {
		g.clusters = append(g.clusters, "C")
	}
	fetch := []int{90, 250, 1 << 20}
	replicas := map[string]int{}
	for _, c := range g.clusters {
		replicas[c] = 1 + g.pick(3)
		// The fetch-bytes byte's high bits choose a segment per append on
		// one cluster in four (every append rolls and snapshots). No
		// retain-segments: a fetcher below its source's log start cannot
		// run (docs/scenarios.md, cluster).
		fb := g.byte()
		seg := ""
		if fb/3%4 == 3 {
			seg = " segment-bytes=1"
		}
		g.line("cluster %s replicas=%d fetch-bytes=%d%s", c, replicas[c], fetch[int(fb)%3], seg)
	}
	g.parts = 1 + g.pick(2)
	g.line("topic t partitions=%d", g.parts)
	g.role["A"] = "src"
	g.line("mirror B from A")
	g.role["B"] = "mirroring:A"
	if chain {
		g.line("mirror C from B")
		g.role["C"] = "mirroring:B"
	}
	for _, c := range g.clusters {
		g.prods = append(g.prods, "i"+c)
		g.line("producer i%s on %s", c, c)
		g.txnProds = append(g.txnProds, "t"+c)
		g.line("producer t%s on %s transactional=tx-%s", c, c, c)
		g.prods = append(g.prods, "o"+c)
		g.line("producer o%s on %s old-format", c, c)
	}
	cluster := func() string { return g.clusters[g.pick(len(g.clusters))] }
	clusterOf := func(p string) string { return p[len(p)-1:] } // producers are named …X
	for ops := 0; ops < maxFuzzOps && len(g.b) > 0; ops++ {
		ob := g.byte()
		switch ob % 16 {
		case 0, 1, 2: // send
			all := append(append([]string{}, g.prods...), g.txnProds...)
			all = append(all, g.zombies...)
			p := all[g.pick(len(all))]
			if g.writable(clusterOf(p)) {
				g.line("send %s t/%d records=%d bytes=8", p, g.pick(g.parts), 1+g.pick(4))
			}
		case 3: // begin / commit / abort
			p := g.txnProds[g.pick(len(g.txnProds))]
			switch {
			case !g.txnOpen[p]:
				g.line("begin %s", p)
				g.txnOpen[p] = true
			case ob/16%4 == 3 && g.writable(clusterOf(p)): // a partition added with no data yet
				g.line("add %s t/%d", p, int(ob/64)%g.parts)
			case g.pick(2) == 0:
				g.line("commit %s", p)
				g.txnOpen[p] = false
			default:
				g.line("abort %s", p)
				g.txnOpen[p] = false
			}
		case 4:
			if c := cluster(); g.pick(2) == 0 {
				g.line("sync %s", c)
			} else {
				g.line("sync")
			}
		case 5: // fail / recover
			c := cluster()
			if g.failed[c] {
				g.line("recover %s", c)
			} else {
				g.line("fail %s", c)
			}
			g.failed[c] = !g.failed[c]
		case 6, 7: // stop a mirror, sometimes with a fault first and a retry after
			c := cluster()
			src, ok := strings.CutPrefix(g.role[c], "mirroring:")
			if !ok || g.failed[c] {
				continue
			}
			fault := g.pick(4)
			if fault < 3 {
				g.line("fault %s at=%s", c, []string{"abort", "persist", "barrier"}[fault])
			}
			variant := []string{"abort", "truncate"}[g.pick(2)]
			for _, d := range g.clusters {
				if g.role[d] == "mirroring:"+c {
					variant = "abort" // c is the middle of a chain
				}
			}
			g.line("stop %s variant=%s", c, variant)
			g.line("stop %s", c) // the retry after a fault; a no-op otherwise
			g.role[c] = "stopped:" + src
		case 8: // failback (topology 0 only, and only after stops that complete)
			if chain || fo.stopMayNotComplete() {
				continue
			}
			for _, pair := range [][2]string{{"A", "B"}, {"B", "A"}} {
				dest, src := pair[0], pair[1]
				// Not again while dest mirrors src: a failback can leave dest
				// FAILED (a PID its strategy cannot map), which refuses a
				// second mirror command (ErrScenario), a state the generator
				// cannot foresee.
				if g.role[src] == "stopped:"+dest && g.role[dest] != "mirroring:"+src && !g.failed[dest] && g.pick(2) == 0 {
					g.line("mirror %s from %s", dest, src)
					g.role[dest] = "mirroring:" + src
					break
				}
			}
		case 9: // clean election
			c := cluster()
			if !g.failed[c] {
				g.line("sync")
				g.line("elect %s t/%d", c, g.pick(g.parts))
			}
		case 10: // a clean restart, or a crash (an unclean one)
			c := cluster()
			unclean := g.pick(2) == 1
			for _, d := range g.clusters {
				if g.role[d] == "mirroring:"+c {
					unclean = false // c is the middle of a chain (see genScenario)
				}
			}
			if unclean {
				g.line("restart %s unclean", c)
			} else {
				g.line("restart %s", c)
			}
		case 11: // a new producer
			c := cluster()
			name := fmt.Sprintf("n%d%s", g.nextName, c)
			g.nextName++
			g.line("producer %s on %s", name, c)
			g.prods = append(g.prods, name)
		case 12: // a zombie, fenced at once by its producer's init
			p := g.txnProds[g.pick(len(g.txnProds))]
			if g.failed[clusterOf(p)] {
				// The init cannot reach a failed cluster's coordinator:
				// the zombie would live on and write until a later
				// retry fenced it, aborting its transaction with the
				// producer's marker, which is no zombie fenced at once.
				continue
			}
			name := fmt.Sprintf("z%d%s", g.nextName, clusterOf(p))
			g.nextName++
			g.line("zombie %s of %s", name, p)
			g.line("init %s", p)
			g.txnOpen[p] = false
			g.zombies = append(g.zombies, name)
		case 13:
			g.line("init %s", g.prods[g.pick(len(g.prods))])
		case 14: // hold one follower back, or let it go
			c := cluster()
			verb := []string{"pause", "resume"}[g.pick(2)]
			g.line("%s %s t/%d replica=%d", verb, c, g.pick(g.parts), g.pick(replicas[c]))
		case 15: // a clean election of a chosen replica
			if c := cluster(); !g.failed[c] {
				g.line("elect %s t/%d replica=%d", c, g.pick(g.parts), g.pick(replicas[c]))
			}
		}
	}
	g.line("sync")
	return []byte(g.out.String())
}

// FuzzScenario runs generated scenarios under the strategy and the options
// the input picks (genOptions): no panic, the same input gives the same
// verdict, replicas agree after sync and no LSO is left pinned (no I2, M6, I4
// under any strategy; M6 only where no prototype switch leaves a transaction
// open and the oracle does not tie it to an acknowledged end marker a
// truncation removed, I2 and I4 only where recovery applies the barrier),
// and under barrier (exact barrier application) no M1-M4 within what the
// design claims to cover, unless a prototype switch that breaks the barrier
// is on (fuzzFindings). The strategy is an input rather than a loop over all of
// them so that one execution costs one simulation and coverage guidance sees
// each strategy's code on its own; every seed is added under every strategy.
func FuzzScenario(f *testing.F) {
	seeds := [][]byte{
		{0, 0, 0, 0, 0, 1, 1, 1, 5, 6, 0, 1, 11, 0, 1, 1, 4},
		{1, 2, 1, 0, 1, 2, 0, 0, 0, 2, 1, 3, 7, 1, 3, 0, 0, 1, 4, 0, 9, 2, 1, 6, 2, 3, 0, 2, 3, 1},
		[]byte("failback: stop, fail, recover, send, mirror back, elect"),
		bytes.Repeat([]byte{8, 6, 1, 1, 0, 2, 1, 3, 9, 0, 1}, 6),
	}
	// The design under TV1 and TV2, TV2 under Kafka 4.0 rules, Kafka 3.6
	// rules, and the prototype's STOPPING as the options' defaults have it
	// (unknown-source=skip, stop-errors=failed, recovery-barrier=ignore,
	// stop-completion=first).
	seedOpts := []uint16{0, 1, 1 | 1<<1, 2 << 1, 1<<4 | (1|1<<2|1<<6|1<<7)<<5}
	for _, s := range seeds {
		for st := range strategyNames {
			for _, o := range seedOpts {
				f.Add(s, uint8(st), o)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, stByte uint8, optBits uint16) {
		if len(data) > 256 {
			data = data[:256]
		}
		st := strategyNames[int(stByte)%len(strategyNames)]
		fo := genOptions(optBits)
		src := genScenario(data, optBits)
		s, err := Parse("fuzz.scn", src)
		if err != nil {
			t.Fatalf("generator wrote an invalid scenario: %v\n%s", err, src)
		}
		opts, err := resolveOptions(s, nil)
		if err != nil {
			t.Fatalf("generator wrote options that do not resolve: %v\n%s", err, src)
		}
		r1, err := runStrategy(s, st, opts)
		if err != nil {
			t.Fatalf("%s: %v\n%s", st, err, src)
		}
		// Nothing the oracle must see is written without being recorded:
		// checked step by step on one input in four (by length; the
		// determinism check below takes another quarter).
		if len(data)%4 == 1 {
			recordEveryStep(t, s, st, opts, src)
		}
		// The determinism check runs the simulation a second time: on one
		// input in four (by length, which the mutator changes all the
		// time), so that it costs a quarter of a run on average.
		if len(data)%4 == 0 {
			r2, err := runStrategy(s, st, opts)
			if err != nil {
				t.Fatalf("%s second run: %v", st, err)
			}
			var a, b bytes.Buffer
			WriteJSON(&a, []Result{r1})
			WriteJSON(&b, []Result{r2})
			if a.String() != b.String() {
				t.Fatalf("%s: two runs differ\n%s\n%s\n%s", st, a.String(), b.String(), src)
			}
		}
		for _, v := range fuzzFindings(r1, st, fo) {
			t.Fatalf("%s: %s at step %d on %s %s: %s\n%s", st, v.Code, v.Step, v.Cluster, v.Partition, v.Detail, src)
		}
	})
}

// fuzzFindings returns the violations of r that FuzzScenario fails on: a
// run of strategy st under the options fo, within what the generator
// covers.
func fuzzFindings(r Result, st string, fo fuzzOptions) []Violation {
	var bad []Violation
	for _, v := range r.Violations {
		// A truncation that removed an acknowledged end marker (RPO)
		// leaves its transaction open with no coordinator to close it, on
		// that cluster and on every mirror downstream of it, which never
		// gets the marker: that M6 is the loss's consequence, already
		// reported, not a design's hang. The oracle tells it by the
		// transaction that pins the LSO (Violation.endLost).
		if v.Code == CodeM6 && v.endLost {
			continue
		}
		// Every strategy, every option, but one: the replay that stores
		// the barrier without applying it brings back, on the replica that
		// recovered, entries from below it that the other replicas
		// cleared, so I4 and I2 are that switch's own findings
		// (scenarios/69-crash-after-stopped.scn).
		found := (v.Code == CodeI2 || v.Code == CodeI4) && fo.prototype["recovery-barrier"] != "ignore"
		// Hazard R2 leaves a transaction open whose producer entry the
		// barrier then clears: no snapshot can hold it, so a replica that
		// reopens (an election) forgets it while the others keep it
		// (scenarios/40-r2-abort-ignored.scn, 55-…).
		if v.Code == CodeI2 && fo.prototype["hazard-r2"] == "on" && strings.Contains(v.Detail, "open transactions") {
			found = false
		}
		found = found || v.Code == CodeM6 && !fo.leavesTxnOpen()
		if st == "barrier" && !fo.voidsBarrier() {
			found = found || v.Code == CodeM1 || v.Code == CodeM2 || v.Code == CodeM3 || v.Code == CodeM4
		}
		if found {
			bad = append(bad, v)
		}
	}
	return bad
}

// FuzzRun runs arbitrary scenario text, which may be hostile: whatever
// parses must run without a panic, deterministically, under a strategy the
// input picks; a run may end with an error (a mirror of a STOPPING
// partition, say) but never
// hang or allocate beyond the limits of lang.go.
func FuzzRun(f *testing.F) {
	f.Add([]byte(fullScript), uint8(4))
	catalog, _ := filepath.Glob("../scenarios/*.scn")
	for i, file := range catalog {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src, uint8(i))
		}
	}
	f.Add([]byte("cluster A\ncluster B\ntopic t\nmirror B from A\nmirror A from B\nproducer p on A\nsend p t/0\nsync\n"), uint8(0))
	f.Add([]byte("cluster A replicas=3\ntopic t partitions=2\nproducer p on A transactional=x\nbegin p\nsend p t/1\nelect A t/1\nrestart A\ncommit p\n"), uint8(2))
	f.Add([]byte("cluster A\ncluster B replicas=2\ntopic t\npause B t/0 replica=1\nmirror B from A\nproducer p on A\nsend p t/0\nsync\nstop B\nelect B t/0 replica=1 unclean\nrepoint p to B\nsend p t/0\nrestart B unclean\nresume B t/0 replica=1\nsync\n"), uint8(4))
	f.Fuzz(func(t *testing.T, src []byte, st uint8) {
		if len(src) > 2048 {
			return
		}
		s, err := Parse("fuzz.scn", src)
		if err != nil || len(s.commands) > 60 {
			return
		}
		strategy := strategyNames[int(st)%len(strategyNames)]
		opts, err := resolveOptions(s, nil)
		if err != nil {
			t.Fatalf("parsed settings do not resolve: %v", err)
		}
		r1, err1 := runStrategy(s, strategy, opts)
		r2, err2 := runStrategy(s, strategy, opts)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v / %v", err1, err2)
		}
		// Only a file that asks for the impossible (a mirror of a
		// partition that is STOPPING) may end a run: no broker
		// error may, whatever the input.
		if err1 != nil && !errors.Is(err1, ErrScenario) {
			t.Fatalf("run ended with an error on valid input: %v", err1)
		}
		var a, b bytes.Buffer
		WriteJSON(&a, []Result{r1})
		WriteJSON(&b, []Result{r2})
		if a.String() != b.String() {
			t.Fatalf("two runs differ:\n%s\n%s", a.String(), b.String())
		}
	})
}

// TestFuzzFindingsExcuseOnlyLostEndMarkers: FuzzScenario lets an M6 pass
// only when the transaction that pins the LSO had its acknowledged end
// marker truncated away (Violation.endLost): failback's loss of a COMMIT
// (scenarios/31) or of the fence's ABORT (scenarios/94) under negate-skip
// and bitfield. An M6 on a partition that lost other acknowledged writes at
// the same step is still a finding: an unclean election that removes a
// local acks=1 batch (RPO) and STOPPING's own ABORT, which no coordinator
// wrote.
func TestFuzzFindingsExcuseOnlyLostEndMarkers(t *testing.T) {
	design := genOptions(0)
	for _, file := range []string{"../scenarios/31-failback-truncates-commit.scn", "../scenarios/94-failback-truncates-fence-abort.scn"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range []string{"negate-skip", "bitfield"} {
			r := resultOf(t, file, src, st)
			if m6 := firstOf(r, CodeM6); m6 == nil || !m6.endLost {
				t.Errorf("%s %s: M6 %+v, want one that names the truncated end marker", file, st, m6)
			}
			if bad := fuzzFindings(r, st, design); len(bad) != 0 {
				t.Errorf("%s %s: the fuzz test fails on %+v", file, st, bad)
			}
		}
	}
	const unrelated = "cluster A\ncluster B replicas=2\ntopic t\nmirror B from A\n" +
		"producer tx on A transactional=tx1\nbegin tx\nsend tx t/0\nsync\n" +
		"pause B t/0 replica=1\nfail A\nstop B\nproducer q on B acks=1\nsend q t/0\n" +
		"elect B t/0 replica=1 unclean\nresume B t/0 replica=1\nsync\n"
	for _, st := range strategyNames {
		r := resultOf(t, "unrelated", []byte(unrelated), st)
		m6, rpo := firstOf(r, CodeM6), firstOf(r, CodeRPO)
		if m6 == nil || rpo == nil || rpo.Partition != m6.Partition || rpo.Cluster != m6.Cluster || rpo.Step > m6.Step {
			t.Fatalf("%s: M6 %+v, RPO %+v: want an RPO at or before an M6 on the same partition", st, m6, rpo)
		}
		if m6.endLost {
			t.Errorf("%s: M6 marked as following a truncated end marker: %s", st, m6.Detail)
		}
		found := false
		for _, v := range fuzzFindings(r, st, design) {
			found = found || v.Code == CodeM6
		}
		if !found {
			t.Errorf("%s: the fuzz test lets the M6 pass: %s", st, m6.Detail)
		}
	}
}

// resultOf runs scenario text src under strategy st with its own settings.
func resultOf(t *testing.T, name string, src []byte, st string) Result {
	t.Helper()
	s, err := Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := resolveOptions(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runStrategy(s, st, opts)
	if err != nil {
		t.Fatalf("%s %s: %v", name, st, err)
	}
	return r
}

// firstOf returns r's finding of code, nil when there is none.
func firstOf(r Result, code Code) *Violation {
	for i := range r.Violations {
		if r.Violations[i].Code == code {
			return &r.Violations[i]
		}
	}
	return nil
}
