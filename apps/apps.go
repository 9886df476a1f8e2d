// Package apps names windows the way the desktop does: it finds each
// window's desktop entry (its .desktop file) and so its name, localized,
// and its icon. It reads the entries under $XDG_DATA_HOME/applications,
// each $XDG_DATA_DIRS applications directory and the Flatpak and Snap
// export directories once, keeps them in memory, and reads them again
// when inotify says those directories changed; Lookup is a map read.
//
// Matching follows gnome-shell's src/shell-window-tracker.c: a window's
// WM_CLASS instance, then its class, against the entries' StartupWMClass;
// then <instance>.desktop and <class>.desktop as they are, then lowercased
// with spaces as '-', each also with the vendor prefixes "gnome-",
// "fedora-", "mozilla-" and "debian-"; then the window's app id (a
// Flatpak or Snap app id, or the GTK application id) as a desktop id. A
// window that states an app id an entry has is that app's (see Lookup).
//
// An entry with NoDisplay=true is still matched (as GNOME does: a window
// of a program whose entry is hidden from menus is still that program),
// though an entry that shows wins a StartupWMClass both claim. An entry
// with Hidden=true is deleted, as the spec says: it matches nothing and
// hides the entry of the same id in every later directory.
package apps

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// Entry is one desktop entry as the desktop shows it.
type Entry struct {
	ID   string // desktop id without ".desktop", e.g. "org.mozilla.firefox", "firefox-esr"
	Name string // Name[xx] for the index's locale, else Name; exact (neutralize where rendered)
	Icon string // the Icon= value: a theme icon name or an absolute path
}

// Index is the desktop entries of the session, kept fresh by inotify. Its
// methods are safe for concurrent use.
type Index struct {
	langs []string
	dirs  []string // applications directories, earlier ones win
	snap  atomic.Pointer[snapshot]
	w     *watcher
	once  sync.Once

	mu       sync.Mutex
	onChange func() // called after a reading that changed what Lookup answers
}

// snapshot is one complete reading of the directories; never changed once
// built, so Lookup needs no lock.
type snapshot struct {
	byID      map[string]*record
	byWMClass map[string]*record // StartupWMClass → its entry
	files     int                // desktop files read
	truncated bool               // MaxFiles reached: some entries were left out
}

type record struct {
	Entry
	wmClass   string
	noDisplay bool
}

// Open reads the desktop entries under $XDG_DATA_HOME/applications, each
// $XDG_DATA_DIRS applications dir, Flatpak and Snap export dirs; watches
// them with inotify (no polling). locale: "" means from LC_ALL /
// LC_MESSAGES / LANG.
//
// An error means inotify could not be set up (the index is then not
// returned); a directory that is missing or unreadable is not an error:
// it is watched for, and read when it appears.
func Open(locale string) (*Index, error) {
	return open(DataDirs(), locale)
}

func open(dirs []string, locale string) (*Index, error) {
	if locale == "" {
		locale = envLocale()
	}
	x := &Index{langs: localeVariants(locale), dirs: dirs}
	w, err := newWatcher(x.dirs, x.rescan)
	if err != nil {
		return nil, err
	}
	x.w = w
	x.rescan()
	w.start()
	return x, nil
}

// Close stops watching. Lookup still answers from the last reading.
func (x *Index) Close() error {
	var err error
	x.once.Do(func() { err = x.w.close() })
	return err
}

// Len is the number of desktop entries the index holds.
func (x *Index) Len() int { return len(x.snap.Load().byID) }

// Truncated reports whether the last reading stopped at MaxFiles, so some
// entries were left out.
func (x *Index) Truncated() bool { return x.snap.Load().truncated }

// Get is the entry of a desktop id (".desktop" suffix allowed).
func (x *Index) Get(id string) (Entry, bool) {
	r := x.snap.Load().byID[strings.TrimSuffix(id, ".desktop")]
	if r == nil {
		return Entry{}, false
	}
	return r.Entry, true
}

// vendorPrefixes are prepended to a guessed desktop id, as gnome-shell's
// shell-app-system.c does.
var vendorPrefixes = []string{"gnome-", "fedora-", "mozilla-", "debian-"}

// Lookup matches a window the way gnome-shell's shell-window-tracker.c does:
// StartupWMClass against instance then class; <id>.desktop as is, lowercased,
// spaces as '-', with common vendor prefixes; a Flatpak/Snap app id; the GTK
// application id (appID may be "").
//
// When appID is set, a match by WM_CLASS counts first only if its desktop
// id is appID or begins with appID + "." (gnome-shell's check for sandboxed
// windows: a Flatpak's window is never taken for the distribution's
// program of the same class); then appID itself is looked up as a desktop
// id; only when it names no entry does a match by WM_CLASS count whatever
// its id (a GTK application id of a program whose entry is named
// otherwise).
func (x *Index) Lookup(class, instance, appID string) (Entry, bool) {
	s := x.snap.Load()
	if appID != "" {
		if r := s.byWMClassOf(class, instance, func(r *record) bool { return r.ID == appID || strings.HasPrefix(r.ID, appID+".") }); r != nil {
			return r.Entry, true
		}
		for _, id := range []string{appID, strings.ToLower(appID), appID + "_" + appID} {
			if r := s.byID[id]; r != nil {
				return r.Entry, true
			}
		}
	}
	if r := s.byWMClassOf(class, instance, func(*record) bool { return true }); r != nil {
		return r.Entry, true
	}
	return Entry{}, false
}

// byWMClassOf is the entry WM_CLASS names, among those ok accepts:
// StartupWMClass against the instance, then the class; then the desktop id
// heuristics on the instance, then the class.
func (s *snapshot) byWMClassOf(class, instance string, ok func(*record) bool) *record {
	for _, c := range []string{instance, class} {
		if r := s.byWMClass[c]; c != "" && r != nil && ok(r) {
			return r
		}
	}
	for _, c := range []string{instance, class} {
		if c == "" {
			continue
		}
		if r := s.heuristic(c); r != nil && ok(r) {
			return r
		}
		if r := s.heuristic(strings.ReplaceAll(strings.ToLower(c), " ", "-")); r != nil && ok(r) {
			return r
		}
	}
	return nil
}

// heuristic is gnome-shell's lookup_heuristic_basename: the id as it is,
// then with each vendor prefix.
func (s *snapshot) heuristic(id string) *record {
	if r := s.byID[id]; r != nil {
		return r
	}
	for _, p := range vendorPrefixes {
		if r := s.byID[p+id]; r != nil {
			return r
		}
	}
	return nil
}

// DataDirs lists the applications directories in the order the desktop
// reads them, the first one winning an id several hold:
// $XDG_DATA_HOME/applications (default ~/.local/share), the Flatpak
// exports (the user's, then the system's, as flatpak's profile script
// puts them before the others), each of $XDG_DATA_DIRS (default
// /usr/local/share:/usr/share), and Snap's /var/lib/snapd/desktop (which
// snapd appends). A directory is listed once; relative paths are ignored,
// as the XDG base directory spec says.
func DataDirs() []string {
	home := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(home) {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".local", "share")
		} else {
			home = ""
		}
	}
	var shares []string
	if home != "" {
		shares = append(shares, home, filepath.Join(home, "flatpak", "exports", "share"))
	}
	shares = append(shares, "/var/lib/flatpak/exports/share")
	dataDirs := os.Getenv("XDG_DATA_DIRS")
	if dataDirs == "" {
		dataDirs = "/usr/local/share:/usr/share"
	}
	shares = append(shares, filepath.SplitList(dataDirs)...)
	shares = append(shares, "/var/lib/snapd/desktop")
	var out []string
	seen := map[string]bool{}
	for _, s := range shares {
		if !filepath.IsAbs(s) {
			continue
		}
		d := filepath.Join(filepath.Clean(s), "applications")
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// OnChange has f called, from the index's own goroutine, each time a
// reading of the directories changed what Lookup answers (an entry was
// added, removed or changed). One f at a time; nil stops the calls.
func (x *Index) OnChange(f func()) {
	x.mu.Lock()
	x.onChange = f
	x.mu.Unlock()
}

// rescan reads the directories again and swaps the new reading in whole.
// When the reading found directories not watched before, it reads once
// more, so an entry made between the reading and the watch is not missed.
func (x *Index) rescan() {
	old := x.snap.Load()
	for i := 0; i < 3; i++ {
		s, read := scan(x.dirs, x.langs)
		x.snap.Store(s)
		if !x.w.update(read) {
			break
		}
	}
	if old == nil || old.equal(x.snap.Load()) {
		return
	}
	x.mu.Lock()
	f := x.onChange
	x.mu.Unlock()
	if f != nil {
		f()
	}
}

// equal reports whether two readings answer every Lookup alike.
func (s *snapshot) equal(o *snapshot) bool {
	if len(s.byID) != len(o.byID) || len(s.byWMClass) != len(o.byWMClass) {
		return false
	}
	for id, r := range s.byID {
		if q := o.byID[id]; q == nil || *q != *r {
			return false
		}
	}
	for c, r := range s.byWMClass {
		if q := o.byWMClass[c]; q == nil || q.ID != r.ID {
			return false
		}
	}
	return true
}
