package kwin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// scriptDir is where the daemon writes the scripts it asks KWin to run. KWin
// runs them with full power over every window of the session, so no other
// user may be able to change them: the directory and its parent under
// $XDG_RUNTIME_DIR are the user's own, mode 0700, and not symlinks. A script
// is written under a temporary name and renamed into place, so KWin never
// reads half of one.
type scriptDir string

// openScriptDir makes (or checks) $runtimeDir/antidrift/kwin.
func openScriptDir(runtimeDir string) (scriptDir, error) {
	if runtimeDir == "" {
		return "", errors.New("XDG_RUNTIME_DIR is not set, so there is no private place to put antidrift's KWin script")
	}
	if !filepath.IsAbs(runtimeDir) {
		return "", fmt.Errorf("XDG_RUNTIME_DIR %q is not an absolute path", runtimeDir)
	}
	dir := runtimeDir
	for _, part := range []string{"antidrift", "kwin"} {
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := makePrivate(dir); err != nil {
			return "", err
		}
	}
	return scriptDir(dir), nil
}

// makePrivate checks that dir is a real directory of ours and takes away
// any access others have to it.
func makePrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (a symlink?); refusing to put scripts for KWin there", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to us; refusing to put scripts for KWin there", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// write puts text in the file name atomically and returns its path.
func (d scriptDir) write(name, text string) (string, error) {
	f, err := os.CreateTemp(string(d), "."+name+"-*")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(string(d), name)
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return path, nil
}

// remove deletes the file name; it is not an error if it is gone.
func (d scriptDir) remove(name string) {
	os.Remove(filepath.Join(string(d), name))
}
