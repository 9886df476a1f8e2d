package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/sitevectors"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The extension's partsOf and block (dist/webextension/background.js), run in node
// on the shared vectors: what the extension sends of each address is what
// TestTheHostPassesEveryVectorOnUnchanged passes on and the core's
// TestSiteVectors makes the site of.
func TestTheExtensionSendsEveryVectorAsTheHostAndCoreExpect(t *testing.T) {
	testenv.Need(t, "node")
	vectors := sitevectors.Path(t)
	background := filepath.Join(filepath.Dir(filepath.Dir(vectors)), "dist", "webextension", "background.js")
	out, err := exec.Command("node", filepath.Join("testdata", "extension-vectors.js"), background, vectors).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
