package apps

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeEntry(t testing.TB, dir, rel, body string) string {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func app(name string, extra ...string) string {
	return "[Desktop Entry]\nType=Application\nName=" + name + "\nExec=true\n" + strings.Join(extra, "\n") + "\n"
}

func openTest(t *testing.T, locale string, dirs ...string) *Index {
	t.Helper()
	x, err := open(dirs, locale)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func wantLookup(t *testing.T, x *Index, class, instance, appID, wantID string) {
	t.Helper()
	e, ok := x.Lookup(class, instance, appID)
	if wantID == "" {
		if ok {
			t.Errorf("Lookup(%q, %q, %q) = %+v, want no entry", class, instance, appID, e)
		}
		return
	}
	if !ok || e.ID != wantID {
		t.Errorf("Lookup(%q, %q, %q) = %+v, %v; want id %q", class, instance, appID, e, ok, wantID)
	}
}

func TestLookupStartupWMClass(t *testing.T) {
	d := filepath.Join(t.TempDir(), "applications")
	writeEntry(t, d, "myeditor.desktop", app("My Editor", "Icon=myeditor", "StartupWMClass=MyEdit-Main"))
	writeEntry(t, d, "other.desktop", app("Other", "StartupWMClass=navigator"))
	writeEntry(t, d, "navigator.desktop", app("Navigator app"))
	x := openTest(t, "C", d)

	e, ok := x.Lookup("MyEdit-Main", "myedit", "")
	if want := (Entry{ID: "myeditor", Name: "My Editor", Icon: "myeditor"}); !ok || e != want {
		t.Fatalf("Lookup by StartupWMClass = %+v, %v; want %+v", e, ok, want)
	}
	// the instance is tried before the class, and StartupWMClass before ids
	wantLookup(t, x, "MyEdit-Main", "navigator", "", "other")
	// StartupWMClass is case-sensitive, as gnome-shell's hash table is
	wantLookup(t, x, "myedit-main", "", "", "")
}

func TestLookupDesktopIDHeuristics(t *testing.T) {
	d := filepath.Join(t.TempDir(), "applications")
	writeEntry(t, d, "org.example.App.desktop", app("Example"))
	writeEntry(t, d, "fedora-eclipse.desktop", app("Eclipse"))
	writeEntry(t, d, "debian-foo.desktop", app("Foo"))
	writeEntry(t, d, "gnome-calc.desktop", app("Calculator"))
	writeEntry(t, d, "kde/okular.desktop", app("Okular"))
	x := openTest(t, "C", d)

	wantLookup(t, x, "org.example.App", "", "", "org.example.App")                // as is
	wantLookup(t, x, "Org.example.App", "org.example.App", "", "org.example.App") // GTK's instance
	wantLookup(t, x, "Fedora Eclipse", "", "", "fedora-eclipse")                  // lowercased, spaces as '-'
	wantLookup(t, x, "Eclipse", "", "", "fedora-eclipse")                         // vendor prefix, lowercased
	wantLookup(t, x, "Foo", "foo", "", "debian-foo")                              // vendor prefix
	wantLookup(t, x, "calc", "", "", "gnome-calc")
	wantLookup(t, x, "kde-okular", "", "", "kde-okular") // a subdirectory is a '-' prefix
	wantLookup(t, x, "okular", "", "", "")
	wantLookup(t, x, "Nothing", "nothing", "", "")
	wantLookup(t, x, "", "", "", "")
}

func TestLookupAppID(t *testing.T) {
	d := filepath.Join(t.TempDir(), "applications")
	writeEntry(t, d, "firefox-esr.desktop", app("Firefox ESR", "StartupWMClass=firefox-esr"))
	writeEntry(t, d, "org.mozilla.firefox.desktop", app("Firefox", "StartupWMClass=firefox"))
	writeEntry(t, d, "org.example.Tool.desktop", app("Tool"))
	writeEntry(t, d, "spotify_spotify.desktop", app("Spotify (snap)"))
	x := openTest(t, "C", d)

	wantLookup(t, x, "firefox-esr", "firefox-esr", "", "firefox-esr")
	// a sandboxed window is never taken for the distribution's program
	wantLookup(t, x, "firefox-esr", "firefox-esr", "org.mozilla.firefox", "org.mozilla.firefox")
	wantLookup(t, x, "firefox", "Navigator", "org.mozilla.firefox", "org.mozilla.firefox")
	wantLookup(t, x, "weird", "", "org.example.Tool", "org.example.Tool")
	wantLookup(t, x, "spotify", "", "spotify", "spotify_spotify")
	wantLookup(t, x, "weird", "", "org.example.Missing", "")
	// an app id no entry has: the class decides, as without one
	wantLookup(t, x, "firefox-esr", "Navigator", "org.example.Missing", "firefox-esr")
}

func TestEarlierDirWinsAndHidden(t *testing.T) {
	root := t.TempDir()
	home, sys := filepath.Join(root, "home", "applications"), filepath.Join(root, "sys", "applications")
	writeEntry(t, sys, "editor.desktop", app("System Editor"))
	writeEntry(t, home, "editor.desktop", app("My Editor"))
	writeEntry(t, sys, "gone.desktop", app("Gone"))
	writeEntry(t, home, "gone.desktop", "[Desktop Entry]\nHidden=true\n")
	writeEntry(t, sys, "tray.desktop", app("Tray helper", "NoDisplay=true", "StartupWMClass=Tray"))
	writeEntry(t, sys, "link.desktop", "[Desktop Entry]\nType=Link\nName=A link\nURL=https://example.org\n")
	writeEntry(t, sys, "a-shared.desktop", app("Shared hidden", "NoDisplay=true", "StartupWMClass=Shared"))
	writeEntry(t, sys, "b-shared.desktop", app("Shared shown", "StartupWMClass=Shared"))
	x := openTest(t, "C", home, sys)

	if e, _ := x.Get("editor"); e.Name != "My Editor" {
		t.Errorf("editor: got name %q, want the first directory's %q", e.Name, "My Editor")
	}
	wantLookup(t, x, "gone", "", "", "")           // Hidden deletes it, here and below
	wantLookup(t, x, "Tray", "", "", "tray")       // NoDisplay is still matched
	wantLookup(t, x, "link", "", "", "")           // not an application
	wantLookup(t, x, "Shared", "", "", "b-shared") // the one that shows wins a StartupWMClass
	wantLookup(t, x, "Editor", "", "", "editor")
}

func TestLocalizedName(t *testing.T) {
	d := filepath.Join(t.TempDir(), "applications")
	writeEntry(t, d, "files.desktop", app("Files", "Name[de]=Dateien", "Name[de_AT]=Dateien (AT)", "Name[sr@latin]=Datoteke", "Name[fr]=Fichiers"))
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANGUAGE"} {
		t.Setenv(k, "")
	}
	t.Setenv("LANG", "de_DE.UTF-8")
	x := openTest(t, "", d)
	if e, _ := x.Lookup("files", "", ""); e.Name != "Dateien" {
		t.Errorf("under LANG=de_DE.UTF-8: got name %q, want %q", e.Name, "Dateien")
	}
	t.Setenv("LC_MESSAGES", "fr_FR.UTF-8")
	if e, _ := openTest(t, "", d).Lookup("files", "", ""); e.Name != "Fichiers" {
		t.Errorf("LC_MESSAGES=fr_FR over LANG: got name %q, want %q", e.Name, "Fichiers")
	}
	t.Setenv("LC_ALL", "C")
	if e, _ := openTest(t, "", d).Lookup("files", "", ""); e.Name != "Files" {
		t.Errorf("LC_ALL=C: got name %q, want %q", e.Name, "Files")
	}
	for locale, want := range map[string]string{
		"de_AT.UTF-8": "Dateien (AT)", "sr_RS@latin": "Datoteke", "sr_RS": "Files", "pt_BR": "Files",
	} {
		if e, _ := openTest(t, locale, d).Lookup("files", "", ""); e.Name != want {
			t.Errorf("locale %s: got name %q, want %q", locale, e.Name, want)
		}
	}
}

func TestLocaleVariants(t *testing.T) {
	for in, want := range map[string][]string{
		"de_DE.UTF-8":       {"de_DE", "de"},
		"sr_RS.UTF-8@latin": {"sr_RS@latin", "sr_RS", "sr@latin", "sr"},
		"sr@latin":          {"sr@latin", "sr"},
		"fr":                {"fr"},
		"C.UTF-8":           nil,
		"POSIX":             nil,
		"":                  nil,
	} {
		if got := localeVariants(in); !reflect.DeepEqual(got, want) {
			t.Errorf("localeVariants(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDataDirs(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_DATA_DIRS", "")
	want := []string{
		"/home/u/.local/share/applications", "/home/u/.local/share/flatpak/exports/share/applications",
		"/var/lib/flatpak/exports/share/applications", "/usr/local/share/applications", "/usr/share/applications",
		"/var/lib/snapd/desktop/applications",
	}
	if got := DataDirs(); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: got %q\nwant %q", got, want)
	}
	t.Setenv("XDG_DATA_HOME", "/d/home")
	t.Setenv("XDG_DATA_DIRS", "relative/x:/var/lib/flatpak/exports/share/:/opt/share")
	want = []string{
		"/d/home/applications", "/d/home/flatpak/exports/share/applications",
		"/var/lib/flatpak/exports/share/applications", "/opt/share/applications",
		"/var/lib/snapd/desktop/applications",
	}
	if got := DataDirs(); !reflect.DeepEqual(got, want) {
		t.Errorf("set: got %q\nwant %q", got, want)
	}
}

// waitLookup waits until Lookup answers want ("" for no entry).
func waitLookup(t *testing.T, x *Index, class, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		e, ok := x.Lookup(class, "", "")
		if (want == "" && !ok) || (ok && e.ID == want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Lookup(%q) after 10s: got %+v, %v; want id %q", class, e, ok, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRefreshOnChange(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "share", "applications")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	x := openTest(t, "C", d)
	wantLookup(t, x, "Added", "", "", "")

	p := writeEntry(t, d, "added.desktop", app("Added"))
	waitLookup(t, x, "Added", "added")
	writeEntry(t, d, "sub/deeper.desktop", app("Deeper")) // a new subdirectory
	waitLookup(t, x, "sub-deeper", "sub-deeper")
	writeEntry(t, d, "added.desktop", app("Added again"))
	deadline := time.Now().Add(10 * time.Second)
	for e, _ := x.Get("added"); e.Name != "Added again"; e, _ = x.Get("added") {
		if time.Now().After(deadline) {
			t.Fatalf("a rewritten entry: got name %q, want %q", e.Name, "Added again")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	waitLookup(t, x, "Added", "")
}

// TestDirectoryMadeLater: an applications directory that does not exist at
// Open is read as soon as it (and its parents) appear.
func TestDirectoryMadeLater(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "home", ".local", "share", "applications")
	x := openTest(t, "C", d)
	if err := os.MkdirAll(filepath.Join(root, "home", ".local"), 0o755); err != nil {
		t.Fatal(err)
	}
	// unrelated churn beside the path is not a reason to read again, but
	// must not break anything
	writeEntry(t, root, "home/.local/state/x", "x")
	writeEntry(t, d, "late.desktop", app("Late"))
	waitLookup(t, x, "late", "late")
	if err := os.RemoveAll(filepath.Join(root, "home", ".local")); err != nil {
		t.Fatal(err)
	}
	waitLookup(t, x, "late", "")
	writeEntry(t, d, "later.desktop", app("Later"))
	waitLookup(t, x, "later", "later")
}

func TestHostileFiles(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "applications")
	writeEntry(t, d, "huge.desktop", app("Huge", "Comment="+strings.Repeat("x", MaxFileSize)))
	writeEntry(t, d, "longname.desktop", app(strings.Repeat("é", 5000)))
	writeEntry(t, d, "badutf8.desktop", app("Bad \xff\xfe name"))
	target := writeEntry(t, root, "elsewhere/real.desktop", app("Linked", "StartupWMClass=Linked"))
	if err := os.Symlink(target, filepath.Join(d, "linked.desktop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(d, "zero.desktop")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(d, "fifo.desktop"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d, "loop.desktop"), filepath.Join(d, "loop.desktop")); err != nil {
		t.Fatal(err)
	}
	writeEntry(t, root, "linkeddir/inner.desktop", app("Inner"))
	if err := os.Symlink(filepath.Join(root, "linkeddir"), filepath.Join(d, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(d, filepath.Join(d, "self")); err != nil {
		t.Fatal(err)
	}
	x := openTest(t, "C", d) // returns: a FIFO or /dev/zero would hang it

	wantLookup(t, x, "huge", "", "", "")
	wantLookup(t, x, "Linked", "", "", "linked") // a symlink to a regular file is followed
	wantLookup(t, x, "zero", "", "", "")
	wantLookup(t, x, "fifo", "", "", "")
	wantLookup(t, x, "dirlink-inner", "", "", "") // a symlink to a directory is not
	if e, _ := x.Get("longname"); len([]rune(e.Name)) != MaxNameRunes || !strings.HasSuffix(e.Name, "…") {
		t.Errorf("a 5000-rune name: got %d runes, want %d ending in …", len([]rune(e.Name)), MaxNameRunes)
	}
	if e, _ := x.Get("badutf8"); e.Name != "Bad \uFFFD name" {
		t.Errorf("bad UTF-8: got %q, want %q", e.Name, "Bad \uFFFD name")
	}
}

func TestFileCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes MaxFiles files")
	}
	d := filepath.Join(t.TempDir(), "applications")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	body := []byte(app("n"))
	for i := 0; i < MaxFiles+10; i++ {
		if err := os.WriteFile(filepath.Join(d, "a"+strings.Repeat("0", 6-len(itoa(i)))+itoa(i)+".desktop"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := openTest(t, "C", d)
	if x.Len() != MaxFiles || !x.Truncated() {
		t.Errorf("%d files: got %d entries (truncated %v), want %d (truncated true)", MaxFiles+10, x.Len(), x.Truncated(), MaxFiles)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestOpenUsesEnvironment: Open reads $XDG_DATA_HOME and $XDG_DATA_DIRS.
func TestOpenUsesEnvironment(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_DATA_DIRS", filepath.Join(root, "sys"))
	writeEntry(t, root, "home/applications/mine.desktop", app("Mine"))
	writeEntry(t, root, "home/flatpak/exports/share/applications/org.example.Flat.desktop", app("Flat"))
	writeEntry(t, root, "sys/applications/theirs.desktop", app("Theirs"))
	x, err := Open("C")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, id := range []string{"mine", "org.example.Flat", "theirs"} {
		wantLookup(t, x, id, "", "", id)
	}
	if err := x.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	wantLookup(t, x, "mine", "", "", "mine") // still answers after Close
}

// OnChange is called when a reading changes what Lookup answers, and not
// for a change that does not (a file that is no desktop entry).
func TestOnChange(t *testing.T) {
	d := filepath.Join(t.TempDir(), "applications")
	writeEntry(t, d, "a.desktop", app("A"))
	x := openTest(t, "C", d)
	calls := make(chan struct{}, 10)
	x.OnChange(func() { calls <- struct{}{} })
	writeEntry(t, d, "notes.txt", "not an entry")
	writeEntry(t, d, "link.desktop", "[Desktop Entry]\nType=Link\nName=L\n") // read, but no application
	writeEntry(t, d, "b.desktop", app("B"))
	select {
	case <-calls:
	case <-time.After(10 * time.Second):
		t.Fatal("no OnChange call 10s after an entry was added")
	}
	waitLookup(t, x, "b", "b")
	select {
	case <-calls:
		t.Fatal("a second OnChange call for one change")
	case <-time.After(500 * time.Millisecond):
	}
}
