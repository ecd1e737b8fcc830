package codec

import "strconv"

// ControlType is the type field of a control record key
// (org.apache.kafka.common.record.ControlRecordType), plus MIRROR_PID_RESET.
type ControlType int16

const (
	ControlUnknown        ControlType = -1
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2
	ControlSnapshotHeader ControlType = 3
	ControlSnapshotFooter ControlType = 4
	ControlKRaftVersion   ControlType = 5
	ControlKRaftVoters    ControlType = 6
	// ControlMirrorPidReset is the barrier of KIP-1279 mirroring (docs/strategies.md).
	ControlMirrorPidReset ControlType = 7
)

var controlNames = [...]string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER",
	"KRAFT_VERSION", "KRAFT_VOTERS", "MIRROR_PID_RESET"}

// String returns Kafka's name of the type, or UNKNOWN(n).
func (t ControlType) String() string {
	if t >= 0 && int(t) < len(controlNames) {
		return controlNames[t]
	}
	return "UNKNOWN(" + strconv.Itoa(int(t)) + ")"
}

// Known reports whether t is one of the named types.
func (t ControlType) Known() bool { return t >= 0 && int(t) < len(controlNames) }
