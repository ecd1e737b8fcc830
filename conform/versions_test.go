package conform

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// lesserBroker is a kfake cluster that accepts fewer versions than the
// suite sends at most.
type lesserBroker struct {
	name string
	cap  func(vs *kversion.Versions)
	// unsupported maps each case the broker cannot run to its reason;
	// every other case must be checked (ok or diverges).
	unsupported func(c Case) string
	wantAPIv    int16 // the ApiVersions version that answers
	leaves      bool  // no DeleteTopics: every topic stays
}

func lacking(needs ...Need) func(c Case) string {
	return func(c Case) string {
		for _, n := range needs {
			for _, cn := range c.Needs {
				if cn.Key == n.Key {
					return n.String()
				}
			}
		}
		if c.Name == "leader-restart-retry" {
			return "the broker cannot be restarted from here"
		}
		return ""
	}
}

var lesserBrokers = []lesserBroker{
	{"ApiVersions v0 only", func(vs *kversion.Versions) {
		vs.SetMaxKeyVersion(int16(kmsg.ApiVersions), 0)
	}, lacking(), 0, false},
	{"no CreateTopics, no DeleteTopics", func(vs *kversion.Versions) {
		vs.SetMaxKeyVersion(int16(kmsg.CreateTopics), -1)
		vs.SetMaxKeyVersion(int16(kmsg.DeleteTopics), -1)
	}, lacking(), 3, true},
	{"Produce v3, Fetch v4, ListOffsets v2, Metadata v1, ApiVersions v1", func(vs *kversion.Versions) {
		vs.SetMaxKeyVersion(int16(kmsg.Produce), 3)
		vs.SetMaxKeyVersion(int16(kmsg.Fetch), 4)
		vs.SetMaxKeyVersion(int16(kmsg.ListOffsets), 2)
		vs.SetMaxKeyVersion(int16(kmsg.Metadata), 1)
		vs.SetMaxKeyVersion(int16(kmsg.ApiVersions), 1)
	}, lacking(), 1, false},
	{"no transactions (no AddPartitionsToTxn, no EndTxn)", func(vs *kversion.Versions) {
		vs.SetMaxKeyVersion(int16(kmsg.AddPartitionsToTxn), -1)
		vs.SetMaxKeyVersion(int16(kmsg.EndTxn), -1)
	}, lacking(needAddPart), 3, false},
}

// TestLesserBrokers runs the whole suite against brokers that accept less
// than it sends at most: each run ends without an error, each case is
// either checked or unsupported naming the API and version it needs, and
// the suite falls back to what the broker accepts (ApiVersions, topic
// creation through Metadata, lower request versions).
func TestLesserBrokers(t *testing.T) {
	for _, lb := range lesserBrokers {
		t.Run(lb.name, func(t *testing.T) {
			vs := kversion.V3_6_0()
			for k, v := range maxVersions {
				vs.SetMaxKeyVersion(k, v)
			}
			lb.cap(vs)
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(loopback),
				kfake.MaxVersions(vs), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(1))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tg, err := Dial(context.Background(), c.ListenAddrs()[0], 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if tg.APIVersion != lb.wantAPIv {
				t.Errorf("ApiVersions answered at v%d, want v%d (fallbacks %q)", tg.APIVersion, lb.wantAPIv, tg.Fallbacks)
			}
			res, err := Run(context.Background(), tg, "l-", nil)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for i, r := range res {
				want := lb.unsupported(Cases()[i])
				switch {
				case want != "" && (r.Verdict != Unsupported || r.Reason != want):
					t.Errorf("%s: %s, want unsupported (%s)", r.Case, r.Summary(), want)
				case want == "" && r.Verdict == Unsupported:
					t.Errorf("%s: %s, want it checked", r.Case, r.Summary())
				case r.Verdict != Unsupported:
					checked++
				}
			}
			if checked == 0 {
				t.Errorf("no case checked")
			}
			if left := len(tg.Left) > 0; left != lb.leaves || lb.leaves && len(tg.Left) != checked+1 {
				t.Errorf("%d topics left, %d cases checked", len(tg.Left), checked)
			}
			for _, r := range res {
				if r.Diff != nil && !strings.Contains(r.Diff.Response, " response") {
					t.Errorf("%s: response %q does not name its API", r.Case, r.Diff.Response)
				}
			}
		})
	}
}

// TestNothingToCheck: a broker whose Produce stops below v3 (no v2 record
// batch) can run no case; each says it needs Produce v3, and the run ends
// without an error.
func TestNothingToCheck(t *testing.T) {
	vs := kversion.V3_6_0()
	vs.SetMaxKeyVersion(int16(kmsg.Produce), 2)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(loopback), kfake.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tg, err := Dial(context.Background(), c.ListenAddrs()[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := Run(context.Background(), tg, "n-", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Summary() != "unsupported (Produce v3)" {
			t.Errorf("%s: %s, want unsupported (Produce v3)", r.Case, r.Summary())
		}
	}
}

// apiVersionsServer answers each connection's one ApiVersions request with
// reply(version of the request), framed; a nil reply closes the connection.
func apiVersionsServer(t *testing.T, reply func(v int16) []byte) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var size [4]byte
				if _, err := io.ReadFull(conn, size[:]); err != nil {
					return
				}
				req := make([]byte, binary.BigEndian.Uint32(size[:]))
				if _, err := io.ReadFull(conn, req); err != nil || len(req) < 8 {
					return
				}
				body := reply(int16(binary.BigEndian.Uint16(req[2:])))
				if body == nil {
					return
				}
				frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
				frame = append(frame, req[4:8]...) // the correlation ID
				_, _ = conn.Write(append(frame, body...))
			}()
		}
	}()
	return ln.Addr().String()
}

// apiVersionsBody is an ApiVersions response body at version v.
func apiVersionsBody(v int16, code int16, keys map[int16]VersionRange) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version, resp.ErrorCode = v, code
	for k, r := range keys {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, r.Min, r.Max
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	return resp.AppendTo(nil)
}

// TestNegotiateSilentBroker: a broker that accepts the connection and never
// answers is a connection error after one timeout, not one per version.
func TestNegotiateSilentBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		// Hold every connection open and silent until the listener closes.
		var conns []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				break
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
		close(done)
	}()
	defer func() { ln.Close(); <-done }()
	_, _, fallbacks, err := negotiate(context.Background(), ln.Addr().String(), 200*time.Millisecond)
	if !errors.Is(err, ErrConnect) || len(fallbacks) != 0 {
		t.Fatalf("err %v after %d fallbacks, want a connection error at v3", err, len(fallbacks))
	}
}

// TestNegotiateFallsBack feeds the negotiation the answers of brokers that
// accept less: each is answered at the highest version that parses, with
// no error, and lists an API.
func TestNegotiateFallsBack(t *testing.T) {
	produceOnly := map[int16]VersionRange{0: {0, 3}, 18: {0, 0}}
	for _, tc := range []struct {
		name  string
		reply func(v int16) []byte
		want  int16 // -1: a connection error
	}{
		{"v3 answered", func(v int16) []byte { return apiVersionsBody(v, 0, produceOnly) }, 3},
		{"v0 only, error answers in v0 form", func(v int16) []byte {
			if v > 0 {
				return apiVersionsBody(0, 35, map[int16]VersionRange{18: {0, 0}})
			}
			return apiVersionsBody(0, 0, produceOnly)
		}, 0},
		{"v3 truncated, v2 answered", func(v int16) []byte {
			if v == 3 {
				return apiVersionsBody(3, 0, produceOnly)[:3]
			}
			return apiVersionsBody(v, 0, produceOnly)
		}, 2},
		{"connection closed above v1", func(v int16) []byte {
			if v > 1 {
				return nil
			}
			return apiVersionsBody(v, 0, produceOnly)
		}, 1},
		{"no API listed at any version", func(v int16) []byte { return apiVersionsBody(v, 0, nil) }, -1},
		{"garbage at every version", func(int16) []byte { return []byte{0xff} }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := apiVersionsServer(t, tc.reply)
			v, vs, _, err := negotiate(context.Background(), addr, 2*time.Second)
			if tc.want < 0 {
				if !errors.Is(err, ErrConnect) {
					t.Fatalf("v%d %v err %v, want a connection error", v, vs, err)
				}
				return
			}
			if err != nil || v != tc.want {
				t.Fatalf("v%d err %v, want v%d", v, err, tc.want)
			}
			if got, ok := vs.use(0); !ok || got != 3 {
				t.Errorf("Produce at v%d (%t), want v3", got, ok)
			}
			if n, lacks := vs.lacks(needProduce, needFetch); !lacks || n != needFetch {
				t.Errorf("Lacks = %v %t, want Fetch v4", n, lacks)
			}
		})
	}
}

// FuzzApiVersions feeds parseAPIVersions any answer at any version: it
// returns an error or ranges from which every request's version lies
// within both the broker's range and the suite's maximum.
func FuzzApiVersions(f *testing.F) {
	f.Add(int16(3), apiVersionsBody(3, 0, map[int16]VersionRange{0: {0, 9}, 1: {4, 12}}))
	f.Add(int16(0), apiVersionsBody(0, 0, map[int16]VersionRange{0: {3, 3}, 18: {0, 0}}))
	f.Add(int16(2), apiVersionsBody(2, 0, map[int16]VersionRange{0: {9, 2}, -1: {0, 1}}))
	f.Add(int16(3), apiVersionsBody(0, 35, nil))
	f.Fuzz(func(t *testing.T, v int16, body []byte) {
		v &= 3
		frame := append([]byte{0, 0, 0, 1}, body...)
		resp, err := parseAPIVersions(v, 1, frame)
		if err != nil {
			return
		}
		vs := versionsFrom(resp)
		for k := range maxVersions {
			got, ok := vs.use(k)
			if !ok {
				continue
			}
			r := vs[k]
			if got < r.Min || got > r.Max || got > maxVersions[k] {
				t.Fatalf("key %d at v%d, broker %v, suite max %d", k, got, r, maxVersions[k])
			}
		}
		for _, c := range Cases() {
			if n, lacks := vs.lacks(c.Needs...); lacks {
				if got, ok := vs.use(n.Key); ok && got >= n.Version {
					t.Fatalf("%s lacks %s but the broker answers it at v%d", c.Name, n, got)
				}
			}
		}
	})
}

// TestNoTopicSetup: a broker with no CreateTopics that does not create a
// topic on Metadata can run no case; each says why, and the run waits for
// auto-creation once, not once per case.
func TestNoTopicSetup(t *testing.T) {
	vs := kversion.V3_6_0()
	vs.SetMaxKeyVersion(int16(kmsg.CreateTopics), -1)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(loopback), kfake.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tg, err := Dial(context.Background(), c.ListenAddrs()[0], time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	res, err := Run(context.Background(), tg, "s-", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Verdict != Unsupported || !strings.HasPrefix(r.Reason, "topic setup: ") ||
			!strings.Contains(r.Reason, ": no CreateTopics, and the broker did not create it on Metadata") {
			t.Errorf("%s: %s, want unsupported (topic setup: …)", r.Case, r.Summary())
		}
	}
	if tg.noAutoCreate == nil {
		t.Error("the failed auto-creation is not remembered")
	}
}

// TestCreateTopicsWithoutController: a broker whose Metadata names a
// controller missing from its broker list gets CreateTopics at the broker
// given, and every case runs.
func TestCreateTopicsWithoutController(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ListenFn(loopback))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host, port, err := net.SplitHostPort(c.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	portNum, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mr := req.(*kmsg.MetadataRequest)
		resp := mr.ResponseKind().(*kmsg.MetadataResponse)
		resp.ControllerID = 7 // no such broker
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = 0, host, int32(portNum)
		resp.Brokers = append(resp.Brokers, b)
		for _, rt := range mr.Topics {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic = rt.Topic
			if leader := c.LeaderFor(*rt.Topic, 0); leader >= 0 {
				p := kmsg.NewMetadataResponseTopicPartition()
				p.Leader, p.Replicas, p.ISR = leader, []int32{leader}, []int32{leader}
				mt.Partitions = append(mt.Partitions, p)
			} else {
				mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			resp.Topics = append(resp.Topics, mt)
		}
		return resp, nil, true
	})
	tg, err := Dial(context.Background(), c.ListenAddrs()[0], 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for _, cs := range Cases()[:3] {
		r, err := RunCase(context.Background(), tg, "c-", cs)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict == Unsupported {
			t.Errorf("%s: %s, want it checked", r.Case, r.Summary())
		}
	}
	if tg.noAutoCreate != nil {
		t.Errorf("fell back to auto-creation: %v", tg.noAutoCreate)
	}
}
