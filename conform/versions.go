package conform

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Need is one request a case sends: the API and the lowest version that
// carries the fields the case needs.
type Need struct {
	Key     int16
	Version int16
}

func (n Need) String() string {
	return fmt.Sprintf("%s v%d", apiName(n.Key), n.Version)
}

// The lowest versions the cases can use, and why:
//   - Produce v3: the first to carry a v2 record batch (producer ID, epoch,
//     sequence) and a transactional_id;
//   - Fetch v4: the first with an isolation level, the last stable offset
//     and the aborted transactions (and v2 batches);
//   - ListOffsets v2: the first with an isolation level;
//   - InitProducerId, AddPartitionsToTxn, EndTxn v0: the fields the cases
//     send are all in v0, but for InitProducerId naming the producer to
//     bump (v3).
var (
	needProduce    = Need{int16(kmsg.Produce), 3}
	needFetch      = Need{int16(kmsg.Fetch), 4}
	needListOffset = Need{int16(kmsg.ListOffsets), 2}
	needInitPID    = Need{int16(kmsg.InitProducerID), 0}
	// needInitPIDBump: v3 names the producer's current ID and epoch
	// (KIP-360), which the coordinator bumps.
	needInitPIDBump = Need{int16(kmsg.InitProducerID), 3}
	needAddPart     = Need{int16(kmsg.AddPartitionsToTxn), 0}
	needEndTxn      = Need{int16(kmsg.EndTxn), 0}
)

// maxVersions are the highest versions the suite sends: Kafka 3.6's, with
// AddPartitionsToTxn held at v3 (v4 is the broker-to-broker batch form) and
// Fetch at v12 (v13 names topics by ID). These are the transaction protocol
// before KIP-890's implicit partition addition and per-transaction epoch
// bump, which is the one the cases model.
var maxVersions = map[int16]int16{
	int16(kmsg.ApiVersions):        3,
	int16(kmsg.Metadata):           12,
	int16(kmsg.CreateTopics):       7,
	int16(kmsg.DeleteTopics):       6,
	int16(kmsg.FindCoordinator):    4,
	int16(kmsg.InitProducerID):     4,
	int16(kmsg.Produce):            9,
	int16(kmsg.AddPartitionsToTxn): 3,
	int16(kmsg.EndTxn):             3,
	int16(kmsg.ListOffsets):        8,
	int16(kmsg.Fetch):              12,
}

// VersionRange is the versions of one API a broker accepts.
type VersionRange struct{ Min, Max int16 }

// Versions is what a broker's ApiVersions answer says it accepts, by API key.
type Versions map[int16]VersionRange

// versionsFrom reads an ApiVersions response. A range whose minimum is above
// its maximum, or a negative key, is dropped: the broker does not offer it.
func versionsFrom(resp *kmsg.ApiVersionsResponse) Versions {
	vs := Versions{}
	for _, k := range resp.ApiKeys {
		if k.ApiKey < 0 || k.MinVersion < 0 || k.MinVersion > k.MaxVersion {
			continue
		}
		vs[k.ApiKey] = VersionRange{k.MinVersion, k.MaxVersion}
	}
	return vs
}

// use is the version the suite sends for key: the highest that both the
// broker and the suite (maxVersions) accept; ok is false when there is none.
func (vs Versions) use(key int16) (int16, bool) {
	ours, known := maxVersions[key]
	r, has := vs[key]
	if !known || !has {
		return 0, false
	}
	v := min(ours, r.Max)
	if v < r.Min {
		return 0, false
	}
	return v, true
}

// lacks returns the first of needs the broker cannot answer at the needed
// version or above, with ok false when it can answer them all.
func (vs Versions) lacks(needs ...Need) (Need, bool) {
	for _, n := range needs {
		if v, ok := vs.use(n.Key); !ok || v < n.Version {
			return n, true
		}
	}
	return Need{}, false
}

// unsupportedError is a request the broker cannot answer at a version that
// carries what the case needs.
type unsupportedError struct{ Need Need }

func (e *unsupportedError) Error() string {
	return fmt.Sprintf("conform: the broker does not accept %s or above", e.Need)
}

// negotiate asks addr which versions it accepts: ApiVersions at v3, then
// at v2, v1 and v0, as Kafka's and librdkafka's clients fall back, until one
// answer parses with no error and lists at least one API. It returns that
// version, the broker's ranges and why each higher version failed. A broker
// that cannot be dialled is a connection error at once; one that answers no
// version is a connection error after v0.
func negotiate(ctx context.Context, addr string, timeout time.Duration) (int16, Versions, []error, error) {
	var errs []error
	for v := maxVersions[int16(kmsg.ApiVersions)]; v >= 0; v-- {
		resp, err := apiVersionsAt(ctx, addr, timeout, v)
		var de *dialError
		if errors.As(err, &de) {
			return 0, nil, nil, &connectError{addr, de.err}
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			// A silent broker: asking again at a lower version would only
			// wait as long again.
			return 0, nil, nil, &connectError{addr, fmt.Errorf("ApiVersions v%d: %w", v, err)}
		}
		if err == nil {
			if vs := versionsFrom(resp); len(vs) > 0 {
				return v, vs, errs, nil
			}
			err = errors.New("no API listed")
		}
		errs = append(errs, fmt.Errorf("ApiVersions v%d: %w", v, err))
	}
	return 0, nil, errs, &connectError{addr, errors.Join(errs...)}
}

type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }

// apiVersionsAt sends one ApiVersions request at version v on a connection
// of its own and reads the answer.
func apiVersionsAt(ctx context.Context, addr string, timeout time.Duration, v int16) (*kmsg.ApiVersionsResponse, error) {
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, &dialError{err}
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if _, err := conn.Write(apiVersionsRequest(v, 1)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxAPIVersionsResponse {
		return nil, fmt.Errorf("response of %d bytes, more than %d", n, maxAPIVersionsResponse)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(conn, frame); err != nil {
		return nil, err
	}
	return parseAPIVersions(v, 1, frame)
}

// maxAPIVersionsResponse bounds what a broker's ApiVersions answer may make
// the suite read (a real one is a few hundred bytes).
const maxAPIVersionsResponse = 1 << 20

// apiVersionsRequest is a framed ApiVersions request at version v: the
// request header (v2 with its tag buffer from v3, v1 below), then the body.
func apiVersionsRequest(v int16, correlationID int32) []byte {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = v
	req.ClientSoftwareName, req.ClientSoftwareVersion = "mirrorpath-conform", "1"
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(kmsg.ApiVersions))
	b = binary.BigEndian.AppendUint16(b, uint16(v))
	b = binary.BigEndian.AppendUint32(b, uint32(correlationID))
	const clientID = "mirrorpath-conform"
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if req.IsFlexible() {
		b = append(b, 0) // no tagged fields in the header
	}
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseAPIVersions reads one ApiVersions response frame (without its size):
// the correlation ID, then the body at version v. The response header has no
// tag buffer at any version. An answer with an error code is an error.
func parseAPIVersions(v int16, correlationID int32, frame []byte) (*kmsg.ApiVersionsResponse, error) {
	if len(frame) < 4 {
		return nil, fmt.Errorf("response of %d bytes, shorter than its header", len(frame))
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != correlationID {
		return nil, fmt.Errorf("correlation ID %d, sent %d", got, correlationID)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = v
	if err := resp.ReadFrom(frame[4:]); err != nil {
		return nil, fmt.Errorf("unreadable: %w", err)
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("error %s", errName(resp.ErrorCode))
	}
	return resp, nil
}

// errName is the name Kafka gives an error code (NONE for 0).
func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return fmt.Sprintf("error %d", code)
}

// Sent names, for each request the suite sends, the version it goes at on
// this broker ("v7"), or "none" when the broker does not offer it at a
// version the suite speaks.
func (t *Target) Sent() map[string]string {
	out := map[string]string{}
	for k := range maxVersions {
		if k == int16(kmsg.ApiVersions) {
			continue
		}
		if v, ok := t.Versions.use(k); ok {
			out[apiName(k)] = fmt.Sprintf("v%d", v)
		} else {
			out[apiName(k)] = "none"
		}
	}
	return out
}

// apiName is Kafka's name of an API key (InitProducerId, where franz-go
// spells InitProducerID).
func apiName(key int16) string {
	if key == int16(kmsg.InitProducerID) {
		return "InitProducerId"
	}
	return kmsg.NameForKey(key)
}
