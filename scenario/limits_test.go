package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSendBytesBoundsTheBatch: sendBytes is at least the size of the batch
// the simulator builds for a send line, at the largest records, bytes and
// name lengths, inside a transaction (two headers) and out of it.
func TestSendBytesBoundsTheBatch(t *testing.T) {
	for _, records := range []int{1, 9, 10, 99, 100, 9999, int(limits["records"])} {
		for _, bytes := range []int{0, 16, 127, 128, 16383, 16384, int(limits["bytes"])} {
			for _, name := range []int{1, 63, 64, 4090} {
				for _, txn := range []bool{false, true} {
					d := dataBatch{pid: 1 << 40, epoch: 32767, seq: 1<<31 - 1, records: records, bytes: bytes, txn: txn,
						producer: strings.Repeat("p", name), txnSerial: 1<<63 - 1, ts: 1 << 62}
					if sendBytes(int64(records), int64(bytes), int64(name)) > 2*MaxBatchBytes {
						continue // above MaxBatchBytes whatever the name: refused before it is built
					}
					b, err := d.build()
					if err != nil {
						t.Fatal(err)
					}
					if bound := sendBytes(int64(records), int64(bytes), int64(name)); int64(len(b)) > bound {
						t.Errorf("records=%d bytes=%d name=%d txn=%v: batch of %d bytes above the bound %d", records, bytes, name, txn, len(b), bound)
					}
				}
			}
		}
	}
}

// TestByteCaps: a send whose batch could pass MaxBatchBytes (Kafka's
// message.max.bytes), or that takes the file's sends past MaxRunBytes, is
// refused at its line with ErrLimit; the send just under the batch cap is
// accepted.
func TestByteCaps(t *testing.T) {
	head := "cluster A\ntopic t\nproducer p on A\n"
	// records=16 bytes=65471: 61 + 16*(60+65471+1) = 1048573 <= 1048588.
	if _, err := Parse("f.scn", []byte(head+"send p t/0 records=16 bytes=65471\n")); err != nil {
		t.Fatalf("a batch under the cap: %v", err)
	}
	for _, c := range []struct{ name, src, want string }{
		{"one huge batch", head + "send p t/0 records=10000 bytes=65536\n",
			"f.scn:4: send: a batch of records=10000 bytes=65536 is up to 655970061 bytes, above the limit 1048588 (Kafka's message.max.bytes)"},
		{"just over", head + "send p t/0 records=16 bytes=65472\n",
			"f.scn:4: send: a batch of records=16 bytes=65472 is up to 1048589 bytes, above the limit 1048588 (Kafka's message.max.bytes)"},
		{"many batches", head + strings.Repeat("send p t/0 records=16 bytes=65000\n", 33),
			fmt.Sprintf("f.scn:36: send: the batches sent, up to %d bytes, held by 1 replicas are up to %d bytes, above the limit 33554432 of a run",
				33*sendBytes(16, 65000, 1), 33*sendBytes(16, 65000, 1))},
		{"many replicas", "cluster A replicas=9\ntopic t\nproducer p on A\n" + strings.Repeat("send p t/0 records=16 bytes=65000\n", 4),
			fmt.Sprintf("f.scn:7: send: the batches sent, up to %d bytes, held by 9 replicas are up to %d bytes, above the limit 33554432 of a run",
				4*sendBytes(16, 65000, 1), 36*sendBytes(16, 65000, 1))},
		{"a mirror cluster after the sends", head + strings.Repeat("send p t/0 records=16 bytes=65000\n", 20) + "cluster B replicas=1\n",
			fmt.Sprintf("f.scn:24: cluster: the batches sent, up to %d bytes, held by 2 replicas are up to %d bytes, above the limit 33554432 of a run",
				20*sendBytes(16, 65000, 1), 40*sendBytes(16, 65000, 1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.scn", []byte(c.src))
			if !errors.Is(err, ErrLimit) || err.Error() != c.want {
				t.Fatalf("err %v\nwant %s", err, c.want)
			}
		})
	}
}

// FuzzParseLimits: whatever the text, ParseReader reading it one byte at
// a time agrees with Parse over the whole of it; an error is an *Error
// naming a line of the text, of one of the three kinds; and a file that
// parses asks for no batch above MaxBatchBytes and no more than
// MaxRunBytes held by all its replicas, counted from the Script alone.
func FuzzParseLimits(f *testing.F) {
	head := "cluster A replicas=9\ntopic t\nproducer p on A\n"
	f.Add([]byte(fullScript))
	f.Add([]byte(head + "send p t/0 records=16 bytes=65471\n"))
	f.Add([]byte(head + "send p t/0 records=10000 bytes=65536\n"))
	f.Add([]byte(head + strings.Repeat("send p t/0 records=16 bytes=65000\n", 4) + "cluster B replicas=9\n"))
	f.Add([]byte(head + strings.Repeat("send p t/0 records=100 bytes=100\n", 40)))
	f.Add([]byte("cluster A\n" + strings.Repeat("#", MaxLineBytes) + "\n"))
	f.Add([]byte(strings.Repeat("\n", 100) + "sync" + strings.Repeat(" ", MaxLineBytes)))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("f.scn", src)
		s2, err2 := ParseReader("f.scn", iotest.OneByteReader(bytes.NewReader(src)))
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Parse: %v; ParseReader one byte at a time: %v", err, err2)
		}
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || perr.Line < 1 || perr.Line > bytes.Count(src, []byte("\n"))+1 {
				t.Fatalf("error %v does not name a line of the text", err)
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrReference) && !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v is of no kind", err)
			}
			return
		}
		if len(s.commands) != len(s2.commands) {
			t.Fatalf("Parse: %d commands; ParseReader: %d", len(s.commands), len(s2.commands))
		}
		var name, run, replicas int64
		for i := range s.commands {
			c := &s.commands[i]
			switch c.opcode {
			case opProducer, opZombie:
				name = max(name, int64(len(c.Args[0])))
			case opCluster:
				replicas += int64(argInt(c, "replicas", 1))
			case opSend:
				n := sendBytes(int64(argInt(c, "records", 1)), int64(argInt(c, "bytes", defaultSendBytes)), name)
				if n > MaxBatchBytes {
					t.Fatalf("line %d: a batch of up to %d bytes parsed", c.Line, n)
				}
				run += n
			}
		}
		if run*replicas > MaxRunBytes {
			t.Fatalf("%d bytes sent × %d replicas parsed", run, replicas)
		}
	})
}
