package scenario

import (
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

const fullScript = `# every command once
cluster A id=0f0e0d0c-0b0a-0908-0706-050403020100 replicas=3 fetch-bytes=100 pid-start=5
cluster B id=AAECAwQFBgcICQoLDA0ODw segment-bytes=1 retain-segments=2
topic t partitions=2
mirror B from A topic=t
producer p on A transactional=tx1 pid=5 epoch=3
producer q on B idempotent
producer r on B
producer o on B old-format
init p
zombie z of p
send p t/1 records=10 seq=0 epoch=3 bytes=0
begin p
add p t/0
commit p
abort p
group g on A
join g m1 instance=i1
leave g m1
rebalance g
offsets p g - generation=-1
sync
sync B
fail A
recover A
fault B at=barrier times=100
stop B topic=t variant=truncate
restart B
elect B t/0
restart B unclean
repoint q to A
pause A t/0 replica=1
resume A t/0 replica=1
elect A t/1 replica=2 unclean
topic c compacted
clean B c/0
set has-producer-id=stock crc-fix=patch
expect strategy=barrier ok
expect strategy=negate modes=M4,ERR,M1
`

func TestParseAll(t *testing.T) {
	s, err := Parse("all.scn", []byte(fullScript))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.commands), 38; got != want {
		t.Fatalf("commands = %d, want %d", got, want)
	}
	seen := map[opcode]bool{}
	for i, c := range s.commands {
		seen[c.opcode] = true
		if c.Step != i+1 || c.Line != i+2 {
			t.Errorf("command %d (%s): step %d line %d", i, c.opcode, c.Step, c.Line)
		}
	}
	for o := opcode(1); o < opCount; o++ {
		if !seen[o] {
			t.Errorf("command %s not exercised", o)
		}
	}
	c := s.commands[0]
	if !reflect.DeepEqual(c.Args, []string{"A"}) || len(c.keyValue) != 4 {
		t.Errorf("cluster: %+v", c)
	}
	if m := s.commands[3]; !reflect.DeepEqual(m.Args, []string{"B", "A"}) {
		t.Errorf("mirror args = %q, want [B A]", m.Args)
	}
	ex := s.Expects()
	if len(ex) != 2 || ex[0].Strategy != "barrier" || len(ex[0].Codes) != 0 ||
		!reflect.DeepEqual(ex[1].Codes, []Code{CodeM1, CodeM4, CodeERR}) || ex[1].Line != 39 {
		t.Errorf("expects = %+v", ex)
	}
	if set := s.Settings(); set["has-producer-id"] != "stock" || set["crc-fix"] != "patch" {
		t.Errorf("settings = %v", set)
	}
}

func TestClusterIDSpellings(t *testing.T) {
	a, err := parseClusterID("00010203-0405-0607-0809-0a0b0c0d0e0f")
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseClusterID("AAECAwQFBgcICQoLDA0ODw")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("RFC text %x != base64 %x", a, b)
	}
	if a1, a2 := DefaultClusterID("A"), DefaultClusterID("A"); a1 != a2 || a1 == DefaultClusterID("B") {
		t.Error("default ids not stable and distinct")
	}
}

func TestParseErrors(t *testing.T) {
	const head = "cluster A\ncluster B\ntopic t partitions=2\nproducer p on A\nproducer x on A transactional=tx\ngroup g on A\n"
	cases := []struct {
		line string
		kind error
		msg  string
	}{
		{"frobnicate A", ErrSyntax, `unknown command "frobnicate"`},
		{"cluster", ErrSyntax, "cluster: missing name"},
		{"cluster C replicas=0", ErrSyntax, `replicas="0": want a number from 1`},
		{"cluster C replicas=x", ErrSyntax, "want a number"},
		{"cluster C replicas=10", ErrSyntax, "replicas=10 above the limit 9"},
		{"topic u partitions=65", ErrSyntax, "above the limit 64"},
		{"send p t/0 records=10001", ErrSyntax, "above the limit 10000"},
		{"send p t/0 bytes=65537", ErrSyntax, "above the limit 65536"},
		{"cluster C id=nope", ErrSyntax, "want a UUID"},
		{"cluster C bogus=1", ErrSyntax, `unknown argument "bogus"`},
		{"cluster C segment-bytes=0", ErrSyntax, `segment-bytes="0": want a number from 1`},
		{"cluster C retain-segments=1001", ErrSyntax, "retain-segments=1001 above the limit 1000"},
		{"add p t/0", ErrReference, "not transactional"},
		{"producer o on A old-format pid=3", ErrSyntax, "old-format excludes pid"},
		{"producer o on A acks=1 transactional=t2", ErrSyntax, "acks=1 excludes transactional (idempotence requires acks=all)"},
		{"producer o on A acks=1 idempotent", ErrSyntax, "acks=1 excludes idempotent"},
		{"producer o on A acks=1 pid=3", ErrSyntax, "acks=1 excludes pid"},
		{"producer o on A acks=0", ErrSyntax, "want 1|all"},
		{"producer o on A old-format transactional=t2", ErrSyntax, "old-format excludes transactional"},
		{"cluster C replicas=1 replicas=2", ErrSyntax, "replicas given twice"},
		{"cluster C extra", ErrSyntax, `unexpected word "extra"`},
		{"cluster C/1", ErrSyntax, `bad name "C/1"`},
		{"cluster A", ErrReference, `cluster "A" declared twice`},
		{"topic t", ErrReference, `topic "t" declared twice`},
		{"mirror B to A", ErrSyntax, `want "from", got "to"`},
		{"mirror B from Z", ErrReference, `unknown cluster "Z"`},
		{"mirror B from B", ErrReference, "cannot mirror itself"},
		{"mirror B from A topic=u", ErrReference, `unknown topic "u"`},
		{"producer q on Z", ErrReference, `unknown cluster "Z"`},
		{"producer p on A", ErrReference, `producer "p" declared twice`},
		{"producer q on A idempotent transactional=t", ErrSyntax, "exclude each other"},
		{"producer q on A epoch=40000", ErrSyntax, "want an int16"},
		{"producer q on A pid=9223372036854775808", ErrSyntax, "want an int64"},
		{"send p t/2", ErrReference, `topic "t" has 2 partitions, no 2`},
		{"send p u/0", ErrReference, `unknown topic "u"`},
		{"send p t", ErrSyntax, "want TOPIC/N"},
		{"send p t/01", ErrSyntax, "bad partition number"},
		{"send nobody t/0", ErrReference, `unknown producer "nobody"`},
		{"send p t/0 seq=2147483648", ErrSyntax, "want an int32"},
		{"begin p", ErrReference, `producer "p" is not transactional`},
		{"offsets p g m1", ErrReference, "not transactional"},
		{"offsets x h m1", ErrReference, `unknown group "h"`},
		{"join h m1", ErrReference, `unknown group "h"`},
		{"zombie p of x", ErrReference, `producer "p" declared twice`},
		{"fault B", ErrSyntax, "fault: missing at="},
		{"fault B at=never", ErrSyntax, "want fetcher|abort|epoch|marker|persist|barrier"},
		{"stop B variant=maybe", ErrSyntax, "want abort|truncate"},
		{"elect A t/5", ErrReference, "no 5"},
		{"set", ErrSyntax, "set: want KEY=VALUE"},
		{"set crc-fix=fast", ErrSyntax, `crc-fix="fast"`},
		{"set colour=red", ErrSyntax, `unknown option "colour"`},
		{"expect strategy=barrier", ErrSyntax, "exactly one of ok and modes="},
		{"expect strategy=barrier ok modes=M1", ErrSyntax, "exactly one of ok and modes="},
		{"expect ok", ErrSyntax, "missing strategy="},
		{"expect strategy=best ok", ErrSyntax, "want one of verbatim"},
		{"expect strategy=barrier modes=M9", ErrSyntax, `unknown code "M9"`},
		{"sync B C", ErrSyntax, `unexpected word "C"`},
		{"sync Z", ErrReference, `unknown cluster "Z"`},
		{"pause A t/0 replica=1", ErrReference, `cluster "A" has 1 replicas, no replica 1`},
		{"elect A t/0 replica=3", ErrReference, "no replica 3"},
		{"resume A t/0", ErrSyntax, "missing replica="},
		{"repoint p to Z", ErrReference, `unknown cluster "Z"`},
		{"mirror B from A align=zero", ErrSyntax, "want divergence|scratch"},
		{"clean A t/0", ErrReference, `topic "t" is not compacted`},
		{"restart A clean", ErrSyntax, `"clean"`},
		{"send p t/0 " + strings.Repeat("x", MaxLineBytes), ErrSyntax, "line longer than"},
	}
	for _, tc := range cases {
		src := head + "# comment\n\n" + tc.line + "\n"
		_, err := Parse("f.scn", []byte(src))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: err = %v, want *Error", tc.line, err)
			continue
		}
		if !errors.Is(err, tc.kind) {
			t.Errorf("%q: %v is not %v", tc.line, err, tc.kind)
		}
		if want := "f.scn:9: "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error %q, want prefix %q and %q", tc.line, err, want, tc.msg)
		}
	}
}

func TestParseUseBeforeDeclare(t *testing.T) {
	_, err := Parse("f.scn", []byte("send p t/0\ncluster A\ntopic t\nproducer p on A\n"))
	if err == nil || err.Error() != `f.scn:1: send: unknown producer "p"` {
		t.Fatalf("err = %v", err)
	}
}

func TestFormatRoundTrip(t *testing.T) {
	s, err := Parse("all.scn", []byte(fullScript))
	if err != nil {
		t.Fatal(err)
	}
	checkRoundTrip(t, s)
}

func checkRoundTrip(t *testing.T, s *Script) {
	t.Helper()
	text := s.Format()
	s2, err := Parse(s.File, text)
	if err != nil {
		t.Fatalf("reparse of\n%s: %v", text, err)
	}
	if len(s2.commands) != len(s.commands) {
		t.Fatalf("reparse: %d commands, want %d", len(s2.commands), len(s.commands))
	}
	for i := range s.commands {
		a, b := s.commands[i], s2.commands[i]
		a.Line, b.Line = 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("command %d: %+v != %+v", i, a, b)
		}
	}
	if string(s2.Format()) != string(text) {
		t.Fatalf("format not stable:\n%s\n%s", text, s2.Format())
	}
}

// FuzzParse: no panic on any input; a script that parses round-trips through
// Format.
func FuzzParse(f *testing.F) {
	f.Add([]byte(fullScript))
	f.Add([]byte("cluster A\ntopic t partitions=3\nproducer p on A\nsend p t/2 records=5\n"))
	f.Add([]byte("expect strategy=bitfield modes=M1,M2\n"))
	f.Add([]byte("cluster A\x00\n\t# x\r\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("fuzz.scn", src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not a positioned *Error", err)
			}
			return
		}
		checkRoundTrip(t, s)
	})
}

// TestParseReaderLimits: a file is read line by line and refused at the
// line that passes MaxLineBytes or MaxFileBytes, without reading further: an
// endless reader (a device like /dev/zero, or blank lines forever) fails.
func TestParseReaderLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		r    io.Reader
		kind error
		want string
	}{
		{"zeros", endless{0}, ErrSyntax, "f.scn:1: line longer than 4096 bytes"},
		{"newlines", endless{'\n'}, ErrLimit, "f.scn:" + strconv.Itoa(MaxFileBytes+1) + ": file longer than 1048576 bytes"},
		{"comment lines", io.MultiReader(strings.NewReader("cluster A\n"), endless{'#'}), ErrSyntax, "f.scn:2: line longer than 4096 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseReader("f.scn", io.LimitReader(c.r, 8*MaxFileBytes))
			if !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Fatalf("err %v, want %q (%v)", err, c.want, c.kind)
			}
		})
	}
	// A line of exactly MaxLineBytes, and one without a final newline, parse.
	long := "sync" + strings.Repeat(" ", MaxLineBytes-len("sync"))
	for _, src := range []string{"cluster A\n" + long + "\n", "cluster A\n" + long} {
		if s, err := Parse("f.scn", []byte(src)); err != nil || len(s.commands) != 2 {
			t.Fatalf("%d-byte line: %v", len(long), err)
		}
	}
	if _, err := Parse("f.scn", []byte("cluster A\n"+long+" \n")); err == nil || !strings.Contains(err.Error(), "f.scn:2: line longer") {
		t.Fatalf("a line of MaxLineBytes+1: %v", err)
	}
}

// endless is a reader of one byte repeated forever.
type endless struct{ b byte }

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	return len(p), nil
}
