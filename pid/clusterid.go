package pid

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// ErrClusterID reports a cluster ID in neither accepted spelling.
var ErrClusterID = errors.New("pid: bad cluster ID")

// kafkaID is Kafka's Uuid.toString spelling: URL-safe base64 without padding.
// Not strict: like java.util.Base64 (which Uuid.fromString uses) it ignores
// the 4 unused bits of the last character, so the widely used example id
// "MkU3OEVBNTcwNTJENDM2Qk" is accepted as Kafka accepts it. Each ID still has
// one canonical spelling, the one FormatClusterID writes.
var kafkaID = base64.RawURLEncoding

// ParseClusterID reads a cluster ID in either spelling that names the same 16
// bytes: RFC 4122 text (exactly 36 characters, 8-4-4-4-12 hex digits, either
// case) or Kafka's 22-character URL-safe base64 without padding (what
// cluster.id looks like; the unused low bits of the last character are
// ignored, as Kafka's decoder does). Other lengths, including the 32-hex and urn: forms
// that uuid.Parse would take, are rejected with ErrClusterID. O(len(s)).
func ParseClusterID(s string) ([16]byte, error) {
	var id [16]byte
	switch len(s) {
	case 36:
		u, err := uuid.Parse(s)
		if err != nil {
			return id, fmt.Errorf("%w: %q: %v", ErrClusterID, s, err)
		}
		return u, nil
	case 22:
		var buf [22]byte
		copy(buf[:], s)
		n, err := kafkaID.Decode(id[:], buf[:])
		if err != nil || n != len(id) {
			return [16]byte{}, fmt.Errorf("%w: %q: not URL-safe base64 of 16 bytes", ErrClusterID, s)
		}
		return id, nil
	}
	return id, fmt.Errorf("%w: %q: want 36-character UUID text or 22-character base64", ErrClusterID, s)
}

// FormatClusterID returns Kafka's spelling of id (22 characters of URL-safe
// base64 without padding), as Uuid.toString does. Use uuid.UUID(id).String()
// for the RFC 4122 text.
func FormatClusterID(id [16]byte) string { return kafkaID.EncodeToString(id[:]) }
