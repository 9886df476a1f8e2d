package installed

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The Fedora and Arch packages: make rpm (rpmbuild -ba, then rpmlint) and
// make arch (makepkg), each built once per test run, with no network.

// cleanups are the build directories TestMain removes at the end.
var cleanups struct {
	sync.Mutex
	dirs []string
}

func buildDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	cleanups.Lock()
	cleanups.dirs = append(cleanups.dirs, dir)
	cleanups.Unlock()
	// make arch, as root, gives its stage inside to the user it runs
	// makepkg as, who must reach it.
	return dir, os.Chmod(dir, 0o755)
}

// repoRoot is the checkout the tests are in.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

// offline runs the build with no network as root (a network namespace of
// its own, with only a loopback that is down): the packages must build
// from the vendored modules alone.
func offline(argv ...string) *exec.Cmd {
	if os.Getuid() == 0 {
		if _, err := exec.LookPath("unshare"); err == nil {
			return exec.Command("unshare", append([]string{"--net", "--"}, argv...)...)
		}
	}
	return exec.Command(argv[0], argv[1:]...)
}

type distroBuild struct {
	once sync.Once
	pkg  string // the binary package
	out  string // what the build printed
	took time.Duration
	err  error
}

var rpmBuild, archBuild distroBuild

// build runs make target into a fresh directory once, and finds the
// binary package named by glob in it.
func (b *distroBuild) build(t *testing.T, target, glob string, vars ...string) (pkg, out string) {
	t.Helper()
	b.once.Do(func() {
		dir, err := buildDir("antidrift-" + target + "-")
		if err != nil {
			b.err = err
			return
		}
		describe, err := exec.Command("git", "-C", repoRoot(), "describe", "--tags", "--always", "--dirty").Output()
		if err != nil {
			b.err = fmt.Errorf("git describe: %v", err)
			return
		}
		argv := append([]string{"make", "-C", repoRoot(), target, "BUILDDIR=" + dir,
			"VERSION=" + strings.TrimSpace(string(describe))}, vars...)
		start := time.Now()
		// make dist vendors the modules from Go's module cache, which it
		// may fill from the network first; the package build is then
		// offline (and makes dist again, from the cache alone).
		dist := append([]string{argv[0], argv[1], argv[2], "dist"}, argv[4:]...)
		if raw, err := exec.Command(dist[0], dist[1:]...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%s: %v\n%s", strings.Join(dist, " "), err, raw)
			return
		}
		raw, err := offline(argv...).CombinedOutput()
		b.took, b.out = time.Since(start), string(raw)
		if err != nil {
			b.err = fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, raw)
			return
		}
		found, _ := filepath.Glob(filepath.Join(dir, glob))
		if len(found) != 1 {
			b.err = fmt.Errorf("make %s's output in %s: got %v, want one %s", target, dir, found, glob)
			return
		}
		b.pkg = found[0]
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	t.Logf("make %s: %s, in %v", target, filepath.Base(b.pkg), b.took.Round(time.Second))
	return b.pkg, b.out
}

// rpmPackage is the binary RPM make rpm builds (rpmlint included).
func rpmPackage(t *testing.T) (rpm, out string) {
	t.Helper()
	testenv.Need(t, "make", "git", "rpmbuild", "rpmlint", "rpm")
	return rpmBuild.build(t, "rpm", "antidrift-*.x86_64.rpm")
}

// archPackage is the package make arch builds with makepkg. As root, make
// arch runs makepkg as nobody, whose Go build cache is kept between runs
// in the system's temp directory (makepkgCache).
func archPackage(t *testing.T) (pkg, out string) {
	t.Helper()
	testenv.Need(t, "make", "git", "makepkg", "fakeroot", "bsdtar", "setpriv")
	var vars []string
	if os.Getuid() == 0 {
		vars = append(vars, "MAKEPKG_USER=nobody")
		if cache := makepkgCache(); cache != "" {
			vars = append(vars, "MAKEPKG_GOCACHE="+cache)
		}
	}
	return archBuild.build(t, "arch", "antidrift-*.pkg.tar.zst", vars...)
}

// nobodyUID is the user make arch runs makepkg as, when the tests are root.
const nobodyUID = 65534

// makepkgCache is nobody's Go build cache for make arch, kept in the
// shared temp directory: a directory root or nobody owns there, given to
// nobody without following any link; "" (make arch then uses a cache in
// its stage, compiling afresh) if the name is taken by anything else.
func makepkgCache() string {
	cache := filepath.Join(os.TempDir(), "antidrift-makepkg-gocache")
	os.Mkdir(cache, 0o700) // or it is there already: checked below
	fi, err := os.Lstat(cache)
	if err != nil || !fi.IsDir() {
		return ""
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 0 && st.Uid != nobodyUID {
		return ""
	}
	if os.Lchown(cache, nobodyUID, nobodyUID) != nil {
		return ""
	}
	return cache
}

// make rpm builds the binary and source RPMs from dist/rpm/antidrift.spec
// with rpmbuild -ba, offline, and rpmlint finds nothing in them or in the
// spec: no error, and no warning either (each one the package means is
// filtered in dist/rpm/antidrift.rpmlintrc, saying why).
func TestRPMBuildsAndLintsClean(t *testing.T) {
	rpm, out := rpmPackage(t)
	srpms, _ := filepath.Glob(filepath.Join(filepath.Dir(rpm), "antidrift-*.src.rpm"))
	if len(srpms) != 1 {
		t.Errorf("make rpm: got source packages %v, want one .src.rpm (what Copr builds from)", srpms)
	}
	summary := regexp.MustCompile(`(?m)^.*packages and \d+ specfiles checked; (\d+) errors, (\d+) warnings.*$`).FindStringSubmatch(out)
	if summary == nil {
		t.Fatalf("make rpm: got no rpmlint summary in its output, want rpmlint run on the packages and the spec:\n%s", tail(out))
	}
	if summary[1] != "0" || summary[2] != "0" {
		t.Errorf("rpmlint: got %q, want 0 errors and 0 warnings:\n%s", summary[0], tail(out))
	}
	scripts, err := exec.Command("rpm", "-qp", "--scripts", rpm).CombinedOutput()
	if err != nil {
		t.Fatalf("rpm -qp --scripts: %v\n%s", err, scripts)
	}
	if m := regexp.MustCompile(`(?m)^.*\b(enable|preset|start)\b.*$`).Find(scripts); m != nil {
		t.Errorf("the RPM's scriptlets: got %q, want nothing that enables or starts the unit:\n%s", m, scripts)
	}
	t.Logf("rpmlint: %s\nscriptlets:\n%s", summary[0], scripts)
}

// make arch builds the Arch package from dist/arch/PKGBUILD with makepkg,
// offline; it runs nothing at install (no .INSTALL).
func TestArchPackageBuilds(t *testing.T) {
	pkg, _ := archPackage(t)
	files := archFiles(t, pkg)
	for _, meta := range []string{".PKGINFO", ".MTREE"} {
		if !files.has(meta) {
			t.Errorf("%s: got no %s, want pacman's metadata", filepath.Base(pkg), meta)
		}
	}
	if files.has(".INSTALL") {
		t.Errorf("%s: got an .INSTALL script, want none (the package enables and starts nothing)", filepath.Base(pkg))
	}
	info, err := exec.Command("bsdtar", "-xOf", pkg, ".PKGINFO").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkgname = antidrift", "backup = etc/chromium/native-messaging-hosts/org.antidrift.native_host.json"} {
		if !strings.Contains(string(info), want) {
			t.Errorf(".PKGINFO: got\n%s\nwant a line %q", info, want)
		}
	}
}

// fileList is a package's regular files and symbolic links, each as
// "mode /path".
type fileList []string

func (l fileList) has(path string) bool {
	return slices.ContainsFunc(l, func(e string) bool { return strings.HasSuffix(e, " "+path) || e == path })
}

// listed parses lines of "mode path" (mode as ls -l prints it, path
// relative or absolute), keeping regular files and symbolic links.
func listed(lines string, mode, path int) fileList {
	var l fileList
	for _, line := range strings.Split(lines, "\n") {
		f := strings.Fields(line)
		if len(f) <= max(mode, path) || f[mode][0] != '-' && f[mode][0] != 'l' {
			continue
		}
		p := "/" + strings.TrimPrefix(strings.TrimPrefix(f[path], "./"), "/")
		l = append(l, f[mode]+" "+p)
	}
	slices.Sort(l)
	return l
}

func debFiles(t *testing.T, deb string) fileList {
	t.Helper()
	out, err := exec.Command("dpkg-deb", "--contents", deb).Output()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v", err)
	}
	return listed(string(out), 0, 5)
}

func rpmFiles(t *testing.T, rpm string) fileList {
	t.Helper()
	out, err := exec.Command("rpm", "-qp", "--qf", `[%{FILEMODES:perms} %{FILENAMES}\n]`, rpm).Output()
	if err != nil {
		t.Fatalf("rpm -qp: %v", err)
	}
	return listed(string(out), 0, 1)
}

// archFiles lists the package's files; pacman's own metadata (.PKGINFO
// and the like) are listed by name alone.
func archFiles(t *testing.T, pkg string) fileList {
	t.Helper()
	out, err := exec.Command("bsdtar", "-tvf", pkg).Output()
	if err != nil {
		t.Fatalf("bsdtar -tvf: %v", err)
	}
	var l fileList
	for _, e := range listed(string(out), 0, 8) {
		if name := e[strings.Index(e, " ")+1:]; strings.HasPrefix(name, "/.") {
			l = append(l, name[1:])
			continue
		}
		l = append(l, e)
	}
	return l
}

// The .deb, the RPM and the Arch package ship the same files with the same
// modes, all from make install; they differ only where each distribution
// wants its own documentation: the .deb's changelog and copyright file,
// the RPM's and the Arch package's licence file (each of which must be
// there).
func TestPackagesShipTheSameFiles(t *testing.T) {
	testenv.Need(t, "dpkg-deb", "rpm", "bsdtar")
	deb, _ := debPackage(t)
	rpm, _ := rpmPackage(t)
	arch, _ := archPackage(t)
	own := map[string][]string{
		".deb":         {"-rw-r--r-- /usr/share/doc/antidrift/changelog.gz", "-rw-r--r-- /usr/share/doc/antidrift/copyright"},
		"RPM":          {"-rw-r--r-- /usr/share/licenses/antidrift/LICENSE"},
		"Arch package": {"-rw-r--r-- /usr/share/licenses/antidrift/LICENSE"},
	}
	lists := map[string]fileList{".deb": debFiles(t, deb), "RPM": rpmFiles(t, rpm), "Arch package": archFiles(t, arch)}
	for name, l := range lists {
		var kept fileList
		for _, e := range l {
			switch {
			case slices.Contains(own[name], e):
			case name == "Arch package" && strings.HasPrefix(e, "."): // .PKGINFO, .MTREE, .BUILDINFO
			default:
				kept = append(kept, e)
			}
		}
		for _, want := range own[name] {
			if !slices.Contains(l, want) {
				t.Errorf("the %s: got no %s, want it (its distribution's documentation)", name, want)
			}
		}
		lists[name] = kept
	}
	want := lists[".deb"]
	if len(want) < 30 {
		t.Fatalf("the .deb's files: got %d, want the whole install (binaries, unit, extension, applet, ...):\n%s", len(want), strings.Join(want, "\n"))
	}
	for _, name := range []string{"RPM", "Arch package"} {
		got := lists[name]
		var missing, extra []string
		for _, e := range want {
			if !slices.Contains(got, e) {
				missing = append(missing, e)
			}
		}
		for _, e := range got {
			if !slices.Contains(want, e) {
				extra = append(extra, e)
			}
		}
		if len(missing)+len(extra) > 0 {
			t.Errorf("the %s's files against the .deb's: got %d more (%s) and %d fewer (%s), want the same",
				name, len(extra), strings.Join(extra, ", "), len(missing), strings.Join(missing, ", "))
		}
	}
	for _, e := range want {
		if strings.Contains(e, ".wants/") || strings.Contains(e, ".requires/") {
			t.Errorf("the packages: got %s, want no unit enabled by a link", e)
		}
	}
	t.Logf("%d files in each package, besides its own documentation", len(want))
}

// packagedFile is the contents of path (absolute) inside a package: the
// .deb through dpkg-deb's data tarball, the RPM and the Arch package read
// by bsdtar (libarchive reads both).
func packagedFile(t *testing.T, pkg, path string) []byte {
	t.Helper()
	var cmd *exec.Cmd
	switch {
	case strings.HasSuffix(pkg, ".deb"):
		cmd = exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xOf - ".$2"`, "sh", pkg, path)
	case strings.HasSuffix(pkg, ".rpm"):
		cmd = exec.Command("bsdtar", "-xOf", pkg, "."+path)
	default:
		cmd = exec.Command("bsdtar", "-xOf", pkg, strings.TrimPrefix(path, "/"))
	}
	out, err := cmd.Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("%s from %s: %v (%d bytes)", path, filepath.Base(pkg), err, len(out))
	}
	return out
}

// Every package's programs are static binaries, as the .deb's are: no
// program interpreter (the dynamic loader) and no shared library needed.
func TestPackagedBinariesAreStatic(t *testing.T) {
	testenv.Need(t, "dpkg-deb", "bsdtar")
	deb, _ := debPackage(t)
	rpm, _ := rpmPackage(t)
	arch, _ := archPackage(t)
	for _, pkg := range []string{deb, rpm, arch} {
		for _, bin := range []string{"/usr/bin/antidriftd", "/usr/bin/antidrift", "/usr/bin/antidrift-native-host"} {
			f, err := elf.NewFile(bytes.NewReader(packagedFile(t, pkg, bin)))
			if err != nil {
				t.Fatalf("%s in %s: %v", bin, filepath.Base(pkg), err)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("%s in %s: got a program interpreter, want a static binary", bin, filepath.Base(pkg))
				}
			}
			if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
				t.Errorf("%s in %s: got shared libraries %v, want none", bin, filepath.Base(pkg), libs)
			}
			f.Close()
		}
	}
}
