package docs

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The exported-API check. A library package's exported name (a func, type,
// var or const, or a method of an exported type) is in use when one of these
// holds:
//
//   - another package of the module names it: its source, or its tests,
//     since an exported name a second package's test calls cannot be
//     unexported without moving that test (fuzz/ and bench/, the
//     cross-package tests, are nothing but such uses). The package's own
//     tests, internal or external (package x_test), do not count: a name only
//     they need belongs in the package, lower-case, or in export_test.go;
//   - it is a type another package uses without naming it: the type of a
//     result, parameter, field, var or const that is in use;
//   - it is a constant of a type of its package that is in use, or one of a
//     const (…) block another of whose constants is in use: an enum's values
//     go with the enum, a table's rows (a header's offsets) with the table;
//   - it is an error var the package's own code returns or wraps: callers
//     classify the package's errors with errors.Is;
//   - it is a method of an interface in use (the interface's contract), or
//     one through which an interface declared elsewhere reaches the type
//     (String for fmt, Error, MarshalText for flag.TextVar, …), or one
//     implementing a method of its own package's interface that is in use;
//   - docs/design.md lists it as the package's API (apiSections).
//
// Struct fields are not checked: a field's export follows its struct's.

// apiName is one exported name of a library package.
type apiName struct {
	pkg    string // import path relative to the module: "psm"
	name   string // "Store", "Store.Add"
	method string // the method's name, "" for a package-level name
	obj    types.Object
	pos    string // file:line relative to the module root
	group  string // a constant's const (…) block, "" for anything else
}

// loadModule type-checks every package of the module with its tests, under
// -tags e2e so that the end-to-end tests' uses count (only test files carry
// that tag). The tests share one load of each module.
func loadModule(t *testing.T, root string) []*packages.Package {
	t.Helper()
	if pkgs, ok := loaded[root]; ok {
		return pkgs
	}
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedTypes |
			packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedForTest,
		Dir:        root,
		Tests:      true,
		BuildFlags: []string{"-tags=e2e"},
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		t.Fatalf("loading the module: %s", strings.Join(errs, "\n"))
	}
	loaded[root] = pkgs
	return pkgs
}

// loaded holds loadModule's results by root.
var loaded = map[string][]*packages.Package{}

// modRel returns path relative to the module mod ("example.com/m/"), and
// whether it is the module's.
func modRel(mod, path string) (string, bool) {
	return strings.CutPrefix(path, mod)
}

// objKey names a package-level object or a method ("psm.Store.Add") so that
// the copies one package gets in its test variants compare equal; "" for
// anything else (fields, locals, methods of anonymous interfaces).
func objKey(obj types.Object) string {
	if obj.Pkg() == nil {
		return ""
	}
	switch o := obj.(type) {
	case *types.Func:
		o = o.Origin()
		if recv := o.Signature().Recv(); recv != nil {
			named := namedOf(recv.Type())
			if named == nil {
				return ""
			}
			return o.Pkg().Path() + "." + named.Obj().Name() + "." + o.Name()
		}
	case *types.Var:
		if o.IsField() {
			return ""
		}
	}
	if obj.Pkg().Scope().Lookup(obj.Name()) != obj {
		return ""
	}
	return obj.Pkg().Path() + "." + obj.Name()
}

// namedOf returns the named type of t or *t, or nil.
func namedOf(t types.Type) *types.Named {
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	if n != nil {
		n = n.Origin()
	}
	return n
}

// libraryNames lists the exported names of the module's library packages
// (not main, not test-only), in package and source order.
func libraryNames(pkgs []*packages.Package, root, mod string) []apiName {
	var out []apiName
	for _, p := range pkgs {
		rel, ok := modRel(mod, p.PkgPath)
		if !ok || p.Name == "main" || p.ForTest != "" || len(p.GoFiles) == 0 || p.Types == nil {
			continue
		}
		pos := func(o types.Object) string {
			ps := p.Fset.Position(o.Pos())
			abs, _ := filepath.Abs(root)
			f, err := filepath.Rel(abs, ps.Filename)
			if err != nil {
				f = ps.Filename
			}
			return fmt.Sprintf("%s:%d", filepath.ToSlash(f), ps.Line)
		}
		groups := constGroups(p)
		var names []apiName
		scope := p.Types.Scope()
		for _, n := range scope.Names() {
			o := scope.Lookup(n)
			if !o.Exported() {
				continue
			}
			names = append(names, apiName{pkg: rel, name: n, obj: o, pos: pos(o), group: groups[o]})
			tn, ok := o.(*types.TypeName)
			if !ok || tn.IsAlias() {
				continue
			}
			named := tn.Type().(*types.Named)
			var methods []*types.Func
			for i := range named.NumMethods() {
				methods = append(methods, named.Method(i))
			}
			if it, ok := named.Underlying().(*types.Interface); ok {
				for i := range it.NumExplicitMethods() {
					methods = append(methods, it.ExplicitMethod(i))
				}
			}
			for _, m := range methods {
				if m.Exported() {
					names = append(names, apiName{pkg: rel, name: n + "." + m.Name(), method: m.Name(), obj: m, pos: pos(m)})
				}
			}
		}
		slices.SortFunc(names, func(a, b apiName) int { return strings.Compare(a.pos, b.pos) })
		out = append(out, names...)
	}
	return out
}

// constGroups returns, for each package-level constant declared in a
// parenthesized const block of more than one constant, the block's position.
func constGroups(p *packages.Package) map[types.Object]string {
	out := map[types.Object]string{}
	for _, f := range p.Syntax {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST || !g.Lparen.IsValid() || len(g.Specs) < 2 {
				continue
			}
			at := p.Fset.Position(g.Pos()).String()
			for _, spec := range g.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if o := p.TypesInfo.Defs[id]; o != nil {
						out[o] = at
					}
				}
			}
		}
	}
	return out
}

// crossUses returns the keys (objKey) of the names of module mod that a
// package other than their own names, in its code or its tests.
func crossUses(pkgs []*packages.Package, mod string) map[string]bool {
	used := map[string]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.TypesInfo == nil || strings.HasSuffix(p.ID, ".test") {
			return
		}
		own := strings.TrimSuffix(p.PkgPath, "_test")
		for _, obj := range p.TypesInfo.Uses {
			if obj.Pkg() == nil || obj.Pkg().Path() == own {
				continue
			}
			if _, ok := modRel(mod, obj.Pkg().Path()); !ok {
				continue
			}
			if k := objKey(obj); k != "" {
				used[k] = true
			}
		}
	})
	return used
}

// ownUses returns the keys (objKey) of the names a library package's own
// non-test code uses.
func ownUses(pkgs []*packages.Package) map[string]bool {
	used := map[string]bool{}
	for _, p := range pkgs {
		if p.ForTest != "" || p.TypesInfo == nil {
			continue
		}
		for id, obj := range p.TypesInfo.Uses {
			if obj.Pkg() != nil && obj.Pkg().Path() == p.PkgPath && !strings.HasSuffix(p.Fset.Position(id.Pos()).Filename, "_test.go") {
				if k := objKey(obj); k != "" {
					used[k] = true
				}
			}
		}
	}
	return used
}

// interfaces returns the named, non-generic interfaces of every package the
// module's packages import (directly or not), and the module's own, keyed by
// the package that declares them.
func interfaces(pkgs []*packages.Package) map[*types.Package][]*types.Named {
	out := map[*types.Package][]*types.Named{}
	var visit func(tp *types.Package)
	visit = func(tp *types.Package) {
		if _, ok := out[tp]; ok {
			return
		}
		out[tp] = nil
		scope := tp.Scope()
		for _, n := range scope.Names() {
			tn, ok := scope.Lookup(n).(*types.TypeName)
			if !ok {
				continue
			}
			named, ok := types.Unalias(tn.Type()).(*types.Named)
			if !ok || named.TypeParams().Len() > 0 {
				continue
			}
			if it, ok := named.Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
				out[tp] = append(out[tp], named)
			}
		}
		for _, im := range tp.Imports() {
			visit(im)
		}
	}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types != nil {
			visit(p.Types)
		}
	})
	return out
}

// stdProtocols are the predeclared error interface and the methods the
// standard library calls through anonymous interfaces (errors.Is, errors.As
// and errors.Unwrap).
var stdProtocols = []*types.Interface{
	types.Universe.Lookup("error").Type().Underlying().(*types.Interface),
	protocol("Unwrap", nil, types.Universe.Lookup("error").Type()),
	protocol("Unwrap", nil, types.NewSlice(types.Universe.Lookup("error").Type())),
	protocol("Is", types.Universe.Lookup("error").Type(), types.Typ[types.Bool]),
	protocol("As", types.Universe.Lookup("any").Type(), types.Typ[types.Bool]),
}

func protocol(name string, param, result types.Type) *types.Interface {
	var params []*types.Var
	if param != nil {
		params = append(params, types.NewParam(0, nil, "", param))
	}
	sig := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...),
		types.NewTuple(types.NewParam(0, nil, "", result)), false)
	it := types.NewInterfaceType([]*types.Func{types.NewFunc(0, nil, name, sig)}, nil)
	it.Complete()
	return it
}

// implements reports whether T or *T implements it.
func implements(named *types.Named, it *types.Interface) bool {
	return types.Implements(named, it) || types.Implements(types.NewPointer(named), it)
}

// unusedNames returns the library names no rule of the file comment puts in
// use, documented ones aside.
func unusedNames(names []apiName, pkgs []*packages.Package, mod string, documented func(apiName) bool) []apiName {
	inUse := crossUses(pkgs, mod)
	byKey := map[string]apiName{}
	for _, n := range names {
		byKey[objKey(n.obj)] = n
		if documented(n) {
			inUse[objKey(n.obj)] = true
		}
	}
	// Error vars the package's code returns or wraps.
	own := ownUses(pkgs)
	errType := types.Universe.Lookup("error").Type()
	for _, n := range names {
		if v, ok := n.obj.(*types.Var); ok && own[objKey(v)] && types.Implements(v.Type(), errType.Underlying().(*types.Interface)) {
			inUse[objKey(v)] = true
		}
	}
	// Types reached through what is in use, and the methods of interfaces in
	// use, to a fixed point.
	var reach func(t types.Type, seen map[types.Type]bool) bool
	reach = func(t types.Type, seen map[types.Type]bool) bool {
		if seen[t] {
			return false
		}
		seen[t] = true
		grew := false
		switch u := types.Unalias(t).(type) {
		case *types.Named:
			k := objKey(u.Origin().Obj())
			if _, ours := byKey[k]; ours && !inUse[k] {
				inUse[k], grew = true, true
			}
			for i := range u.TypeArgs().Len() {
				grew = reach(u.TypeArgs().At(i), seen) || grew
			}
		case *types.Pointer:
			grew = reach(u.Elem(), seen)
		case *types.Slice:
			grew = reach(u.Elem(), seen)
		case *types.Array:
			grew = reach(u.Elem(), seen)
		case *types.Map:
			grew = reach(u.Key(), seen) || reach(u.Elem(), seen)
		case *types.Chan:
			grew = reach(u.Elem(), seen)
		case *types.Signature:
			for _, tup := range []*types.Tuple{u.Params(), u.Results()} {
				for i := range tup.Len() {
					grew = reach(tup.At(i).Type(), seen) || grew
				}
			}
		case *types.Struct:
			for i := range u.NumFields() {
				if f := u.Field(i); f.Exported() || f.Embedded() {
					grew = reach(f.Type(), seen) || grew
				}
			}
		case *types.Interface:
			for i := range u.NumExplicitMethods() {
				grew = reach(u.ExplicitMethod(i).Type(), seen) || grew
			}
		}
		return grew
	}
	for grew := true; grew; {
		grew = false
		for _, n := range names {
			if n.method != "" && !inUse[objKey(n.obj)] && ifaceMethodInUse(n, inUse) {
				inUse[objKey(n.obj)], grew = true, true
			}
			if !inUse[objKey(n.obj)] {
				continue
			}
			seen := map[types.Type]bool{}
			switch o := n.obj.(type) {
			case *types.TypeName:
				grew = reach(o.Type().Underlying(), seen) || grew
			default:
				grew = reach(o.Type(), seen) || grew
			}
		}
	}
	// Methods reached through an interface, and an enum's values.
	ifaces := interfaces(pkgs)
	usedGroups := map[string]bool{}
	for _, n := range names {
		if n.group != "" && inUse[objKey(n.obj)] {
			usedGroups[n.group] = true
		}
	}
	var out []apiName
	for _, n := range names {
		if inUse[objKey(n.obj)] {
			continue
		}
		if c, ok := n.obj.(*types.Const); ok {
			if named := namedOf(c.Type()); named != nil && inUse[objKey(named.Obj())] {
				continue
			}
			if n.group != "" && usedGroups[n.group] {
				continue
			}
		}
		if n.method != "" && methodViaInterface(n, ifaces, inUse) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// ifaceMethodInUse reports whether n is a method of an interface of its
// package that is in use: the method set is the interface's contract, which
// its callers call and its implementations provide.
func ifaceMethodInUse(n apiName, inUse map[string]bool) bool {
	recv := namedOf(n.obj.(*types.Func).Signature().Recv().Type())
	_, isIface := recv.Underlying().(*types.Interface)
	return isIface && inUse[objKey(recv.Obj())]
}

// methodViaInterface reports whether n, a method, implements a method of an
// interface declared outside its package (or one of the standard library's
// protocols), or a method of its own package's interface that is in use.
func methodViaInterface(n apiName, ifaces map[*types.Package][]*types.Named, inUse map[string]bool) bool {
	recv := namedOf(n.obj.(*types.Func).Signature().Recv().Type())
	if _, isIface := recv.Underlying().(*types.Interface); isIface {
		return false
	}
	for _, it := range stdProtocols {
		if it.Method(0).Name() == n.method && implements(recv, it) {
			return true
		}
	}
	for tp, list := range ifaces {
		for _, named := range list {
			it := named.Underlying().(*types.Interface)
			var m *types.Func
			for j := range it.NumMethods() {
				if it.Method(j).Name() == n.method {
					m = it.Method(j)
				}
			}
			if m == nil || !implements(recv, it) {
				continue
			}
			if strings.TrimSuffix(tp.Path(), "_test") != recv.Obj().Pkg().Path() || inUse[objKey(m)] {
				return true
			}
		}
	}
	return false
}

// apiSections reads docs/design.md's package sections: a "### " heading
// whose words name packages of the module, or a list item that starts with
// "- **pkg**" (several "**pkg**" before the first colon name several), each
// running to the next heading or such list item. Every name in backquotes in
// a section is API of the section's packages: `Name` or `Name(…)` (a
// package-level name, or a method of that name of any of the package's
// types), `Type.Method`, or either qualified by a package's last path
// element (`vfs.WriteAtomic`). A span that goes on after the name other
// than with "(", "{" or "[" (`LocalLog#flush`, `go doc ./pkg`) is not a name.
//
// peers maps each package to the packages its section names (itself among
// them).
func apiSections(t *testing.T, file string, pkgs map[string]bool) (api map[string]map[string]bool, peers map[string][]string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]bool{}
	peers = map[string][]string{}
	var cur []string
	var text strings.Builder
	code := regexp.MustCompile("`([^`]+)`")
	ident := regexp.MustCompile(`^[*&]?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:$|[({\[])`)
	flush := func() {
		for _, m := range code.FindAllStringSubmatch(text.String(), -1) {
			id := ident.FindStringSubmatch(m[1])
			if id == nil {
				continue
			}
			for _, p := range cur {
				peers[p] = cur
				if out[p] == nil {
					out[p] = map[string]bool{}
				}
				out[p][id[1]] = true
			}
		}
		text.Reset()
	}
	bold := regexp.MustCompile(`\*\*([^*]+)\*\*`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := sc.Text()
		switch {
		case strings.HasPrefix(s, "#"):
			flush()
			cur = nil
			if title, ok := strings.CutPrefix(s, "### "); ok {
				for _, w := range strings.Fields(title) {
					if w = strings.Trim(w, "`*,"); pkgs[w] {
						cur = append(cur, w)
					}
				}
			}
			continue
		case strings.HasPrefix(s, "- **"):
			flush()
			cur = nil
			head, _, _ := strings.Cut(s, ":")
			for _, m := range bold.FindAllStringSubmatch(head, -1) {
				if pkgs[m[1]] {
					cur = append(cur, m[1])
				}
			}
		case strings.HasPrefix(s, "```"):
			flush()
			cur = nil
			continue
		}
		text.WriteString(s)
		text.WriteByte(' ')
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out, peers
}

// isDocumented reports whether doc, the backquoted names of n's package's
// sections, lists n.
func isDocumented(n apiName, doc map[string]bool) bool {
	last := n.pkg[strings.LastIndex(n.pkg, "/")+1:]
	for _, name := range []string{n.name, last + "." + n.name} {
		if doc[name] {
			return true
		}
	}
	return n.method != "" && (doc[n.method] || doc[last+"."+n.method])
}

// offenders returns the exported names of the library packages of the
// module at root (module path mod), and those of them that are not in use
// and that design, its design.md, does not list.
func offenders(t *testing.T, root, mod, design string) (all, bad []apiName) {
	t.Helper()
	pkgs := loadModule(t, root)
	names := libraryNames(pkgs, root, mod)
	libs := map[string]bool{}
	for _, n := range names {
		libs[n.pkg] = true
	}
	doc, _ := apiSections(t, design, libs)
	return names, unusedNames(names, pkgs, mod, func(n apiName) bool { return isDocumented(n, doc[n.pkg]) })
}

// TestExportedAPI holds the module to the rule of design.md's "The API
// check": every exported name of a library package is used by another
// package of the module or listed as API in design.md. It names each
// offender with where it is declared.
func TestExportedAPI(t *testing.T) {
	all, bad := offenders(t, "..", module, "design.md")
	if !slices.ContainsFunc(all, func(n apiName) bool { return n.pkg == "codec" && n.name == "ParseBatch" }) {
		t.Fatal("no codec.ParseBatch among the library names: the load found the wrong module")
	}
	for _, n := range bad {
		t.Errorf("%s: %s.%s is exported, but no other package uses it and design.md does not list it as %s's API",
			n.pos, n.pkg, n.name, n.pkg)
	}
}

// TestDesignAPINamesExist holds design.md's package sections to the code:
// every exported name in backquotes that a section lists as its package's
// API (apiSections) is declared there, as a package-level name, a method or
// a field, so that the list of a package's API cannot name what is gone.
// Names qualified by another package (`codec.Batch` in psm's section) are
// that package's and not checked here.
func TestDesignAPINamesExist(t *testing.T) {
	pkgs := loadModule(t, "..")
	members := map[string]map[string]bool{} // package → "Name", "Type.Member", "Member"
	lasts := map[string]bool{}
	for _, p := range pkgs {
		rel, ok := modRel(module, p.PkgPath)
		if !ok || p.ForTest != "" || p.Types == nil {
			continue
		}
		lasts[rel[strings.LastIndex(rel, "/")+1:]] = true
		m := map[string]bool{}
		members[rel] = m
		scope := p.Types.Scope()
		for _, n := range scope.Names() {
			m[n] = true
			tn, ok := scope.Lookup(n).(*types.TypeName)
			if !ok {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(tn.Type()))
			for i := range ms.Len() {
				m[n+"."+ms.At(i).Obj().Name()] = true
				m[ms.At(i).Obj().Name()] = true
			}
			if st, ok := tn.Type().Underlying().(*types.Struct); ok {
				for i := range st.NumFields() {
					m[n+"."+st.Field(i).Name()] = true
				}
			}
		}
	}
	libs := map[string]bool{}
	for p := range members {
		libs[p] = true
	}
	api, peers := apiSections(t, "design.md", libs)
	for p, names := range api {
		last := p[strings.LastIndex(p, "/")+1:]
		for name := range names {
			first, rest, qualified := strings.Cut(name, ".")
			if qualified && first == last {
				name, first = rest, strings.Split(rest, ".")[0]
			} else if qualified && lasts[first] {
				continue
			}
			if !token.IsExported(first) {
				continue
			}
			if !slices.ContainsFunc(peers[p], func(q string) bool { return members[q][name] }) {
				t.Errorf("design.md lists `%s` in %s's section; %s declares no such name", name, p, p)
			}
		}
	}
}

// TestExportedAPIRules runs the check over testdata/apicheck, a module
// whose names each exercise one rule; the ones named Offender… are the
// offenders it must report, and only those.
func TestExportedAPIRules(t *testing.T) {
	var got []string
	_, bad := offenders(t, "testdata/apicheck", "example.com/apicheck/", "testdata/apicheck/design.md")
	for _, n := range bad {
		got = append(got, n.pkg+"."+n.name)
	}
	want := []string{
		"lib.ErrOffenderUnreturned",
		"lib.Name.OffenderMethod",
		"lib.OffenderOnlyOwnTests",
		"lib.OffenderUnused",
		"lib.OffenderUnusedType",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("offenders %q, want %q", got, want)
	}
}
