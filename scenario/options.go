package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mirrorpath/mirrorpath/appendpath"
	"github.com/mirrorpath/mirrorpath/pid"
	"github.com/mirrorpath/mirrorpath/psm"
)

// ErrOption reports an unknown option or a value it does not take.
var ErrOption = errors.New("scenario: bad option")

// OptionSpec is one strategy or broker option: the same name is a `set` key in
// a file and a flag of `mirrorpath scenario run`.
type OptionSpec struct {
	Name    string
	Values  []string // allowed values; Values[0] is the default (see intOptions)
	Summary string
}

// intOptions take any decimal integer in [0, 2^62] instead of a listed value;
// their Values hold the default only.
var intOptions = map[string]bool{"allocator-margin": true}

// OptionSpecs lists every option in output order.
var OptionSpecs = []OptionSpec{
	{"strategy", append([]string{"all"}, strategyNames...), "strategies to run (a name or all)"},
	{"crc-fix", namesOf(pid.CRCFixes()), "CRC fix of rewriting strategies"},
	{"fold", namesOf(pid.Folds()), "bitfield: cluster-id fold to a 32-bit region"},
	{"pid-policy", namesOf(pid.Policies()), "bitfield: PIDs >= 2^31 move the partition to FAILED (reject) or keep their low 31 bits (alias)"},
	{"salt-records", []string{"on", "off"}, "bitfield: resolve region collisions with salts (off: mappings collide silently)"},
	{"barrier-apply", defaultFirst(psm.Exact, psm.BarrierApplies()), "barrier: exact order, or the prototype hazard that resurrects pre-barrier entries"},
	{"stop-variant", namesOf(appendpath.StopVariants()), "STOPPING closes open transactions with ABORT markers or by truncating to the LSO"},
	{"has-producer-id", defaultFirst(psm.NonNegativeOne, psm.HasProducerIDRules()), "PSM test for a producer: pid != -1, or Kafka's stock pid > -1"},
	{"unknown-source", namesOf([]appendpath.UnknownSource{appendpath.SourceSkip, appendpath.SourceRetry, appendpath.SourceFail, appendpath.SourceWrite}), "barrier: STOPPING of a partition that knows no source cluster id skips the barrier and goes STOPPED (skip, hazard R1), fails every attempt and stays STOPPING (retry), moves to FAILED and is retried (fail), or writes the barrier anyway (write)"},
	{"hazard-r2", []string{"off", "on"}, "STOPPING ignores an ABORT marker it fails to append and goes on (prototype hazard R2)"},
	{"stop-errors", namesOf([]appendpath.StepErrors{appendpath.StepErrorsFailed, appendpath.StepErrorsStuck, appendpath.StepErrorsRetry}), "a failing STOPPING step moves the partition to FAILED, retried (failed); leaves it STOPPING for good when the step is the checkpoint, epoch bump or an ABORT (stuck); or leaves it STOPPING, retried (retry)"},
	{"empty-stop", []string{"stop", "hang"}, "STOPPING of a partition whose log holds no batch (no leader epoch yet) proceeds (stop) or fails every attempt and stays STOPPING (hang)"},
	{"barrier-source", []string{"off", "on"}, "barrier: the barrier record carries only its Version (off) or also SourceClusterId (on)"},
	{"recovery-barrier", []string{"ignore", "apply"}, "barrier: the replay of a recovery after an unclean restart stores barriers without applying them (ignore) or applies them (apply)"},
	{"stop-completion", []string{"first", "each"}, "barrier: a stop of several partitions takes its completion from the first partition's, so the others are reported missing and get a second barrier at the next stop (first), or each partition completes on its own (each)"},
	{"mirror-loop", []string{"fail", "refuse"}, "a mirror that would close a loop (A⇒B⇒A) moves the partition to FAILED (fail), or is refused and leaves it as it was (refuse)"},
	{"source-change", []string{"fail", "accept"}, "a partition that stopped mirroring one cluster and then mirrors another into the same log (an inconsistent source cluster id) moves to FAILED for good (fail), or appends after what it holds (accept, fan-in)"},
	{"failback-position", []string{"direct", "any"}, "a failback truncates to the other side's last mirrored position only when that side mirrored this cluster directly (direct), or whichever cluster it mirrored (any)"},
	{"stop-abort-marker", namesOf(appendpath.AbortMarkers()), "STOPPING's ABORT: the transaction version's marker (TV2 at epoch + 1, the version stated), the producer's epoch with the version stated, or the prototype's (the producer's epoch, no version stated)"},
	{"txn-verification", []string{"on", "off"}, "KIP-890 transaction verification: a transactional batch with no transaction open on the partition is checked with the coordinator"},
	{"txn-version", []string{"1", "2"}, "transaction version of every transactional producer (transaction.version): 2 bumps the epoch at each commit or abort and its markers must carry an epoch above the producer's"},
	{"kafka-release", namesOf([]psm.Release{psm.Kafka4, psm.Kafka41, psm.Kafka40, psm.Kafka3}), "Kafka release whose producer-state rules the brokers follow: 4.2 and later, 4.1 and 4.0 (markers not checked by transaction version), 3.6 to 3.9 (an open transaction at any epoch counts as ongoing)"},
	{"dedup-check", []string{"seq", "crc"}, "duplicate detection compares epoch and sequences only (seq, Kafka's), or also the cached batch's CRC, refusing a match with another CRC (crc)"},
	{"allocator-margin", []string{"1000"}, "allocator: the failover advances the destination's PID allocator to the highest PID of its partitions plus this margin"},
	{"allocator-mode", []string{"awaited", "async"}, "allocator: promotion waits for the allocator advance (awaited), or does not and the advance lands after the first local InitProducerId (async, Redpanda CORE-16631)"},
}

// Options holds one value per OptionSpec. The zero value is not valid; use
// DefaultOptions.
type Options struct {
	vals []string
}

// DefaultOptions returns every option at its default.
func DefaultOptions() Options {
	o := Options{vals: make([]string, len(OptionSpecs))}
	for i, s := range OptionSpecs {
		o.vals[i] = s.Values[0]
	}
	return o
}

func optionIndex(name string) int {
	for i, s := range OptionSpecs {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// aliases are option settings kept for older files: name → value → the
// setting they stand for.
var aliases = map[string]map[string][2]string{
	"hazard-r1": {"on": {"unknown-source", "skip"}, "off": {"unknown-source", "write"}},
}

// alias resolves an alias setting; others are returned unchanged.
func alias(name, value string) (string, string) {
	if a, ok := aliases[name]; ok {
		if to, ok := a[value]; ok {
			return to[0], to[1]
		}
	}
	return name, value
}

// checkOption reports whether name=value is a valid option setting.
func checkOption(name, value string) error {
	name, value = alias(name, value)
	i := optionIndex(name)
	if i < 0 {
		return fmt.Errorf("%w: unknown option %q", ErrOption, name)
	}
	if intOptions[name] {
		if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 && n <= 1<<62 && strconv.FormatInt(n, 10) == value {
			return nil
		}
		return fmt.Errorf("%w: %s=%q (want a decimal integer in [0, 2^62])", ErrOption, name, value)
	}
	for _, v := range OptionSpecs[i].Values {
		if v == value {
			return nil
		}
	}
	return fmt.Errorf("%w: %s=%q (want %s)", ErrOption, name, value, strings.Join(OptionSpecs[i].Values, "|"))
}

// Set changes one option; o must come from DefaultOptions.
func (o *Options) Set(name, value string) error {
	if err := checkOption(name, value); err != nil {
		return err
	}
	name, value = alias(name, value)
	o.vals[optionIndex(name)] = value
	return nil
}

// Get returns an option's value ("" for an unknown name).
func (o Options) Get(name string) string {
	if i := optionIndex(name); i >= 0 && i < len(o.vals) {
		return o.vals[i]
	}
	return ""
}

// Strategies returns the strategies the "strategy" option selects.
func (o Options) Strategies() []string {
	if s := o.Get("strategy"); s != "all" {
		return []string{s}
	}
	return strategyNames
}

// relevant reports whether option name changes anything under strategy st,
// so that output names only the options in force.
func relevant(name, st string) bool {
	switch name {
	case "strategy":
		return false
	case "crc-fix":
		return st == "negate" || st == "negate-skip" || st == "bitfield"
	case "fold", "pid-policy", "salt-records":
		return st == "bitfield"
	case "barrier-apply", "unknown-source", "barrier-source", "recovery-barrier", "stop-completion":
		return st == "barrier"
	case "stop-errors", "empty-stop":
		return st != "allocator"
	case "allocator-margin", "allocator-mode":
		return st == "allocator"
	}
	return true
}

// For returns the options in force under strategy st as name → value.
func (o Options) For(st string) map[string]string {
	m := map[string]string{}
	for i, s := range OptionSpecs {
		if relevant(s.Name, st) {
			m[s.Name] = o.vals[i]
		}
	}
	return m
}

// release is the psm.Release of option kafka-release.
func release(o Options) psm.Release {
	var r psm.Release
	_ = r.UnmarshalText([]byte(o.Get("kafka-release"))) // checked by Set; the zero value is the default
	return r
}

// txnVersion is the psm.TxnVersion of option txn-version: the
// transaction.version feature level, which psm numbers as Kafka does.
func txnVersion(o Options) psm.TxnVersion {
	n, _ := strconv.Atoi(o.Get("txn-version")) // checked by Set: 1 or 2
	return psm.TxnVersion(n)
}
