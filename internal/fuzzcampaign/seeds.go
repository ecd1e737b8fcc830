package fuzzcampaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ErrSeeds marks a failure to capture a package's seeds.
var ErrSeeds = errors.New("fuzzcampaign: capturing seeds failed")

// seedDirEnv names the directory the capture hook writes seeds into.
const seedDirEnv = "MIRRORPATH_SEED_DIR"

// A target's f.Add seeds exist only while its test runs, so they are
// captured by running it: captureSeeds builds each package's tests with a
// `go test -overlay` that, in a copy of the file declaring FuzzX (the
// module's files are not touched), wraps the function given to f.Fuzz in a
// hook. Run without -fuzz, go test calls that function once per seed — every
// f.Add seed and every testdata/fuzz/FuzzX file — and the hook writes the
// arguments, in the "go test fuzz v1" format, to $MIRRORPATH_SEED_DIR/FuzzX/
// under the seed's subtest name (seed#0 → seed-0, a corpus file under its
// own name) before calling the target. The same overlay can add seeds:
// Extra's values are f.Add-ed by the hook, which is how a coverage run
// includes the fuzz cache's corpus.

// captured is what captureSeeds found for one target.
type captured struct {
	Target Target
	Dir    string   // DIR/FuzzX: one go test fuzz v1 file per seed
	Files  []string // sorted file names in Dir
}

// hookSource is the file the overlay adds to a package: the wrapper the
// rewritten f.Fuzz call goes through. It uses the standard library only, as
// it compiles inside the module under test.
const hookSource = `package %s

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

var _ = math.Float64frombits

var mirrorpathExtraSeeds = map[string][][]any{
%s}

func mirrorpathSeedHook(f *testing.F, fn any) any {
	for _, s := range mirrorpathExtraSeeds[f.Name()] {
		f.Add(s...)
	}
	dir := os.Getenv(%q)
	v := reflect.ValueOf(fn)
	if dir == "" || v.Kind() != reflect.Func {
		return fn
	}
	return reflect.MakeFunc(v.Type(), func(args []reflect.Value) []reflect.Value {
		t := args[0].Interface().(*testing.T)
		var b strings.Builder
		b.WriteString("go test fuzz v1\n")
		for _, a := range args[1:] {
			switch a.Kind() {
			case reflect.Slice:
				b.WriteString("[]byte(" + strconv.Quote(string(a.Bytes())) + ")")
			case reflect.String:
				b.WriteString("string(" + strconv.Quote(a.String()) + ")")
			case reflect.Bool:
				fmt.Fprintf(&b, "bool(%%t)", a.Bool())
			case reflect.Float32:
				fmt.Fprintf(&b, "math.Float32frombits(0x%%x)", math.Float32bits(float32(a.Float())))
			case reflect.Float64:
				fmt.Fprintf(&b, "math.Float64frombits(0x%%x)", math.Float64bits(a.Float()))
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				fmt.Fprintf(&b, "%%s(%%d)", a.Kind(), a.Int())
			default:
				fmt.Fprintf(&b, "%%s(%%d)", a.Kind(), a.Uint())
			}
			b.WriteByte('\n')
		}
		target, name, _ := strings.Cut(t.Name(), "/")
		name = strings.NewReplacer("/", "_", "#", "-").Replace(name)
		d := filepath.Join(dir, target)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("seed hook: %%v", err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(b.String()), 0o644); err != nil {
			t.Fatalf("seed hook: %%v", err)
		}
		return v.Call(args)
	}).Interface()
}
`

// overlay is a go build -overlay description.
type overlay struct {
	Replace map[string]string
}

// buildOverlay writes, into tmp, the rewritten copies of the files that
// declare the targets of one package and a hook file per Go package name
// among them, and returns the overlay JSON's path. extra holds seeds the
// hook adds per target name.
func buildOverlay(dir string, targets []Target, extra map[string][][]any, tmp string) (string, error) {
	want := map[string]bool{}
	for _, t := range targets {
		want[t.Name] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	ov := overlay{Replace: map[string]string{}}
	pkgNames := map[string]bool{}
	found := map[string]bool{}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		out, pkg, names, err := rewriteFuzzCalls(path, src, want)
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			continue
		}
		for _, n := range names {
			found[n] = true
		}
		pkgNames[pkg] = true
		cp := filepath.Join(tmp, fmt.Sprintf("%d_%s", len(ov.Replace), filepath.Base(path)))
		if err := os.WriteFile(cp, out, 0o644); err != nil {
			return "", err
		}
		ov.Replace[path] = cp
	}
	for _, t := range targets {
		if !found[t.Name] {
			return "", fmt.Errorf("%w: %s: no f.Fuzz call found in func %s of %s/*_test.go", ErrSeeds, t.Rel, t.Name, dir)
		}
	}
	var lits strings.Builder
	for _, t := range targets {
		if len(extra[t.Name]) == 0 {
			continue
		}
		fmt.Fprintf(&lits, "\t%q: {\n", t.Name)
		for _, seed := range extra[t.Name] {
			var args []string
			for _, v := range seed {
				lit, err := goLiteral(v)
				if err != nil {
					return "", err
				}
				args = append(args, lit)
			}
			fmt.Fprintf(&lits, "\t\t{%s},\n", strings.Join(args, ", "))
		}
		lits.WriteString("\t},\n")
	}
	for pkg := range pkgNames {
		src := fmt.Sprintf(hookSource, pkg, lits.String(), seedDirEnv)
		hook := filepath.Join(tmp, "hook_"+pkg+".go")
		if err := os.WriteFile(hook, []byte(src), 0o644); err != nil {
			return "", err
		}
		ov.Replace[filepath.Join(dir, "zz_mirrorpath_seed_hook_"+pkg+"_test.go")] = hook
	}
	js, err := json.Marshal(ov)
	if err != nil {
		return "", err
	}
	p := filepath.Join(tmp, "overlay.json")
	return p, os.WriteFile(p, js, 0o644)
}

// rewriteFuzzCalls returns src with every `f.Fuzz(fn)` inside the wanted
// FuzzX functions (f being the function's *testing.F parameter) turned into
// `f.Fuzz(mirrorpathSeedHook(f, fn))`, the file's package name, and the
// names of the functions rewritten.
func rewriteFuzzCalls(path string, src []byte, want map[string]bool) ([]byte, string, []string, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, "", nil, fmt.Errorf("%w: %v", ErrSeeds, err)
	}
	type edit struct {
		at   int
		text string
	}
	var edits []edit
	var names []string
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !want[fd.Name.Name] || fd.Body == nil || len(fd.Type.Params.List) != 1 ||
			len(fd.Type.Params.List[0].Names) != 1 {
			continue
		}
		fname := fd.Type.Params.List[0].Names[0].Name
		n := 0
		ast.Inspect(fd.Body, func(node ast.Node) bool {
			call, ok := node.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Fuzz" {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != fname {
				return true
			}
			edits = append(edits,
				edit{fset.Position(call.Args[0].Pos()).Offset, "mirrorpathSeedHook(" + fname + ", "},
				edit{fset.Position(call.Args[0].End()).Offset, ")"})
			n++
			return true
		})
		if n > 0 {
			names = append(names, fd.Name.Name)
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	out := append([]byte(nil), src...)
	for _, e := range edits {
		out = append(out[:e.at], append([]byte(e.text), out[e.at:]...)...)
	}
	return out, file.Name.Name, names, nil
}

// captureSeeds runs the seeds of targets (one go test per package, without
// -fuzz) through the hook and writes them under outDir/FuzzX/. extra, keyed
// by target name, holds more seeds to add (nil for none). A package whose
// test fails is reported in failed with go's output; what its seeds wrote
// before the failure is kept. err is set when nothing could be run.
func captureSeeds(ctx context.Context, modDir string, targets []Target, extra map[string][][]any, outDir string) (got []captured, failed map[string]error, err error) {
	tmp, err := os.MkdirTemp("", "mirrorpath-seeds-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, err
	}
	failed = map[string]error{}
	for i, pkg := range byPackage(targets) {
		ptmp := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.MkdirAll(ptmp, 0o755); err != nil {
			return nil, nil, err
		}
		ov, err := buildOverlay(pkg[0].Dir, pkg, extra, ptmp)
		if err != nil {
			failed[pkg[0].ImportPath] = err
			continue
		}
		if out, err := goTestOverlay(ctx, modDir, ov, pkg, outDir, nil); err != nil {
			failed[pkg[0].ImportPath] = fmt.Errorf("%w: %s: go test: %v\n%s", ErrSeeds, pkg[0].Rel, err, tailLines(out, 20))
		}
	}
	for _, t := range targets {
		c := captured{Target: t, Dir: filepath.Join(outDir, t.Name)}
		c.Files = listFiles(c.Dir)
		sort.Strings(c.Files)
		got = append(got, c)
	}
	return got, failed, nil
}

// goTestOverlay runs the seeds of one package's targets with the hook
// overlay; extraArgs go before the package (e.g. -coverprofile).
func goTestOverlay(ctx context.Context, modDir, overlayPath string, pkg []Target, seedDir string, extraArgs []string) ([]byte, error) {
	var names []string
	for _, t := range pkg {
		names = append(names, regexp.QuoteMeta(t.Name))
	}
	// -vet=off: vet's tests check rejects f.Fuzz(hook(...)) ("argument to Fuzz
	// must be a function"); the module's own go vet covers the real files.
	args := []string{"test", "-overlay", overlayPath, "-vet=off", "-count=1", "-run", "^(" + strings.Join(names, "|") + ")$"}
	args = append(args, extraArgs...)
	args = append(args, pkg[0].ImportPath)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = modDir
	cmd.Env = os.Environ()
	if seedDir != "" {
		cmd.Env = append(cmd.Env, seedDirEnv+"="+seedDir)
	}
	return cmd.CombinedOutput()
}

// byPackage groups targets by package, in the order they come.
func byPackage(targets []Target) [][]Target {
	var out [][]Target
	idx := map[string]int{}
	for _, t := range targets {
		i, ok := idx[t.ImportPath]
		if !ok {
			i = len(out)
			idx[t.ImportPath] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], t)
	}
	return out
}

func tailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(bytes.TrimSpace(b)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return indent(strings.Join(lines, "\n"))
}
