// Package docs holds the tests that keep the documents true to the code.
package docs

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mirrorpath/mirrorpath/"

// moduleImports returns, for every package directory of the module below
// root, the module packages its source files import (the union over build
// tags), keyed by import path relative to the module. A package whose
// source files declare nothing (a doc.go beside tests: fuzz, bench) is keyed
// "path (tests)" and its test files' imports are used.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	type pkg struct{ src, test map[string]bool }
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "docs" {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		k := pkgs[rel]
		if k == nil {
			k = &pkg{map[string]bool{}, map[string]bool{}}
			pkgs[rel] = k
		}
		set := k.src
		if strings.HasSuffix(name, "_test.go") {
			set = k.test
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); !ok || g.Tok != token.IMPORT || strings.HasSuffix(name, "_test.go") {
				set[""] = true // code of this kind exists
			}
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(ip, module) {
				set[strings.TrimPrefix(ip, module)] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for rel, k := range pkgs {
		key, set := rel, k.src
		if !k.src[""] {
			key, set = rel+" (tests)", k.test
		}
		deps := []string{}
		for d := range set {
			if d != "" && d != rel {
				deps = append(deps, d)
			}
		}
		slices.Sort(deps)
		out[key] = deps
	}
	return out
}

// diagram reads the ```deps block of design.md: "package: import import …".
func diagram(t *testing.T, file string) map[string][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		switch {
		case s == "```deps":
			in = true
		case in && s == "```":
			return out
		case in:
			name, deps, ok := strings.Cut(s, ":")
			if !ok {
				t.Fatalf("%s:%d: %q is not \"package: imports\"", file, line, s)
			}
			if _, dup := out[name]; dup {
				t.Fatalf("%s:%d: %s listed twice", file, line, name)
			}
			list := strings.Fields(deps)
			if !slices.IsSorted(list) {
				t.Errorf("%s:%d: %s's imports are not sorted", file, line, name)
			}
			out[name] = list
		}
	}
	t.Fatalf("%s: no complete ```deps block", file)
	return nil
}

// TestDesignDiagram holds the dependency block of docs/design.md to the
// import lists of the module's source files: every package is listed, with
// exactly the module packages it imports.
func TestDesignDiagram(t *testing.T) {
	got := moduleImports(t, "..")
	doc := diagram(t, "design.md")
	for name, deps := range got {
		want, ok := doc[name]
		if !ok {
			t.Errorf("design.md does not list package %s (imports: %s)", name, strings.Join(deps, " "))
			continue
		}
		if !slices.Equal(want, deps) {
			t.Errorf("design.md: %s imports %q; the code imports %q", name, want, deps)
		}
	}
	for name := range doc {
		if _, ok := got[name]; !ok {
			t.Errorf("design.md lists %s, which is not a package of the module", name)
		}
	}
	if _, ok := got["codec"]; !ok {
		t.Fatal("the walk found no codec package: wrong module root")
	}
}
