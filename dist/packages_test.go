package dist

// Tests of the panels as packages: what `make package-panels` packs, that
// each source directory holds everything it loads, that the translation
// templates are current and complete in German, and that every control of
// the applet has a name a screen reader can say.

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

const (
	extUUID  = "antidrift@antidrift.github.io"
	extDir   = "gnome-shell/" + extUUID
	appletID = "org.antidrift.panel"
	appletSr = "plasma/" + appletID
)

// packPanels runs make package-panels into a fresh directory and returns it.
func packPanels(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"make", "zip", "msgfmt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	out := t.TempDir()
	c := exec.Command("make", "-s", "-C", "..", "package-panels", "BUILDDIR="+out)
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("make package-panels: %v\n%s", err, b)
	}
	return out
}

// zipEntries lists a zip's entries and their contents.
func zipEntries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string][]byte{}
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		rc.Close()
		out[f.Name] = b.Bytes()
	}
	return out
}

// Each panel's source directory holds every file it loads, as a regular
// file: installed as it is (kpackagetool6 -i, a copy into extensions/), it
// works. The files both panels share are identical copies.
func TestPanelSourcesAreSelfContained(t *testing.T) {
	for _, dir := range []string{extDir, appletSr} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.Type()&fs.ModeSymlink != 0 {
				t.Errorf("%s: got a symbolic link, want a file (installed as it is, the package would be broken)", p)
			}
			return nil
		})
	}
	same := [][2]string{
		{extDir + "/format.mjs", appletSr + "/contents/ui/format.mjs"},
		{"org.antidrift.Session1.xml", extDir + "/org.antidrift.Session1.xml"},
	}
	for _, pair := range same {
		a, errA := os.ReadFile(pair[0])
		b, errB := os.ReadFile(pair[1])
		if errA != nil || errB != nil {
			t.Fatalf("%v %v", errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s and %s: got different contents, want the same (copy the first over the second)", pair[0], pair[1])
		}
	}
}

// make package-panels packs the extension as gnome-extensions pack does
// (code and interface XML at the top, the schema as source only, the
// translations compiled under locale/) and the applet as kpackagetool6 and
// the KDE Store take it (metadata.json at the top, translations under
// contents/locale); the same sources give the same bytes.
func TestMakePackagePanels(t *testing.T) {
	out := packPanels(t)
	ext := zipEntries(t, filepath.Join(out, extUUID+".shell-extension.zip"))
	var want []string
	entries, _ := os.ReadDir(extDir)
	for _, e := range entries {
		if !e.IsDir() {
			want = append(want, e.Name())
		}
	}
	want = append(want, "schemas/org.gnome.shell.extensions.antidrift.gschema.xml", "locale/de/LC_MESSAGES/antidrift.mo")
	if got := slices.Sorted(mapsKeys(ext)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("the extension's zip holds %q, want %q", got, slices.Sorted(slices.Values(want)))
	}
	for name, data := range ext {
		if strings.HasSuffix(name, ".compiled") {
			t.Errorf("the zip: got a compiled schema %s, want none (extensions.gnome.org refuses them)", name)
		}
		if src, err := os.ReadFile(filepath.Join(extDir, name)); err == nil && !bytes.Equal(src, data) {
			t.Errorf("%s in the zip: got other bytes, want the source's", name)
		}
	}
	applet := zipEntries(t, filepath.Join(out, appletID+".plasmoid"))
	for _, name := range []string{"metadata.json", "contents/ui/main.qml", "contents/ui/StartForm.qml", "contents/ui/format.mjs",
		"contents/locale/de/LC_MESSAGES/plasma_applet_" + appletID + ".mo"} {
		if _, ok := applet[name]; !ok {
			t.Errorf("the .plasmoid: got %q, want %s among them", slices.Sorted(mapsKeys(applet)), name)
		}
	}

	again := packPanels(t)
	for _, name := range []string{extUUID + ".shell-extension.zip", appletID + ".plasmoid"} {
		a, _ := os.ReadFile(filepath.Join(out, name))
		b, _ := os.ReadFile(filepath.Join(again, name))
		if !bytes.Equal(a, b) {
			t.Errorf("two packs of the same sources: got different %s, want the same", name)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The committed templates are what make pot extracts now, and the German
// translations translate every message of them.
func TestTranslationsAreCurrent(t *testing.T) {
	for _, tool := range []string{"make", "xgettext", "msgcmp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	pots := []string{"gnome-shell/po/antidrift.pot", "plasma/po/plasma_applet_" + appletID + ".pot"}
	before := map[string]string{}
	for _, p := range pots {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		before[p] = string(b)
	}
	// make pot writes in place; the committed files are put back after.
	t.Cleanup(func() {
		for p, b := range before {
			os.WriteFile(p, []byte(b), 0o644)
		}
	})
	if b, err := exec.Command("make", "-s", "-C", "..", "pot").CombinedOutput(); err != nil {
		t.Fatalf("make pot: %v\n%s", err, b)
	}
	// Only the messages matter, not the dates or the line numbers.
	msgs := func(s string) string {
		return regexp.MustCompile(`(?m)^("POT-Creation-Date:|#:).*\n`).ReplaceAllString(s, "")
	}
	for _, p := range pots {
		now, _ := os.ReadFile(p)
		if msgs(string(now)) != msgs(before[p]) {
			t.Errorf("%s: got other messages than make pot extracts now, want the same (run make pot and translate what is new)", p)
		}
		po := filepath.Join(filepath.Dir(p), "de.po")
		if b, err := exec.Command("msgcmp", po, p).CombinedOutput(); err != nil {
			t.Errorf("msgcmp %s %s: %v\n%s", po, p, err, b)
		}
		if b, err := exec.Command("msgfmt", "-c", "--statistics", "-o", os.DevNull, po).CombinedOutput(); err != nil ||
			strings.Contains(string(b), "untranslated") || strings.Contains(string(b), "fuzzy") {
			t.Errorf("msgfmt -c %s: %v\n%s", po, err, b)
		}
	}
}

// Every control of the applet says what it is: a button by its text, any
// other control by its Accessible.name (a form's label is only drawn). And
// every string a person reads goes through i18n().
func TestAppletControlsHaveAccessibleNames(t *testing.T) {
	controls := regexp.MustCompile(`(?m)^(\s*)(?:\w+:\s*)?(PlasmaComponents\.(?:Button|TextField|ComboBox|ProgressBar|CheckBox)|MouseArea)\s*\{`)
	for _, f := range []string{"main.qml", "StartForm.qml"} {
		data, err := os.ReadFile(filepath.Join(appletSr, "contents/ui", f))
		if err != nil {
			t.Fatal(err)
		}
		src := string(data)
		for _, m := range controls.FindAllStringSubmatchIndex(src, -1) {
			indent := src[m[2]:m[3]]
			// The control's own lines: up to its closing brace at its indent.
			body := src[m[1]:]
			if end := strings.Index(body, "\n"+indent+"}"); end >= 0 {
				body = body[:end]
			}
			kind := src[m[4]:m[5]]
			named := strings.Contains(body, "Accessible.name:") ||
				kind == "PlasmaComponents.Button" && regexp.MustCompile(`(?m)^\s*text:\s*\S`).MatchString(body)
			if !named {
				line := strings.Count(src[:m[0]], "\n") + 1
				t.Errorf("%s:%d: got a %s without an Accessible.name, want one", f, line, kind)
			}
			if kind == "MouseArea" && !strings.Contains(body, "activeFocusOnTab: true") {
				t.Errorf("%s: got a MouseArea without activeFocusOnTab: true, want the keyboard to reach it", f)
			}
		}
		for n, line := range strings.Split(src, "\n") {
			if m := regexp.MustCompile(`(?:text|placeholderText|label|FormData\.label|toolTipSubText):\s*"[A-Za-z]`).FindString(line); m != "" {
				t.Errorf("%s:%d: got a string shown untranslated: %s, want it translated", f, n+1, strings.TrimSpace(line))
			}
		}
	}
}

// The zip make package-panels packs holds exactly what GNOME Shell 48's
// own gnome-extensions pack makes of the same sources (run inside the
// Debian 13 rootfs), file for file and byte for byte. The rootfs has no
// msgfmt, so the translations are compared by name: locale/LANG/... for
// each po/LANG.po. (gnome-extensions pack also writes directory entries;
// unzip and gnome-extensions install make the directories either way.)
func TestPackIsWhatGnomeExtensionsPackMakes(t *testing.T) {
	r := testenv.NeedRootfs(t)
	ours := zipEntries(t, filepath.Join(packPanels(t), extUUID+".shell-extension.zip"))

	dir := r.TempDir(t)
	src := filepath.Join(dir, extUUID)
	if err := testenv.CopyTree(extDir, src, 0o755, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "po"), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := []string{"gnome-extensions", "pack", "--force", "--out-dir=" + dir, "--podir=" + filepath.Join(dir, "po")}
	entries, _ := os.ReadDir(extDir)
	for _, e := range entries {
		switch e.Name() {
		case "extension.js", "prefs.js", "metadata.json", "stylesheet.css":
		default:
			if !e.IsDir() {
				argv = append(argv, "--extra-source="+e.Name())
			}
		}
	}
	argv = append(argv, src)
	if out, err := r.Run(0, []string{"HOME=" + dir}, time.Minute, argv...); err != nil {
		t.Fatalf("gnome-extensions pack: %v\n%s", err, out)
	}
	theirs := zipEntries(t, filepath.Join(dir, extUUID+".shell-extension.zip"))
	for name := range theirs {
		if strings.HasSuffix(name, "/") { // directory entries: the files are what counts
			delete(theirs, name)
		}
	}
	pos, _ := filepath.Glob("gnome-shell/po/*.po")
	for _, po := range pos {
		theirs["locale/"+strings.TrimSuffix(filepath.Base(po), ".po")+"/LC_MESSAGES/antidrift.mo"] = nil
	}
	if a, b := slices.Sorted(mapsKeys(ours)), slices.Sorted(mapsKeys(theirs)); !slices.Equal(a, b) {
		t.Fatalf("make package-panels: got %q packed, want gnome-extensions pack's %q", a, b)
	}
	for name, data := range theirs {
		if !strings.HasSuffix(name, ".mo") && !bytes.Equal(data, ours[name]) {
			t.Errorf("%s: got other bytes, want gnome-extensions pack's", name)
		}
	}
}
