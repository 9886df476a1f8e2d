package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

const (
	privateDirMode  os.FileMode = 0o700
	privateFileMode os.FileMode = 0o600
)

// tightenModes makes the state directory (open as opened), the sessions
// directory and every regular file in them private to the user, because
// they hold window titles and plans. It returns one warning per path it had
// to tighten: a looser mode means something (a restore, a hand edit, an old
// version) exposed them, and the person should know.
//
// Each mode is read and changed through the opened file (fstat, fchmod),
// never by path: a file swapped for a link in between would otherwise have
// the daemon change the mode of whatever the link points at. Links and
// whatever is not a regular file are left to setAsideLinks and the opens
// that refuse them.
func tightenModes(dir string, opened *os.File) ([]string, error) {
	var warnings []string
	tighten := func(f *os.File, want os.FileMode) error {
		info, err := f.Stat()
		if err != nil {
			return err
		}
		have := info.Mode().Perm()
		if have&^want == 0 {
			return nil
		}
		if err := f.Chmod(want); err != nil {
			return fmt.Errorf("making %s private: %w", f.Name(), err)
		}
		warnings = append(warnings, fmt.Sprintf(
			"%s was mode %04o, readable by others; tightened it to %04o because it holds private window titles",
			f.Name(), have, want))
		return nil
	}
	tightenTree := func(d *os.File) error {
		if err := tighten(d, privateDirMode); err != nil {
			return err
		}
		entries, err := os.ReadDir(d.Name())
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			f, err := openIn(d, e.Name(), os.O_RDONLY, 0)
			if errors.Is(err, errSymlink) || errors.Is(err, errNotRegular) || errors.Is(err, os.ErrNotExist) {
				continue // swapped since it was listed: not a file to tighten
			}
			if err != nil {
				return err
			}
			err = tighten(f, privateFileMode)
			f.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}

	if err := tightenTree(opened); err != nil {
		return warnings, err
	}
	sessions, err := openDir(filepath.Join(dir, sessionsDirName))
	if errors.Is(err, errSymlink) || errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return warnings, nil // none yet, or a link that setAsideLinks sets aside
	}
	if err != nil {
		return warnings, err
	}
	defer sessions.Close()
	return warnings, tightenTree(sessions)
}
