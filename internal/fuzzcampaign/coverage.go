package fuzzcampaign

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrCoverage marks a failure to measure the corpus coverage.
var ErrCoverage = errors.New("fuzzcampaign: corpus coverage failed")

// CoverageOptions configure Coverage.
type CoverageOptions struct {
	OutDir string // coverage.out, coverage.html, coverage.txt
	// Cache adds the corpus go test -fuzz grew in $(go env GOCACHE)/fuzz to
	// the seeds (go test reads it only while fuzzing).
	Cache bool
}

// CoverageResult says what Coverage wrote.
type CoverageResult struct {
	Profile, HTML, Func string         // paths
	Total               string         // "61.3%", from go tool cover -func
	CacheSeeds          map[string]int // per target name, corpus entries taken from the cache
	Failed              map[string]error
}

// Coverage runs every target's seeds (f.Add, testdata/fuzz and, with
// opt.Cache, the fuzz cache's corpus) once without -fuzz under
// -coverprofile with -coverpkg set to the whole module, merges the
// packages' profiles and renders them with go tool cover: an HTML report
// and the per-function table. A package whose run fails is reported in
// Failed and left out.
func Coverage(ctx context.Context, modDir string, targets []Target, opt CoverageOptions) (*CoverageResult, error) {
	mod, err := run(ctx, modDir, "go", "list", "-m")
	if err != nil {
		return nil, fmt.Errorf("%w: go list -m: %v", ErrCoverage, err)
	}
	modPath := strings.TrimSpace(strings.Split(string(mod), "\n")[0])
	res := &CoverageResult{CacheSeeds: map[string]int{}, Failed: map[string]error{}}
	extra := map[string][][]any{}
	if opt.Cache {
		gc, err := run(ctx, modDir, "go", "env", "GOCACHE")
		if err != nil {
			return nil, fmt.Errorf("%w: go env GOCACHE: %v", ErrCoverage, err)
		}
		for _, t := range targets {
			dir := filepath.Join(strings.TrimSpace(string(gc)), "fuzz", t.ImportPath, t.Name)
			for _, name := range listFiles(dir) {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					continue
				}
				if vals, err := parseCorpusFile(b); err == nil {
					extra[t.Name] = append(extra[t.Name], vals)
				}
			}
			res.CacheSeeds[t.Name] = len(extra[t.Name])
		}
	}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "mirrorpath-cover-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var profiles []string
	for i, pkg := range byPackage(targets) {
		ptmp := filepath.Join(tmp, strconv.Itoa(i))
		if err := os.MkdirAll(ptmp, 0o755); err != nil {
			return nil, err
		}
		pe := map[string][][]any{}
		for _, t := range pkg {
			pe[t.Name] = extra[t.Name]
		}
		ov, err := buildOverlay(pkg[0].Dir, pkg, pe, ptmp)
		if err != nil {
			res.Failed[pkg[0].ImportPath] = err
			continue
		}
		prof := filepath.Join(ptmp, "cover.out")
		out, err := goTestOverlay(ctx, modDir, ov, pkg, "", []string{"-coverprofile", prof, "-coverpkg", modPath + "/..."})
		if err != nil {
			res.Failed[pkg[0].ImportPath] = fmt.Errorf("%w: %s: go test: %v\n%s", ErrCoverage, pkg[0].Rel, err, tailLines(out, 20))
			continue
		}
		profiles = append(profiles, prof)
	}
	if len(profiles) == 0 {
		return nil, fmt.Errorf("%w: no package's seeds ran (%d failed)", ErrCoverage, len(res.Failed))
	}
	res.Profile = filepath.Join(opt.OutDir, "coverage.out")
	if err := mergeProfiles(profiles, res.Profile); err != nil {
		return nil, err
	}
	res.HTML = filepath.Join(opt.OutDir, "coverage.html")
	if _, err := run(ctx, modDir, "go", "tool", "cover", "-html", res.Profile, "-o", res.HTML); err != nil {
		return nil, fmt.Errorf("%w: go tool cover -html: %v", ErrCoverage, err)
	}
	fn, err := run(ctx, modDir, "go", "tool", "cover", "-func", res.Profile)
	if err != nil {
		return nil, fmt.Errorf("%w: go tool cover -func: %v", ErrCoverage, err)
	}
	res.Func = filepath.Join(opt.OutDir, "coverage.txt")
	if err := os.WriteFile(res.Func, fn, 0o644); err != nil {
		return nil, err
	}
	res.Total = totalCoverage(string(fn))
	return res, nil
}

// totalCoverage returns the percentage of go tool cover -func's total line.
func totalCoverage(funcOut string) string {
	for _, line := range strings.Split(funcOut, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "total:" {
			return f[len(f)-1]
		}
	}
	return ""
}

// mergeProfiles merges coverage profiles of one mode: a block is counted
// (set mode: covered) when any profile counts it. Each package's run lists
// every block of -coverpkg, so the same block appears in every profile.
func mergeProfiles(paths []string, out string) error {
	mode := ""
	counts := map[string]int64{}
	var order []string
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if m, ok := strings.CutPrefix(line, "mode: "); ok {
				if mode != "" && m != mode {
					f.Close()
					return fmt.Errorf("%w: %s: mode %s, earlier profiles %s", ErrCoverage, p, m, mode)
				}
				mode = m
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			if i < 0 {
				continue
			}
			c, err := strconv.ParseInt(line[i+1:], 10, 64)
			if err != nil {
				f.Close()
				return fmt.Errorf("%w: %s:%d: bad count in %q", ErrCoverage, p, n, line)
			}
			key := line[:i]
			old, seen := counts[key]
			if !seen {
				order = append(order, key)
			}
			if mode == "set" {
				counts[key] = max(old, c)
			} else {
				counts[key] = old + c
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return err
		}
	}
	sort.Strings(order)
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "mode: %s\n", mode)
	for _, k := range order {
		fmt.Fprintf(bw, "%s %d\n", k, counts[k])
	}
	if err := bw.Flush(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
