// Package sitevectors reads testdata/site-vectors.json: the addresses the
// browser extension, the native host and the core must agree on (what the
// browser shows, what the extension sends of it, the site the core makes,
// and which url: rules match it). The core's own test reads the same file.
package sitevectors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Vector is one address.
type Vector struct {
	Name string `json:"name"`
	// URL is the address as the browser shows it.
	URL string `json:"url"`
	// Scheme, Host and Path are what the extension sends of it: the
	// browser's own parse.
	Scheme string `json:"scheme"`
	Host   string `json:"host"`
	Path   string `json:"path"`
	// Site is what the core makes of them; Display the site as shown.
	Site    string `json:"site"`
	Display string `json:"display"`
	Rules   []struct {
		Rule    string `json:"rule"`
		Matches bool   `json:"matches"`
	} `json:"rules"`
}

// Version is the file's format this reader knows.
const Version = 1

// Path is the vectors' file, found from the test's working directory up
// to the module's root.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "site-vectors.json")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory: cannot find testdata/site-vectors.json")
		}
		dir = parent
	}
}

// Load reads the vectors.
func Load(t testing.TB) []Vector {
	t.Helper()
	raw, err := os.ReadFile(Path(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int      `json:"version"`
		Vectors []Vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("site vectors: %v", err)
	}
	if doc.Version != Version || len(doc.Vectors) == 0 {
		t.Fatalf("site vectors: version %d with %d vectors, want version %d and some", doc.Version, len(doc.Vectors), Version)
	}
	return doc.Vectors
}
