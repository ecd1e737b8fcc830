package conform

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// librdkafkaMockSource is a C program that starts librdkafka's mock cluster
// (rdkafka_mock.h) with one broker, prints its address and stays up until
// its stdin closes.
//
//go:embed testdata/librdkafka-mock/mock.c
var librdkafkaMockSource []byte

// librdkafkaMockHeader is the header the mock cluster's program includes
// (Debian's librdkafka-dev installs it).
const librdkafkaMockHeader = "/usr/include/librdkafka/rdkafka_mock.h"

// ErrNoLibrdkafka is matched by StartLibrdkafkaMock's error when the C
// compiler or librdkafka's development files are absent.
var ErrNoLibrdkafka = errors.New("conform: no C compiler or no librdkafka-dev")

// LibrdkafkaMock is librdkafka's mock cluster, one broker on 127.0.0.1, run
// as a child process.
type LibrdkafkaMock struct {
	Addr    string
	Version string // librdkafka's, as the library reports it
	cmd     *exec.Cmd
	stdin   io.WriteCloser
}

// StartLibrdkafkaMock builds the mock cluster's program in dir with the
// system C compiler (cc, or $CC) and -lrdkafka, starts it, and waits up to
// timeout for its address.
func StartLibrdkafkaMock(dir string, timeout time.Duration) (*LibrdkafkaMock, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	ccPath, err := exec.LookPath(cc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrdkafka, err)
	}
	if _, err := os.Stat(librdkafkaMockHeader); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLibrdkafka, err)
	}
	src, bin := filepath.Join(dir, "mock.c"), filepath.Join(dir, "librdkafka-mock")
	if err := os.WriteFile(src, librdkafkaMockSource, 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(ccPath, "-O1", "-o", bin, src, "-lrdkafka").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("conform: building the librdkafka mock: %v: %s", err, out)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("conform: starting the librdkafka mock: %w", err)
	}
	m := &LibrdkafkaMock{cmd: cmd, stdin: stdin}
	lines := make(chan [2]string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		addr, _ := r.ReadString('\n')
		version, _ := r.ReadString('\n')
		lines <- [2]string{strings.TrimSpace(addr), strings.TrimSpace(version)}
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case l := <-lines:
		a := l[0]
		if _, _, err := net.SplitHostPort(a); err != nil {
			m.Close()
			return nil, fmt.Errorf("conform: the librdkafka mock printed %q, not HOST:PORT", a)
		}
		m.Addr, m.Version = a, l[1]
		return m, nil
	case <-time.After(timeout):
		m.Close()
		return nil, fmt.Errorf("conform: the librdkafka mock printed no address in %v", timeout)
	}
}

// Close stops the mock: its stdin closes, and it is killed if it has not
// exited a second later.
func (m *LibrdkafkaMock) Close() {
	m.stdin.Close()
	done := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		_ = m.cmd.Process.Kill()
		<-done
	}
}

// Dial connects a Target to the mock.
func (m *LibrdkafkaMock) Dial(ctx context.Context, timeout time.Duration) (*Target, error) {
	return Dial(ctx, m.Addr, timeout)
}
