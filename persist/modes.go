package persist

import (
	"fmt"
	"os"
	"path/filepath"
)

const (
	privateDirMode  os.FileMode = 0o700
	privateFileMode os.FileMode = 0o600
)

// tightenModes makes the state directory, the sessions directory and every
// regular file in them private to the user, because they hold window titles
// and plans. It returns one warning per path it had to tighten: a looser
// mode means something (a restore, a hand edit, an old version) exposed
// them, and the person should know.
func tightenModes(dir string) ([]string, error) {
	var warnings []string
	tighten := func(path string, want os.FileMode) error {
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		have := info.Mode().Perm()
		if have&^want == 0 {
			return nil
		}
		if err := os.Chmod(path, want); err != nil {
			return fmt.Errorf("making %s private: %w", path, err)
		}
		warnings = append(warnings, fmt.Sprintf(
			"%s was mode %04o, readable by others; tightened it to %04o because it holds private window titles",
			path, have, want))
		return nil
	}
	tightenTree := func(dir string) error {
		if err := tighten(dir, privateDirMode); err != nil {
			return err
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				if err := tighten(filepath.Join(dir, e.Name()), privateFileMode); err != nil {
					return err
				}
			}
		}
		return nil
	}

	if err := tightenTree(dir); err != nil {
		return warnings, err
	}
	sessions := filepath.Join(dir, sessionsDirName)
	if info, err := os.Lstat(sessions); err == nil && info.IsDir() {
		if err := tightenTree(sessions); err != nil {
			return warnings, err
		}
	} else if err != nil && !os.IsNotExist(err) {
		return warnings, err
	}
	return warnings, nil
}
