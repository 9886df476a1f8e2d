package persist

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive advisory lock on the state directory itself, so
// a second daemon of the same user (started on another bus, say) cannot
// interleave its writes with ours. The lock lives as long as the returned
// file stays open; closing it releases the lock.
func lockDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("another antidriftd is already using %s (its lock is held); stop it first", dir)
		}
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return f, nil
}
