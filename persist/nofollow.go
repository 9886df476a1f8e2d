package persist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Nothing in the state directory is followed through a symbolic link. A
// link planted where audit.jsonl, state.json, pending.spare or sessions/
// belongs would otherwise have the daemon truncate and append to whatever
// file it points at, write window titles wherever it points, or adopt and
// seal a summary someone forged. So every file here is opened with
// O_NOFOLLOW, a session's log relative to sessions/ opened the same way,
// and Open sets aside each link it finds (setAsideLinks), the way damaged
// files are set aside: renamed, never followed, never deleted.
//
// The state directory's own path is the person's choice (XDG_STATE_HOME,
// --state-dir) and may lead through links, as ~/.ssh may; what guards it is
// that it must belong to the user and be writable by no one else
// (checkPrivateDir), so nobody else can plant anything in it.

var (
	errSymlink    = errors.New("is a symbolic link, and antidrift never follows links in its state directory")
	errNotRegular = errors.New("is not a regular file")
)

// openFile opens path without following a symbolic link in its last
// component, and only if it is a regular file (a directory with
// O_DIRECTORY). O_NONBLOCK during the open keeps a FIFO planted in a
// file's place from hanging the daemon; it is cleared before returning.
func openFile(path string, flags int, perm os.FileMode) (*os.File, error) {
	return openIn(nil, path, flags, perm)
}

// openIn is openFile for name inside the open directory dir (nil: name is
// a path), so no link in dir's own path is followed after dir was opened.
func openIn(dir *os.File, name string, flags int, perm os.FileMode) (*os.File, error) {
	dirfd, path := unix.AT_FDCWD, name
	if dir != nil {
		dirfd, path = int(dir.Fd()), filepath.Join(dir.Name(), name)
	}
	fd, err := unix.Openat(dirfd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, uint32(perm))
	// A link is ELOOP, or ENOTDIR with O_DIRECTORY.
	if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) && isSymlink(path) {
		err = errSymlink
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err == nil {
		want, wrong := uint32(unix.S_IFREG), errNotRegular
		if flags&unix.O_DIRECTORY != 0 {
			want, wrong = unix.S_IFDIR, unix.ENOTDIR
		}
		if st.Mode&unix.S_IFMT != want {
			err = wrong
		} else {
			err = unix.SetNonblock(fd, false)
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openDir opens the directory at path for reading its entries and opening
// files in it, refusing a symbolic link in its place.
func openDir(path string) (*os.File, error) {
	return openFile(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// ReadStateFile is os.ReadFile as the store reads its files: never
// through a symbolic link, and only a regular file. Tools that read the
// directory beside the daemon (antidrift verify --journal) use it too.
func ReadStateFile(path string) ([]byte, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// isSymlink reports whether path itself is a symbolic link.
func isSymlink(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode()&os.ModeSymlink != 0
}

// checkPrivateDirs refuses the state directory dir (open as f), or its
// sessions/, when it belongs to another user or group or others may write
// in it, as ssh refuses such a ~/.ssh: whoever can write in it can plant links and files there,
// or swap the record for another. Looser read bits are only tightened
// (tightenModes); these two are refused, because what was planted already
// cannot be told apart from the person's own files. The message names the
// directory and the fix.
func checkPrivateDirs(dir string, f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := checkPrivateDir("the state directory", dir, info); err != nil {
		return err
	}
	sessions := filepath.Join(dir, sessionsDirName)
	if info, err := os.Lstat(sessions); err == nil && info.IsDir() {
		return checkPrivateDir("the sessions directory", sessions, info)
	}
	return nil
}

// checkPrivateDir is checkPrivateDirs for the directory at path, which
// the message calls what.
func checkPrivateDir(what, path string, info os.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("cannot tell who owns %s %s", what, path)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s %s belongs to uid %d, not to you (uid %d): its owner can read your window titles and rewrite your record, so antidriftd will not use it. "+
			"Fix: if it is yours, `chown -R %d %s`; otherwise point XDG_STATE_HOME (or --state-dir) at a directory of your own",
			what, path, st.Uid, uid, uid, path)
	}
	if mode := info.Mode().Perm(); mode&0o022 != 0 {
		return fmt.Errorf("%s %s is mode %04o: group or others can write in it and could have planted files or links in your record, so antidriftd will not use it. "+
			"Fix: check what is in it, then `chmod 700 %s`",
			what, path, mode, path)
	}
	return nil
}

// setAsideLinks sets aside every symbolic link standing where one of the
// store's files or sessions/ belongs (and in sessions/, where a session's
// log belongs), with the damaged-file mechanism (setAside): the link is
// renamed to <name>.symlink-<unix>, its target neither read nor changed,
// and one sentence per link names it in problems. A link that cannot be
// renamed (a read-only disk) is named too, and stays refused by every open.
func (s *Store) setAsideLinks() (problems []string) {
	sessions := filepath.Join(s.dir, sessionsDirName)
	paths := []string{s.statePath(), s.audit.path, s.spare.path, sessions, filepath.Join(s.dir, deviceFileName), filepath.Join(s.dir, seenFileName)}
	if entries, err := os.ReadDir(sessions); err == nil && !isSymlink(sessions) {
		for _, e := range entries {
			if e.Type()&os.ModeSymlink != 0 {
				paths = append(paths, filepath.Join(sessions, e.Name()))
			}
		}
	}
	for _, path := range paths {
		if !isSymlink(path) {
			continue
		}
		target, _ := os.Readlink(path)
		rel, _ := filepath.Rel(s.dir, path)
		moved, err := s.setAside(path, "symlink")
		if err != nil {
			// A read-only disk: the daemon still starts, and every open
			// refuses the link, so nothing goes through it meanwhile.
			problems = append(problems, fmt.Sprintf(
				"%s is a symbolic link (to %s) that could not be set aside (%v); antidrift never follows links in its state directory, so what it would hold is not read or saved",
				rel, strconv.Quote(target), err))
			continue
		}
		problems = append(problems, fmt.Sprintf(
			"%s was a symbolic link (to %s); antidrift never follows links in its state directory, so it moved the link aside as %s without reading or changing what it points to",
			rel, strconv.Quote(target), filepath.Base(moved)))
	}
	return problems
}
