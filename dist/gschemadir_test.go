package dist_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// make install GSCHEMADIR=…, as the three packages run it: the
// extension's settings schema goes to the system's schema directory as it
// is, for the distribution's trigger to compile, and the extension keeps
// no schemas/ of its own (a compiled file there would go stale). make
// uninstall with the same variables removes it again.
func TestMakeInstallGSchemaDir(t *testing.T) {
	needMake(t)
	destdir, build := t.TempDir(), t.TempDir()
	vars := []string{"DESTDIR=" + destdir, "PREFIX=/usr", "BUILDDIR=" + build, "GSCHEMADIR=/usr/share/glib-2.0/schemas"}
	runMake(t, os.Environ(), append([]string{"install"}, vars...)...)

	const schema = "org.gnome.shell.extensions.antidrift.gschema.xml"
	src, err := os.ReadFile(filepath.Join("gnome-shell", "antidrift@antidrift.github.io", "schemas", schema))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(destdir, "usr/share/glib-2.0/schemas", schema))
	if err != nil || !bytes.Equal(got, src) {
		t.Errorf("usr/share/glib-2.0/schemas/%s: got %d bytes (%v), want the source's %d", schema, len(got), err, len(src))
	}
	ext := filepath.Join(destdir, "usr/share/gnome-shell/extensions/antidrift@antidrift.github.io")
	if _, err := os.Stat(filepath.Join(ext, "metadata.json")); err != nil {
		t.Fatalf("the extension: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ext, "schemas")); !os.IsNotExist(err) {
		t.Errorf("%s/schemas: got it (%v), want none with GSCHEMADIR set", ext, err)
	}
	if compiled, _ := filepath.Glob(filepath.Join(destdir, "usr/share/glib-2.0/schemas/*.compiled")); len(compiled) > 0 {
		t.Errorf("got %v, want no compiled schema in the package", compiled)
	}

	runMake(t, os.Environ(), append([]string{"uninstall"}, vars...)...)
	noFiles(t, destdir)
}
