package service

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pathSteps are the files of a window's path to its verdict, in order
// (verdict.go says what each does). verdict.go itself is the spine that
// calls them.
var pathSteps = [][]string{
	{"entrance.go", "privacy.go", "tabs.go"}, // 1. enters, made private, given its site
	{"verdictkey.go"},                        // 2. keyed
	{"ruleverdict.go"},                       // 3. decided by the rules
	{"judge.go"},                             // 4. decided by the judge
	{"account.go"},                           // 5. accounted
	{"applyverdict.go"},                      // 6. applied
}

// declared maps each function and Service method of package service (not
// its tests) to the file that declares it, and returns the parsed files.
// Methods of the state the steps share (s.tabs.waiting, s.privacy.private)
// are questions about that state, not steps, and are left out.
func declared(t *testing.T) (map[string]string, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	where, files := map[string]string{}, map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = f
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && (fn.Recv == nil || isService(fn.Recv)) {
				where[fn.Name.Name] = p
			}
		}
	}
	return where, files
}

func isService(recv *ast.FieldList) bool {
	star, ok := recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Service"
}

// callsIn lists, in source order, the names of the functions and Service
// methods that body calls: f(…) and s.f(…), not s.tabs.f(…).
func callsIn(body ast.Node) []string {
	var names []string
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			switch fn := c.Fun.(type) {
			case *ast.Ident:
				names = append(names, fn.Name)
			case *ast.SelectorExpr:
				if recv, ok := fn.X.(*ast.Ident); ok && recv.Name == "s" {
					names = append(names, fn.Sel.Name)
				}
			}
		}
		return true
	})
	return names
}

// stepOf is the step a file is, or -1 for a file outside the path.
func stepOf(file string) int {
	for i, files := range pathSteps {
		for _, f := range files {
			if f == file {
				return i + 1
			}
		}
	}
	return -1
}

// graph is package service's call graph: for each function and Service
// method, what its body calls (closures included), which functions take
// the core's lock themselves, and which carry a Verdict.
type graph struct {
	where   map[string]string   // function → the file that declares it
	calls   map[string][]string // function → its callees, in source order
	entry   map[string]bool     // takes mu itself: a door of its own (a bus call, a timer, a goroutine)
	verdict map[string]bool     // takes or gives a Verdict
}

func callGraph(t *testing.T) (graph, map[string]*ast.File) {
	t.Helper()
	where, files := declared(t)
	g := graph{where: where, calls: map[string][]string{}, entry: map[string]bool{}, verdict: map[string]bool{}}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || (fn.Recv != nil && !isService(fn.Recv)) {
				continue
			}
			name := fn.Name.Name
			g.calls[name] = callsIn(fn.Body)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.SelectorExpr); ok && c.Sel.Name == "Lock" {
					if mu, ok := c.X.(*ast.SelectorExpr); ok && mu.Sel.Name == "mu" {
						g.entry[name] = true
					}
				}
				return true
			})
			for _, list := range []*ast.FieldList{fn.Type.Params, fn.Type.Results} {
				if list == nil {
					continue
				}
				for _, field := range list.List {
					if id, ok := field.Type.(*ast.Ident); ok && id.Name == "Verdict" {
						g.verdict[name] = true
					}
				}
			}
		}
	}
	return g, files
}

// walk follows the calls from fn, transitively, in the same hold of the
// lock: it does not go into a function that takes the lock itself (only
// a timer, a goroutine or an effect after commit can call one: that is a
// new door, with a path of its own). visit is told each function reached
// and the chain of calls to it; when it answers false the walk does not go
// on from there.
func (g graph) walk(fn string, visit func(callee string, chain []string) bool) {
	seen := map[string]bool{fn: true}
	var from func(name string, chain []string)
	from = func(name string, chain []string) {
		for _, callee := range g.calls[name] {
			if seen[callee] || g.where[callee] == "" || g.entry[callee] {
				continue
			}
			seen[callee] = true
			next := append(slices.Clone(chain), callee)
			if visit(callee, next) {
				from(callee, next)
			}
		}
	}
	from(fn, []string{fn})
}

// A reader follows a window to its verdict top to bottom: no step reaches
// back into an earlier one, directly or through any chain of calls (a
// later step may use a later one, and any step the helpers outside the
// path); the spine takes the steps in order; and outside the path no one
// makes, accounts or applies a verdict but through the spine (verdict.go):
// a caller outside that touched applyVerdictLocked itself would skip the
// tab-settle guard and the accounting step.
func TestAVerdictIsOneStraightPath(t *testing.T) {
	g, files := callGraph(t)
	for file, f := range files {
		step := stepOf(file)
		if step < 0 {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || (fn.Recv != nil && !isService(fn.Recv)) {
				continue
			}
			g.walk(fn.Name.Name, func(callee string, chain []string) bool {
				if to := stepOf(g.where[callee]); to >= 0 && to < step {
					t.Errorf("%s (step %d, %s) reaches back into %s (step %d, %s): %s", fn.Name.Name, step, file, callee, to, g.where[callee], strings.Join(chain, " → "))
				}
				return true
			})
		}
	}
	for name, file := range g.where {
		if stepOf(file) >= 0 || file == "verdict.go" {
			continue
		}
		g.walk(name, func(callee string, chain []string) bool {
			switch {
			case g.where[callee] == "verdict.go":
				return false // through the spine: the way in
			case stepOf(g.where[callee]) >= 0:
				if g.verdict[callee] {
					t.Errorf("%s (%s) reaches %s (%s) around the spine: %s; take the window down verdict.go's path instead", name, file, callee, g.where[callee], strings.Join(chain, " → "))
				}
				return false
			}
			return true
		})
	}
	spine := map[string]*ast.FuncDecl{}
	for _, d := range files["verdict.go"].Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			spine[fn.Name.Name] = fn
		}
	}
	for _, name := range []string{"observeLocked", "verdictLocked", "recordVerdictLocked", "resumeLocked"} {
		fn := spine[name]
		if fn == nil {
			t.Errorf("verdict.go has no %s", name)
			continue
		}
		var order []string
		last := 0
		for _, callee := range callsIn(fn.Body) {
			to := stepOf(g.where[callee])
			if to < 0 {
				continue
			}
			order = append(order, fmt.Sprintf("%s (step %d)", callee, to))
			if to < last {
				t.Errorf("%s takes the steps out of order: got %s", name, strings.Join(order, ", "))
			}
			last = max(last, to)
		}
	}
}
