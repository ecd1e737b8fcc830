package scenario

import "strings"

// Code is a failure code of the oracle (docs/scenarios.md, "The oracle"):
// what a Violation found. Its JSON form is its name.
type Code string

// The codes, in the order reports and matrices list them (Codes). Each is
// described with its rule in docs/scenarios.md, whose table codeTable
// generates (TestCodeTableInDocs).
const (
	// CodeM1 is conflation with a sequence regression: one producer-state
	// entry holds batches of two true producers and the later batch does
	// not continue the earlier one's last sequence.
	CodeM1 Code = "M1"
	// CodeM2 is conflation with an epoch regression: the later batch has a
	// lower epoch than the earlier one.
	CodeM2 Code = "M2"
	// CodeM3 is a marker of one producer closing another's transaction, or
	// a read_committed difference between a mirror and its source.
	CodeM3 Code = "M3"
	// CodeM4 is an acknowledgement at foreign offsets: nothing was written
	// (invariant I1).
	CodeM4 Code = "M4"
	// CodeM5 is a PID treated as "no producer": its batches are not
	// tracked.
	CodeM5 Code = "M5"
	// CodeM6 is an LSO pinned below the high watermark with no transaction
	// open (invariant I3).
	CodeM6 Code = "M6"
	// CodeLAT is conflation with neither regression: no visible damage yet.
	CodeLAT Code = "LAT"
	// CodeERR is an error a client saw: availability lost, not silent.
	CodeERR Code = "ERR"
	// CodeFAIL is a mirror partition moved to FAILED.
	CodeFAIL Code = "FAIL"
	// CodeRPO is an acknowledged write lost.
	CodeRPO Code = "RPO"
	// CodeI2 is a caught-up follower whose producer state differs from its
	// leader's.
	CodeI2 Code = "I2"
	// CodeI4 is a producer entry referring to a batch below the last
	// barrier.
	CodeI4 Code = "I4"
	// CodeI5 is a mapped PID shared by two true origins, or a real PID
	// mapped to -1.
	CodeI5 Code = "I5"
	// CodeI6 is a mirrored PID equal to a locally allocated one.
	CodeI6 Code = "I6"
	// CodeM7 is a committed transaction whose data read_committed
	// consumers skip.
	CodeM7 Code = "M7"
	// CodeDUP is a client's resend written a second time.
	CodeDUP Code = "DUP"
	// CodeI7 is one true producer's epoch regression accepted with only a
	// warning.
	CodeI7 Code = "I7"
)

// codeInfo is one row of the oracle's table in docs/scenarios.md.
type codeInfo struct {
	code      Code
	what      string // what happened
	checkedBy string // the oracle's functions that report it
}

// codeTable is every code in report order with what it means; Codes and the
// table of docs/scenarios.md are derived from it.
var codeTable = []codeInfo{
	{CodeM1, "conflation with a sequence regression: one producer-state entry holds batches of two true producers, and the later batch does not continue the earlier one's last sequence at the same or a lower epoch",
		"`conflation` (from `scanBatch`, `checkEntry`)"},
	{CodeM2, "conflation with an epoch regression: the later batch has a lower epoch than the earlier one (accepted with REPLICATION rules); one batch can be M1 and M2",
		"`conflation`"},
	{CodeM3, "a COMMIT/ABORT marker of one producer closes the open transaction of another on the same PID, or a read_committed consumer of a MIRRORING partition sees a mirrored batch differently from the source",
		"`scanBatch`, `checkReadCommitted`"},
	{CodeM4, "a client ack carries an offset below the log end offset seen before the send, and the batch at that offset is not the same true producer's with the same base sequence and epoch (not a genuine retry): acknowledged with foreign offsets, nothing written (invariant I1)",
		"`checkAck`"},
	{CodeM5, "a batch's PID is treated as \"no producer\": after a scan, a data batch with a PID other than −1 has no producer-state entry (Kafka's `pid > -1` and a negative PID); or, under `has-producer-id=stock`, a read_committed difference on a batch with a negative PID",
		"`scan`, `checkReadCommitted`"},
	{CodeM6, "the LSO stays below the high watermark with no transaction open: a transaction nobody will close (invariant I3). Checked after every step on a writable partition (never mirrored, or STOPPED) once HW = LEO, and at a converged `sync` on a caught-up MIRRORING partition",
		"`checkLSO`, `checkMirrorsCaughtUp`"},
	{CodeM7, "a COMMIT the coordinator wrote (the client was told \"committed\") whose data a read_committed consumer of the partition skips: an ABORT already closed it",
		"`checkCommitsDelivered`"},
	{CodeDUP, "a client's resend (the same instance, PID as sent, base sequence, epoch and record count) is written although the partition already holds, or held until retention deleted it, the batch it resends: written twice",
		"`checkWrittenOnce`"},
	{CodeLAT, "conflation with neither regression (a higher epoch, or the same epoch continuing the sequence): no visible damage yet",
		"`conflation`"},
	{CodeERR, "a client saw an error (OUT_OF_ORDER_SEQUENCE_NUMBER, INVALID_PRODUCER_EPOCH, READ_ONLY_TOPIC, PRODUCER_FENCED, ILLEGAL_GENERATION, NETWORK_EXCEPTION, COORDINATOR_NOT_AVAILABLE, …): availability lost, not silent; once per error kind",
		"`clientError`"},
	{CodeFAIL, "the mirror partition moved to FAILED: a mirrored batch could not be mapped",
		"`checkFailed`, the mirror fetcher (`scenario/fetch.go`)"},
	{CodeRPO, "an acknowledged write lost: a truncation removed it and, once the fetches that could bring it back have converged, the log does not hold it at its offset; or a COMMIT written after a truncation removed data of its transaction",
		"`ackedLost`, `settleLosses`, `committedAfterLoss`"},
	{CodeI2, "after `sync`, a caught-up follower's producer state differs from its leader's",
		"`checkReplicasAgree`"},
	{CodeI4, "under `barrier`, a producer entry still refers to a batch below the last barrier",
		"`scan`"},
	{CodeI5, "under a rewriting strategy, two different true producers share a mapped PID in one partition, or a real PID maps to −1",
		"`mirrored`"},
	{CodeI6, "under a rewriting strategy, a mirrored PID equals a locally allocated one in the same partition",
		"`checkMapping`"},
	{CodeI7, "one true producer's batch at a lower epoch than its batch before it on the same PID, with no barrier between them: accepted by REPLICATION rules with only a warning",
		"`epochRegression` (from `scanBatch`)"},
}

// Codes are the failure codes the oracle reports, in report order
// (docs/scenarios.md, "The oracle").
var Codes = func() []Code {
	cs := make([]Code, len(codeTable))
	for i, c := range codeTable {
		cs[i] = c.code
	}
	return cs
}()

// codeTableMarkdown renders codeTable as the table of docs/scenarios.md.
func codeTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | what happened | checked by |\n|---|---|---|\n")
	for _, c := range codeTable {
		b.WriteString("| " + string(c.code) + " | " + c.what + " | " + c.checkedBy + " |\n")
	}
	return b.String()
}

func validCode(c string) bool { return codeRank(Code(c)) < len(Codes) }

// codeRank orders codes as Codes lists them.
func codeRank(c Code) int {
	for i, k := range Codes {
		if k == c {
			return i
		}
	}
	return len(Codes)
}

// codeNames joins codes with sep.
func codeNames(cs []Code, sep string) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, sep)
}

// sortedCodes returns the distinct non-empty codes of in, in Codes order.
func sortedCodes(in []Code) []Code {
	out := make([]Code, 0, len(in))
	for _, c := range in {
		dup := false
		for _, o := range out {
			dup = dup || o == c
		}
		if !dup && c != "" {
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ { // insertion sort: a handful of codes
		for j := i; j > 0 && codeRank(out[j]) < codeRank(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
