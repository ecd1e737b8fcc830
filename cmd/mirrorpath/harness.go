// The helpers the harness commands share: where the module is, progress
// on stderr, go test's output read for a report.

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// moduleRoot returns dir, or the nearest directory at or above the current
// one that holds a go.mod.
func moduleRoot(dir string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
			return "", fmt.Errorf("%s holds no go.mod", dir)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s (use --dir)", wd)
		}
	}
}

// progress prints "<cmd>: <what> ..." and, every 10 s until the returned
// function is called, a heartbeat with the elapsed time and status().
func progress(stderr io.Writer, cmd, what string, status func() string) func(result string) {
	start := time.Now()
	fmt.Fprintf(stderr, "%s: %s ...\n", cmd, what)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s := ""
				if status != nil {
					s = ", " + status()
				}
				fmt.Fprintf(stderr, "%s:   %s: %s elapsed%s\n", cmd, what, time.Since(start).Round(time.Second), s)
			}
		}
	}()
	return func(result string) {
		close(stop)
		wg.Wait()
		fmt.Fprintf(stderr, "%s: %s: %s (%s)\n", cmd, what, result, time.Since(start).Round(100*time.Millisecond))
	}
}

// displayPath is path relative to the module root when it lies inside it,
// else path itself.
func displayPath(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel + string(filepath.Separator)
	}
	return path
}

// goVersion is the toolchain go runs with in dir (its GOVERSION), else
// the one this binary was built with.
func goVersion(dir string) string {
	cmd := exec.Command("go", "env", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// failLines picks the lines of go test output that explain a failure, at
// most n of them joined by " / "; when none of them is a test failure line
// (go test refusing a flag, say) it is the first n lines of the output.
func failLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "---") || strings.Contains(l, "panic:") || strings.Contains(l, ".go:") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	if len(out) == 0 {
		return firstLines(s, n)
	}
	return firstLines(strings.Join(out, "\n"), n)
}

// firstLines joins the first n non-empty lines of s with " / ".
func firstLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	if len(out) == 0 {
		return "(no output)"
	}
	return strings.Join(out, " / ")
}
