package testenv

import (
	"io/fs"
	"os"
	"path/filepath"
)

// CopyTree copies the directories and regular files under src to dst,
// making directories with dirMode and files with fileMode.
func CopyTree(src, dst string, dirMode, fileMode os.FileMode) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, dirMode)
		}
		return copyFile(path, to, fileMode)
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, mode)
}

// chownTree gives everything under dir to uid (and the group of that number).
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, uid)
	})
}
