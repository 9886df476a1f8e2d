package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data so that a crash at any moment
// leaves either the old file or the new one, never a mix: the bytes go to a
// temp file in the same directory, are fsynced, renamed over path, and the
// rename is made durable by fsyncing the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := writeDurableTemp(path, data)
	if err != nil {
		return err
	}
	return commitTemp(tmp, path)
}

// writeDurableTemp is the first half of writeFileAtomic: it writes data to a
// fresh temp file beside path (os.CreateTemp makes it 0600) and fsyncs it. Until commitTemp runs,
// path is untouched; a crash here leaves only a stray ".<name>.tmp-*" file
// that nothing reads.
func writeDurableTemp(path string, data []byte) (tmpPath string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// commitTemp is the second half of writeFileAtomic: rename, then fsync the
// directory so the rename itself survives a crash.
//
// A symbolic link in path's place is refused rather than replaced: the
// rename would not follow it, but it would delete it, and links found in
// the state directory are set aside, never deleted.
func commitTemp(tmpPath, path string) error {
	if isSymlink(path) {
		os.Remove(tmpPath)
		return &os.PathError{Op: "replace", Path: path, Err: errSymlink}
	}
	if err := os.Rename(tmpPath, path); err != nil {
		os.Remove(tmpPath)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory, making creations, renames and removals of its
// entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// openAppend opens name in dir (nil: name is a path) for appending,
// creating it 0600 if needed, and never through a symbolic link. A newly
// created file's directory entry is fsynced, so a line fsynced into it is
// not lost with the entry.
func openAppend(dir *os.File, name string) (*os.File, error) {
	const flags = os.O_RDWR | os.O_APPEND
	f, err := openIn(dir, name, flags|os.O_CREATE|os.O_EXCL, privateFileMode)
	if errors.Is(err, os.ErrExist) {
		return openIn(dir, name, flags, privateFileMode)
	}
	if err != nil {
		return nil, err
	}
	if dir != nil {
		err = dir.Sync()
	} else {
		err = syncDir(filepath.Dir(name))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// unusedName returns base if nothing exists there, else base-2, base-3, …:
// a place to set damaged bytes aside without overwriting earlier ones. The
// directory lock keeps another daemon from racing us to the name.
func unusedName(base string) (string, error) {
	name := base
	for n := 2; ; n++ {
		_, err := os.Lstat(name)
		if os.IsNotExist(err) {
			return name, nil
		}
		if err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// appendDurably appends data to path (creating it 0600) in one write and
// fsyncs it, so the bytes are on disk when it returns nil. When it fails
// it cuts the file back to its old length, so a write that ran out of
// space halfway leaves no unfinished line behind: those bytes were never
// acknowledged, and the caller still holds what they said. (If even that
// fails, the file may end mid-line; the caller must look before trusting
// it again.)
func appendDurably(path string, data []byte) error {
	f, err := openAppend(nil, path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if err != nil {
		if terr := f.Truncate(info.Size()); terr == nil {
			f.Sync()
		}
		return err
	}
	return f.Close()
}
