package codec

import "github.com/mirrorpath/mirrorpath/internal/enum"

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

// controlTypes spells each type as Kafka's ControlRecordType names it; a
// type without a name (ControlUnknown, or a key from a later Kafka) is
// UNKNOWN(n).
var controlTypes = enum.Table[ControlType]{Kind: "control type", Unknown: "UNKNOWN", Err: ErrUnknownName,
	Names: []string{"ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER",
		"KRAFT_VERSION", "KRAFT_VOTERS", "MIRROR_PID_RESET"}}

// String returns Kafka's name of the type, or UNKNOWN(n).
func (t ControlType) String() string { return controlTypes.String(t) }

// Known reports whether t is one of the named types.
func (t ControlType) Known() bool { return controlTypes.Valid(t) }

// MarshalText implements encoding.TextMarshaler: Kafka's name; a type
// without one is an error matching ErrUnknownName.
func (t ControlType) MarshalText() ([]byte, error) { return controlTypes.MarshalText(t) }

// UnmarshalText implements encoding.TextUnmarshaler; an unknown name
// matches ErrUnknownName.
func (t *ControlType) UnmarshalText(b []byte) error { return controlTypes.UnmarshalText(t, b) }
