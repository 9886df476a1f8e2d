package service

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// pathSteps are the files of a window's path to its verdict, in order
// (verdict.go says what each does). verdict.go itself is the spine that
// calls them.
var pathSteps = [][]string{
	{"privacy.go", "tabs.go"}, // 1. made private, given its site
	{"verdictkey.go"},         // 2. keyed
	{"ruleverdict.go"},        // 3. decided by the rules
	{"judge.go"},              // 4. decided by the judge
	{"account.go"},            // 5. accounted
	{"applyverdict.go"},       // 6. applied
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

// A reader follows a window to its verdict top to bottom: no step calls
// back into an earlier one (a later step may use a later one, and any step
// the helpers outside the path), and the spine takes the steps in order.
func TestAVerdictIsOneStraightPath(t *testing.T) {
	where, files := declared(t)
	for file, f := range files {
		step := stepOf(file)
		if step < 0 {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			for _, callee := range callsIn(fn.Body) {
				if to := stepOf(where[callee]); to >= 0 && to < step {
					t.Errorf("%s (step %d, %s) calls back into %s (step %d, %s)", fn.Name.Name, step, file, callee, to, where[callee])
				}
			}
		}
	}
	spine := map[string]*ast.FuncDecl{}
	for _, d := range files["verdict.go"].Decls {
		if fn, ok := d.(*ast.FuncDecl); ok {
			spine[fn.Name.Name] = fn
		}
	}
	for _, name := range []string{"observeLocked", "verdictLocked", "recordVerdictLocked"} {
		fn := spine[name]
		if fn == nil {
			t.Errorf("verdict.go has no %s", name)
			continue
		}
		var order []string
		last := 0
		for _, callee := range callsIn(fn.Body) {
			to := stepOf(where[callee])
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
