package apps

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// pngOf is a real PNG of a square of size pixels.
func pngOf(t *testing.T, size int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const testSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><rect width="16" height="16" fill="#3a7"/></svg>`

func put(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// iconWorld is a session whose every data directory is a test's: the
// host's icons cannot answer for it.
func iconWorld(t *testing.T) (home, data string) {
	t.Helper()
	root := t.TempDir()
	home, data = filepath.Join(root, "home"), filepath.Join(root, "home", ".local", "share")
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("XDG_DATA_DIRS", filepath.Join(root, "usr", "share"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return home, data
}

func TestIconFileFindsThemeIconsBySize(t *testing.T) {
	home, data := iconWorld(t)
	sys := os.Getenv("XDG_DATA_DIRS")
	hi := filepath.Join(data, "icons", "hicolor")
	p48 := put(t, filepath.Join(hi, "48x48", "apps", "org.example.Editor.png"), pngOf(t, 48))
	p16 := put(t, filepath.Join(sys, "icons", "hicolor", "16x16", "apps", "org.example.Editor.png"), pngOf(t, 16))
	svg := put(t, filepath.Join(hi, "scalable", "apps", "org.example.Editor.svg"), []byte(testSVG))
	onlyPNG := put(t, filepath.Join(sys, "icons", "hicolor", "128x128", "apps", "term.png"), pngOf(t, 128))
	breeze := put(t, filepath.Join(sys, "icons", "hicolor", "apps", "32", "breezy.png"), pngOf(t, 32))
	pix := put(t, filepath.Join(sys, "pixmaps", "oldapp.png"), pngOf(t, 32))
	for _, c := range []struct {
		icon string
		size int
		want string
	}{
		{"org.example.Editor", 48, p48},  // the size asked
		{"org.example.Editor", 16, p16},  // from a later data directory
		{"org.example.Editor", 32, svg},  // no 32: scalable
		{"org.example.Editor", 256, svg}, // none larger: scalable
		{"org.example.Editor.png", 48, p48},
		{"term", 32, onlyPNG}, // the nearest larger
		{"breezy", 48, breeze},
		{"oldapp", 48, pix},
		{"oldapp.png", 48, pix},
		{p48, 16, p48}, // an absolute path as it is
	} {
		got, ok := IconFile(c.icon, c.size)
		if !ok || got != c.want {
			t.Errorf("IconFile(%q, %d): got %q, %v; want %q", c.icon, c.size, got, ok, c.want)
		}
	}

	// The current GTK theme comes first, hicolor after it.
	mine := put(t, filepath.Join(home, ".icons", "Mine", "48x48", "apps", "org.example.Editor.png"), pngOf(t, 48))
	put(t, filepath.Join(home, ".config", "gtk-3.0", "settings.ini"), []byte("[Settings]\ngtk-icon-theme-name = Mine\n"))
	if got, ok := IconFile("org.example.Editor", 48); got != mine {
		t.Errorf("IconFile with the theme Mine: got %q, %v; want %q", got, ok, mine)
	}
	if got, _ := IconFile("term", 32); got != onlyPNG {
		t.Errorf("IconFile(term) with the theme Mine: got %q, want hicolor's %q", got, onlyPNG)
	}
}

// A Flatpak export is a symlink into the app's tree: followed to a
// regular file. What is not a regular PNG or SVG, too big, or a name that
// climbs out of the theme is no icon.
func TestIconFileTakesOnlyRegularIcons(t *testing.T) {
	_, data := iconWorld(t)
	hi := filepath.Join(data, "icons", "hicolor", "48x48", "apps")
	target := put(t, filepath.Join(data, "flatpak", "app", "org.example.Flat", "export", "org.example.Flat.png"), pngOf(t, 48))
	link := filepath.Join(data, "flatpak", "exports", "share", "icons", "hicolor", "48x48", "apps", "org.example.Flat.png")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got, ok := IconFile("org.example.Flat", 48); got != link {
		t.Errorf("a Flatpak's exported icon: got %q, %v; want %q", got, ok, link)
	}

	os.MkdirAll(hi, 0o755)
	if err := syscall.Mkfifo(filepath.Join(hi, "fifo.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(hi, "zero.png")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(hi, "dir.png"), 0o755)
	put(t, filepath.Join(hi, "huge.png"), append(pngOf(t, 8), make([]byte, MaxIconSize)...))
	put(t, filepath.Join(hi, "notpng.png"), []byte("<svg onload=alert(1)>"))
	put(t, filepath.Join(hi, "scalable.xpm"), []byte("/* XPM */"))
	secret := put(t, filepath.Join(data, "secret.png"), pngOf(t, 8))
	for _, icon := range []string{"fifo", "zero", "dir", "huge", "scalable", "nothing", "", "../../../secret", "48x48/apps/org.example.Flat", "..", "a\x00b", "/etc/passwd", filepath.Join(hi, "fifo.png")} {
		if got, ok := IconFile(icon, 48); ok {
			t.Errorf("IconFile(%q): got %q, want no icon", icon, got)
		}
	}
	if _, ok := IconFile(secret, 48); !ok {
		t.Errorf("IconFile(%q), an absolute path to a PNG: got none, want it", secret)
	}
	// A file named .png that is not one is not embedded as one.
	if _, mime, ok := IconData("notpng", 48); ok {
		t.Errorf("IconData of a .png that holds an SVG: got %s, want nothing", mime)
	}
	if d, mime, ok := IconData("org.example.Flat", 48); !ok || mime != "image/png" || !bytes.Equal(d, pngOf(t, 48)) {
		t.Errorf("IconData(org.example.Flat): got %d bytes %q %v, want the PNG", len(d), mime, ok)
	}
	put(t, filepath.Join(data, "icons", "hicolor", "scalable", "apps", "vec.svg"), []byte(testSVG))
	if d, mime, ok := IconData("vec", 48); !ok || mime != "image/svg+xml" || !strings.Contains(string(d), "<svg") {
		t.Errorf("IconData(vec): got %q %q %v, want the SVG", d, mime, ok)
	}
}

// A symlink into /proc is a "regular file" to stat (size 0) whose bytes are
// another process's memory: an Icon= or a desktop entry that leads there
// must never be read, so a process's environment (its secrets) or command
// line cannot be embedded in the HTML report as an "SVG", nor read as an
// entry.
func TestProcFilesAreNeverRead(t *testing.T) {
	iconWorld(t)
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"TOKEN=hunter2", "X=<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n[Desktop Entry]\nType=Application\nName=From proc"}
	if err := cmd.Start(); err != nil {
		t.Skipf("sleep: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	environ := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)

	icon := filepath.Join(t.TempDir(), "leak.svg")
	if err := os.Symlink(environ, icon); err != nil {
		t.Fatal(err)
	}
	if d, mime, ok := IconData(icon, 48); ok {
		t.Errorf("IconData(%s → %s): got %s %q, want no icon", icon, environ, mime, d)
	}
	if got, ok := IconFile(icon, 48); ok {
		t.Errorf("IconFile(%s → %s): got %q, want no icon", icon, environ, got)
	}
	d := filepath.Join(t.TempDir(), "applications")
	os.MkdirAll(d, 0o755)
	if err := os.Symlink(environ, filepath.Join(d, "proc.desktop")); err != nil {
		t.Fatal(err)
	}
	x := openTest(t, "C", d)
	if e, ok := x.Get("proc"); ok {
		t.Errorf("a desktop entry linked to %s: got %+v, want none", environ, e)
	}
}
