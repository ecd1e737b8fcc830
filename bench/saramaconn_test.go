package bench

import (
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"
)

// sarama decodes record batches only inside its unexported packetDecoder;
// the public entry point is Broker.Fetch. fakeConn is an in-memory
// broker connection: every request written to it is answered with the same
// prebuilt response body, with the request's correlation id. No sockets, no
// extra goroutines beyond sarama's own response reader.
type fakeConn struct {
	body []byte // response body (header v0: the correlation id is prepended)

	mu     sync.Mutex
	cond   *sync.Cond
	wbuf   []byte
	rbuf   []byte
	closed bool
}

func newFakeConn(body []byte) *fakeConn {
	c := &fakeConn{body: body}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *fakeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wbuf = append(c.wbuf, p...)
	for len(c.wbuf) >= 4 {
		n := int(binary.BigEndian.Uint32(c.wbuf))
		if len(c.wbuf) < 4+n {
			break
		}
		req := c.wbuf[4 : 4+n]
		corr := binary.BigEndian.Uint32(req[4:8])
		c.rbuf = binary.BigEndian.AppendUint32(c.rbuf, uint32(4+len(c.body)))
		c.rbuf = binary.BigEndian.AppendUint32(c.rbuf, corr)
		c.rbuf = append(c.rbuf, c.body...)
		c.wbuf = c.wbuf[4+n:]
		c.cond.Broadcast()
	}
	return len(p), nil
}

func (c *fakeConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.rbuf) == 0 && !c.closed {
		c.cond.Wait()
	}
	if len(c.rbuf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.rbuf)
	c.rbuf = c.rbuf[n:]
	if len(c.rbuf) == 0 {
		c.rbuf = c.rbuf[:0:0]
	}
	return n, nil
}

func (c *fakeConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *fakeConn) LocalAddr() net.Addr                    { return fakeAddr{} }
func (c *fakeConn) RemoteAddr() net.Addr                   { return fakeAddr{} }
func (c *fakeConn) SetDeadline(time.Time) error            { return nil }
func (c *fakeConn) SetReadDeadline(time.Time) error        { return nil }
func (c *fakeConn) SetWriteDeadline(time.Time) error       { return nil }
func (fakeAddr) Network() string                           { return "mem" }
func (fakeAddr) String() string                            { return "mem:9092" }
func (d fakeDialer) Dial(string, string) (net.Conn, error) { return d.conn, nil }

type fakeAddr struct{}

type fakeDialer struct{ conn net.Conn }

// fetchResponseV4 encodes a FetchResponse v4 body holding records for
// topic "t", partition 0.
func fetchResponseV4(records []byte) []byte {
	be := binary.BigEndian
	var b []byte
	b = be.AppendUint32(b, 0) // throttle_time_ms
	b = be.AppendUint32(b, 1) // topics
	b = be.AppendUint16(b, 1)
	b = append(b, 't')
	b = be.AppendUint32(b, 1)          // partitions
	b = be.AppendUint32(b, 0)          // partition
	b = be.AppendUint16(b, 0)          // error_code
	b = be.AppendUint64(b, 1<<20)      // high_watermark
	b = be.AppendUint64(b, 1<<20)      // last_stable_offset
	b = be.AppendUint32(b, 0xffffffff) // aborted_transactions: null
	b = be.AppendUint32(b, uint32(len(records)))
	return append(b, records...)
}
