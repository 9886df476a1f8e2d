package apps

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxIconSize is the largest icon file IconFile returns and IconData
// reads: an application icon is a few KB (a 256×256 PNG well under
// 100 KB), and the HTML report embeds every icon it shows.
const MaxIconSize = MaxFileSize

// maxIconDirs bounds the directories one lookup lists in a theme (its
// size and category directories, in every data directory), so a theme
// directory stuffed with subdirectories costs a bounded time.
const maxIconDirs = 2048

// IconFile is the file of a desktop entry's Icon= value for showing at
// size pixels: an absolute path as it is, when it names a PNG or SVG; a
// theme icon name looked up as the icon theme spec does, more simply —
// in the current GTK icon theme (gtk-icon-theme-name in
// $XDG_CONFIG_HOME/gtk-3.0/settings.ini or gtk-4.0's), then hicolor, under
// ~/.icons and icons/ of each data directory (DataDirs: $XDG_DATA_HOME,
// the Flatpak exports, $XDG_DATA_DIRS, Snap's), preferring a PNG of the
// size asked, then an SVG, then the nearest larger PNG, then the nearest
// smaller; then pixmaps/ of each data directory. Only a PNG or SVG that
// is, or whose symlinks lead to, a regular file of at most MaxIconSize
// bytes is returned (Flatpak's exports are symlinks into the app's tree).
// A name holding a '/' that is not an absolute path, or "..", is no name.
func IconFile(icon string, size int) (path string, ok bool) {
	if icon == "" || strings.ContainsRune(icon, 0) {
		return "", false
	}
	if filepath.IsAbs(icon) {
		icon = filepath.Clean(icon)
		if iconKind(icon) == "" || !iconRegular(icon) {
			return "", false
		}
		return icon, true
	}
	if strings.ContainsRune(icon, '/') || icon == "." || icon == ".." {
		return "", false
	}
	// Icon=firefox.png is an old habit the spec tolerates: the name is
	// without its extension.
	name := icon
	for _, ext := range []string{".png", ".svg", ".xpm"} {
		name = strings.TrimSuffix(name, ext)
	}
	if name == "" {
		return "", false
	}
	shares := iconShares()
	var themes []string
	if t := currentIconTheme(); t != "" && t != "hicolor" {
		themes = append(themes, t)
	}
	themes = append(themes, "hicolor")
	for _, theme := range themes {
		if p, ok := inTheme(shares, theme, name, size); ok {
			return p, true
		}
	}
	for _, share := range shares {
		for _, ext := range []string{".png", ".svg"} {
			if p := filepath.Join(share, "pixmaps", name+ext); iconRegular(p) {
				return p, true
			}
		}
	}
	return "", false
}

// IconData is the icon's bytes and media type ("image/png",
// "image/svg+xml") for embedding, read as IconFile found it: a regular
// file (no device or FIFO is opened) of at most MaxIconSize bytes, whose
// content is what its name says (a PNG's signature; an SVG's <svg).
func IconData(icon string, size int) (data []byte, mime string, ok bool) {
	path, ok := IconFile(icon, size)
	if !ok {
		return nil, "", false
	}
	data, ok = readRegular(path)
	if !ok {
		return nil, "", false
	}
	switch iconKind(path) {
	case "png":
		if !strings.HasPrefix(string(data), "\x89PNG\r\n\x1a\n") {
			return nil, "", false
		}
		return data, "image/png", true
	case "svg":
		if !strings.Contains(string(data[:min(len(data), 4096)]), "<svg") {
			return nil, "", false
		}
		return data, "image/svg+xml", true
	}
	return nil, "", false
}

// iconKind is "png" or "svg" by a file's name, "" for any other.
func iconKind(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "png"
	case ".svg":
		return "svg"
	}
	return ""
}

// iconRegular says whether path is (or its symlinks lead to) a regular
// file of 1 to MaxIconSize bytes on a real file system (not /proc or /sys:
// see readRegular).
func iconRegular(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > MaxIconSize {
		return false
	}
	var fs unix.Statfs_t
	return unix.Statfs(path, &fs) == nil && !pseudoFS(int64(fs.Type))
}

// iconShares are the data directories icons are looked up in: the
// parents of DataDirs' applications directories, in their order.
func iconShares() []string {
	var out []string
	for _, apps := range DataDirs() {
		out = append(out, filepath.Dir(apps))
	}
	return out
}

// themeDirs are a theme's directories: ~/.icons/<theme>, then
// <share>/icons/<theme> for each share.
func themeDirs(shares []string, theme string) []string {
	var out []string
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		out = append(out, filepath.Join(h, ".icons", theme))
	}
	for _, s := range shares {
		out = append(out, filepath.Join(s, "icons", theme))
	}
	return out
}

// candidate is an icon file found in a theme, with the size its directory
// holds (0: scalable).
type candidate struct {
	path string
	size int
}

// inTheme finds name in theme: every size directory of the theme in every
// share, in both layouts themes use (48x48/apps, as hicolor, and apps/48,
// as Breeze), the best by size.
func inTheme(shares []string, theme, name string, size int) (string, bool) {
	var found []candidate
	listed := 0
	for _, dir := range themeDirs(shares, theme) {
		top, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, a := range top {
			if !a.IsDir() && a.Type()&os.ModeSymlink == 0 {
				continue
			}
			subs, err := os.ReadDir(filepath.Join(dir, a.Name()))
			if listed++; err != nil || listed > maxIconDirs {
				continue
			}
			for _, b := range subs {
				sz, ok := dirSize(a.Name())
				if !ok {
					sz, ok = dirSize(b.Name())
				}
				if !ok {
					continue
				}
				for _, ext := range []string{".png", ".svg"} {
					p := filepath.Join(dir, a.Name(), b.Name(), name+ext)
					if !iconRegular(p) {
						continue
					}
					c := candidate{p, sz}
					if ext == ".svg" {
						c.size = 0 // drawn at any size, wherever it is
					} else if sz == 0 {
						continue // a PNG in scalable/: no size to judge it by
					}
					found = append(found, c)
				}
			}
		}
	}
	if len(found) == 0 {
		return "", false
	}
	best := found[0]
	for _, c := range found[1:] {
		if better(c, best, size) {
			best = c
		}
	}
	return best.path, true
}

// dirSize reads a theme directory's name as its icons' size: "48x48" and
// "48" are 48, "scalable" is 0 (any size); "48x48@2" is 96. Symbolic
// icons (monochrome, for panels) are not an app's face.
func dirSize(name string) (int, bool) {
	if name == "scalable" {
		return 0, true
	}
	scale := 1
	if base, s, ok := strings.Cut(name, "@"); ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 4 {
			return 0, false
		}
		name, scale = base, n
	}
	if w, h, ok := strings.Cut(name, "x"); ok {
		if w != h {
			return 0, false
		}
		name = w
	}
	n, err := strconv.Atoi(name)
	if err != nil || n < 8 || n > 1024 {
		return 0, false
	}
	return n * scale, true
}

// better says whether a is a better icon than b for size: the exact
// size, then scalable, then the nearest larger, then the nearest smaller.
// Earlier candidates (earlier shares) win ties.
func better(a, b candidate, size int) bool {
	rank := func(c candidate) (int, int) {
		switch {
		case c.size == size:
			return 0, 0
		case c.size == 0:
			return 1, 0
		case c.size > size:
			return 2, c.size - size
		}
		return 3, size - c.size
	}
	ra, da := rank(a)
	rb, db := rank(b)
	return ra < rb || (ra == rb && da < db)
}

// currentIconTheme is gtk-icon-theme-name from GTK's settings.ini (4.0,
// then 3.0), "" when none says. (GNOME keeps it in dconf, which costs a
// process to ask: hicolor, where applications install their icons, is
// looked in anyway.)
func currentIconTheme() string {
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(cfg) {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cfg = filepath.Join(h, ".config")
	}
	for _, v := range []string{"gtk-4.0", "gtk-3.0"} {
		data, ok := readRegular(filepath.Join(cfg, v, "settings.ini"))
		if !ok {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			k, val, ok := strings.Cut(sc.Text(), "=")
			if ok && strings.TrimSpace(k) == "gtk-icon-theme-name" {
				t := strings.Trim(strings.TrimSpace(val), `"`)
				if t != "" && !strings.ContainsAny(t, "/\x00") && t != "." && t != ".." {
					return t
				}
			}
		}
	}
	return ""
}
