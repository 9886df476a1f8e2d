package testenv

// Helpers for the reliability suites: seeds, soak scaling, fast and
// failing state directories, and a godbus client on a private bus.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"
)

// SoakEnv scales the reliability suites up: ANTIDRIFT_SOAK=1 (make soak)
// runs ten times the rounds, calls and sequences of a normal make test.
const SoakEnv = "ANTIDRIFT_SOAK"

// SeedEnv pins the seed of every randomized test, to replay a failure:
// ANTIDRIFT_SEED=<the seed the failing run logged>.
const SeedEnv = "ANTIDRIFT_SEED"

// Soak reports whether ANTIDRIFT_SOAK=1.
func Soak() bool { return os.Getenv(SoakEnv) == "1" }

// Scale returns n, or 10·n under ANTIDRIFT_SOAK=1.
func Scale(n int) int {
	if Soak() {
		return 10 * n
	}
	return n
}

// Seed returns the seed for a randomized test — ANTIDRIFT_SEED when set,
// else one from the clock — and logs it, so any failure can be replayed.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not an unsigned integer", SeedEnv, s)
		}
		seed = v
	}
	t.Logf("seed %d (replay with %s=%d)", seed, SeedEnv, seed)
	return seed
}

// FastDir returns a fresh directory on a RAM file system (/dev/shm) where
// fsync costs nothing, for tests that make thousands of transitions and
// test the logic rather than the disk. It falls back to t.TempDir(). The
// directory is removed at cleanup.
func FastDir(t testing.TB) string {
	t.Helper()
	var fs unix.Statfs_t
	if unix.Statfs("/dev/shm", &fs) == nil && fs.Type == unix.TMPFS_MAGIC && unix.Access("/dev/shm", unix.W_OK) == nil {
		dir, err := os.MkdirTemp("/dev/shm", "antidrift-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// Mount is a small tmpfs mounted for one test, to fill up or make
// read-only under a running daemon.
type Mount struct {
	Dir  string
	opts string
}

// Tmpfs mounts a tmpfs of size (e.g. "64k") with mode 0700 at a fresh
// directory and unmounts it at cleanup. It needs root (CAP_SYS_ADMIN): when
// not root, or when the kernel refuses the mount (a container without the
// capability), the test is skipped and says which — this is a limit of the
// machine, not a missing package, so ANTIDRIFT_E2E=require does not turn it
// into a failure.
func Tmpfs(t testing.TB, size string) *Mount {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("mounting a tmpfs needs root; running as uid %d", os.Geteuid())
	}
	dir := filepath.Join(tempDir(t), "mnt")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	m := &Mount{Dir: dir, opts: "size=" + size + ",mode=0700"}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, m.opts); err != nil {
		t.Skipf("cannot mount a tmpfs at %s (%v): this machine does not permit mounts", dir, err)
	}
	t.Cleanup(func() {
		// Lazily, so a process still holding a file there cannot keep it.
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return m
}

// ReadOnly remounts the tmpfs read-only. The kernel refuses (EBUSY) while
// any file on it is open for writing, so call it when the daemon has none
// open (no active session: raw logs stay open only while one runs).
func (m *Mount) ReadOnly(t testing.TB) {
	t.Helper()
	m.remount(t, unix.MS_RDONLY)
}

// ReadWrite remounts the tmpfs read-write.
func (m *Mount) ReadWrite(t testing.TB) {
	t.Helper()
	m.remount(t, 0)
}

func (m *Mount) remount(t testing.TB, flags uintptr) {
	t.Helper()
	err := unix.Mount("tmpfs", m.Dir, "tmpfs", unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV|flags, m.opts)
	if err != nil {
		t.Fatalf("remounting %s (flags %#x): %v", m.Dir, flags, err)
	}
}

// Fill writes a ballast file at path until the file system is full, and
// returns its size. Removing the file gives the space back.
func Fill(t testing.TB, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := f.Write(buf)
		n += int64(k)
		if errors.Is(err, unix.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("filling %s: %v", path, err)
		}
	}
	// A page may still hold a few bytes; take them too, byte by byte.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
		n++
	}
	return n
}

// Dial connects a godbus client to the bus, closed at cleanup. Tests that
// make thousands of calls use it instead of busctl, one process per call.
func (b *Bus) Dial(t testing.TB) *dbus.Conn {
	t.Helper()
	// No WithContext: its context would bound the connection's whole life.
	conn, err := dbus.Connect(b.Address)
	if err != nil {
		t.Fatalf("connecting to the private bus %s: %v", b.Address, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Alive reports whether the daemon process is still running.
func (d *Daemon) Alive() bool { return !d.proc.exited() }

// String names the daemon for failure messages.
func (d *Daemon) String() string {
	return fmt.Sprintf("antidriftd pid %d on %s", d.proc.pid(), d.StateDir)
}
