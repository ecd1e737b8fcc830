package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/cpu"
)

// cpuModel is the processor's model name from /proc/cpuinfo (Linux), with
// its vendor, family and model, or "" (the caller then takes go test's
// "cpu:" line).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return cpuModelFrom(f)
}

// cpuModelFrom reads the first processor of a /proc/cpuinfo text: its model
// name, then "(vendor_id family F model M)" in hex, as in AMD's and Intel's
// manuals, where the three are there. A model name alone can hide the
// generation ("AMD EPYC" on a VM), which decides codec's CRC kernel.
func cpuModelFrom(r io.Reader) string {
	var name, vendor, family, model string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if strings.TrimSpace(sc.Text()) == "" && name != "" {
				break // the end of the first processor
			}
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "model name":
			name = v
		case "vendor_id":
			vendor = v
		case "cpu family":
			family = v
		case "model":
			model = v
		}
	}
	fam, err1 := strconv.Atoi(family)
	mod, err2 := strconv.Atoi(model)
	if name == "" || vendor == "" || err1 != nil || err2 != nil {
		return name
	}
	return fmt.Sprintf("%s (%s family 0x%x model 0x%x)", name, vendor, fam, mod)
}

// cpuFeatures lists the CPU features codec's CRC-32C dispatch reads
// (internal/crc32c/copy_amd64.go, fold_amd64.go), each as present or "no-" absent.
func cpuFeatures() []string {
	if runtime.GOARCH != "amd64" {
		return nil // codec has kernels for amd64 only; elsewhere hash/crc32 chooses
	}
	var out []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"sse4.2", cpu.X86.HasSSE42}, {"pclmulqdq", cpu.X86.HasPCLMULQDQ}, {"avx2", cpu.X86.HasAVX2},
		{"avx512f", cpu.X86.HasAVX512F}, {"avx512vl", cpu.X86.HasAVX512VL}, {"vpclmulqdq", cpu.X86.HasAVX512VPCLMULQDQ},
	} {
		if f.has {
			out = append(out, f.name)
		} else {
			out = append(out, "no-"+f.name)
		}
	}
	return out
}

// gitCommit is the short hash of HEAD in dir, "+dirty" when tracked files
// have changes, or "unknown" outside a git checkout.
func gitCommit(dir string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	st := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	st.Dir = dir
	if s, err := st.Output(); err == nil && len(strings.TrimSpace(string(s))) > 0 {
		c += "+dirty"
	}
	return c
}
