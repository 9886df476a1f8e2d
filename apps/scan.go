package apps

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Caps on one reading of the directories, so a directory stuffed with
// files cannot exhaust memory or time.
const (
	MaxFiles = 16384 // .desktop files read; the rest are left out (Truncated)
	MaxNames = 65536 // directory entries looked at, across all directories
	MaxDirs  = 1024  // directories read and watched
	MaxDepth = 8     // subdirectory levels under an applications directory
)

// scan reads every applications directory, earlier ones winning an id, and
// lists the directories it read (to watch them).
func scan(dirs []string, langs []string) (*snapshot, []string) {
	sc := &scanner{
		langs: langs,
		s:     &snapshot{byID: map[string]*record{}, byWMClass: map[string]*record{}},
		taken: map[string]bool{},
	}
	for _, d := range dirs {
		sc.walk(d, "", 0)
	}
	sc.indexWMClasses()
	return sc.s, sc.read
}

type scanner struct {
	langs []string
	s     *snapshot
	taken map[string]bool // ids seen, Hidden ones included
	order []*record       // in reading order, for StartupWMClass ties
	read  []string        // directories read
	names int
}

// walk reads dir, whose desktop ids begin with prefix. Subdirectories are
// entered only when they are directories themselves: a symlink to a
// directory is not followed (no loops), a symlink to a regular file is
// (Flatpak exports are symlinks into the app's deployment).
func (sc *scanner) walk(dir, prefix string, depth int) {
	if len(sc.read) >= MaxDirs || depth > MaxDepth {
		return
	}
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	var ents []os.DirEntry
	for sc.names < MaxNames {
		batch, err := f.ReadDir(256)
		sc.names += len(batch)
		ents = append(ents, batch...)
		if err != nil {
			break
		}
	}
	f.Close()
	sc.read = append(sc.read, dir)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			sc.walk(filepath.Join(dir, name), prefix+name+"-", depth+1)
		case strings.HasSuffix(name, ".desktop") && (e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0):
			id := prefix + strings.TrimSuffix(name, ".desktop")
			if sc.taken[id] || id == "" || len(id) > maxDesktopIDLen || !utf8.ValidString(id) {
				continue
			}
			if sc.s.files >= MaxFiles {
				sc.s.truncated = true
				return
			}
			sc.s.files++
			data, ok := readRegular(filepath.Join(dir, name))
			if !ok {
				continue
			}
			p, ok := parseEntry(data, sc.langs)
			if !ok {
				continue
			}
			sc.taken[id] = true
			if p.hidden {
				continue
			}
			r := &record{Entry: Entry{ID: id, Name: p.name, Icon: p.icon}, wmClass: p.wmClass, noDisplay: p.noDisplay}
			sc.s.byID[id] = r
			sc.order = append(sc.order, r)
		}
	}
}

// indexWMClasses maps each StartupWMClass to its entry as gnome-shell's
// scan_startup_wm_class_to_id does: the first entry in reading order,
// unless a later one's id is the class itself, or the first is NoDisplay
// and a later one shows.
func (sc *scanner) indexWMClasses() {
	for _, r := range sc.order {
		if r.wmClass == "" {
			continue
		}
		old := sc.s.byWMClass[r.wmClass]
		if old == nil || (r.ID == r.wmClass && old.ID != old.wmClass) || (old.noDisplay && !r.noDisplay) {
			sc.s.byWMClass[r.wmClass] = r
		}
	}
}

// readRegular reads a file that is (or whose symlinks lead to) a regular
// file of at most MaxFileSize bytes. It looks before it opens, so a device
// or FIFO is never opened, and checks again what it opened.
func readRegular(path string) ([]byte, bool) {
	st, err := os.Stat(path) // follows symlinks; the kernel bounds the chain
	if err != nil || !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, false
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var fst unix.Stat_t
	if unix.Fstat(fd, &fst) != nil || fst.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil || len(data) > MaxFileSize {
		return nil, false
	}
	return data, true
}
