package service

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the import path every package of ours begins with.
const module = "github.com/antidrift/antidrift"

// ours is what the non-test files of the package in dir import of ours.
func ours(t *testing.T, dir string) map[string][]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("%s: got no Go files, want the package's", dir)
	}
	got := map[string][]string{}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == module || strings.HasPrefix(path, module+"/") {
				got[path] = append(got[path], p)
			}
		}
	}
	return got
}

// The core imports nothing of ours but its own text layer, service/rule;
// and service/rule imports nothing of ours at all, the core least: the
// arrow points one way, so the rules config, report and the CLI parse are
// the core's without pulling in the core.
func TestTheCoreImportsOnlyItsRuleLayerAndThatNothing(t *testing.T) {
	for path, files := range ours(t, ".") {
		if path != module+"/service/rule" {
			t.Errorf("service imports %s (in %s); want nothing of ours but %s/service/rule", path, strings.Join(files, ", "), module)
		}
	}
	for path, files := range ours(t, "rule") {
		t.Errorf("service/rule imports %s (in %s); want nothing of ours", path, strings.Join(files, ", "))
	}
}
