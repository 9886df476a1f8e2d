package apps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// settle is how long the watcher waits, after a change, for the rest of a
// burst (a package installing a hundred entries) before reading again. It
// runs only after a change: idle, the watcher sleeps in read(2).
const settle = 100 * time.Millisecond

// maxSettle bounds the wait for a burst to end, so a directory that never
// stops changing still has its entries read.
const maxSettle = time.Second

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// watcher watches the applications directories and, for one that does not
// exist (yet), its nearest existing ancestor for the next component of its
// path, so ~/.local/share/applications made after the daemon started is
// read as soon as it appears.
type watcher struct {
	f      *os.File
	fd     int
	bases  []string
	rescan func()

	mu     sync.Mutex
	closed bool
	wds    map[int32]*interest
	done   chan struct{}
}

// interest is what a watch is for: every change of a directory the index
// reads (all), or only the names that lead to a missing one.
type interest struct {
	all   bool
	names map[string]bool
}

func newWatcher(bases []string, rescan func()) (*watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "inotify_init1", Err: err}
	}
	return &watcher{
		f: os.NewFile(uintptr(fd), "inotify"), fd: fd, bases: bases, rescan: rescan,
		wds: map[int32]*interest{}, done: make(chan struct{}),
	}, nil
}

func (w *watcher) start() { go w.loop() }

func (w *watcher) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	err := w.f.Close() // wakes the reader
	<-w.done
	return err
}

// update watches the directories read and the ancestors of the missing
// ones, and drops the watches no longer needed. It reports whether it
// added a watch, so the caller reads once more what may have appeared
// between its reading and the watch.
func (w *watcher) update(read []string) (added bool) {
	want := map[string]*interest{}
	isRead := map[string]bool{}
	for _, d := range read {
		isRead[d] = true
		want[d] = &interest{all: true}
	}
	for _, b := range w.bases {
		if isRead[b] {
			continue
		}
		// the nearest ancestor that exists, watched for the next component
		for p := b; ; {
			parent := filepath.Dir(p)
			if parent == p {
				break
			}
			if st, err := os.Stat(parent); err == nil && st.IsDir() {
				in := want[parent]
				if in == nil {
					in = &interest{names: map[string]bool{}}
					want[parent] = in
				}
				if !in.all {
					in.names[filepath.Base(p)] = true
				}
				break
			}
			p = parent
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	wds := map[int32]*interest{}
	for path, in := range want {
		if len(wds) >= MaxDirs {
			break
		}
		wd, err := unix.InotifyAddWatch(w.fd, path, watchMask)
		if err != nil {
			continue
		}
		if _, had := w.wds[int32(wd)]; !had {
			added = true
		}
		if old := wds[int32(wd)]; old != nil { // two paths, one directory
			in = merge(old, in)
		}
		wds[int32(wd)] = in
	}
	for wd := range w.wds {
		if wds[wd] == nil {
			unix.InotifyRmWatch(w.fd, uint32(wd))
		}
	}
	w.wds = wds
	return added
}

func merge(a, b *interest) *interest {
	if a.all || b.all {
		return &interest{all: true}
	}
	out := &interest{names: map[string]bool{}}
	for n := range a.names {
		out.names[n] = true
	}
	for n := range b.names {
		out.names[n] = true
	}
	return out
}

func (w *watcher) loop() {
	defer close(w.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			continue
		}
		if !w.relevant(buf[:n]) {
			continue
		}
		// let the burst settle: read until it has been quiet for settle,
		// or maxSettle has passed since the change
		until := time.Now().Add(maxSettle)
		for {
			next := time.Now().Add(settle)
			if next.After(until) {
				next = until
			}
			w.f.SetReadDeadline(next)
			if _, err := w.f.Read(buf); err != nil {
				if errors.Is(err, os.ErrClosed) {
					return
				}
				break
			}
		}
		w.f.SetReadDeadline(time.Time{})
		w.rescan()
	}
}

// relevant reports whether a batch of events may change what the index
// holds: a .desktop file or a directory changed in a directory it reads, a
// missing directory's path appeared, a watch went away, or the queue
// overflowed.
func (w *watcher) relevant(buf []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			return true
		}
		name := strings.TrimRight(string(buf[unix.SizeofInotifyEvent:end]), "\x00")
		buf = buf[end:]
		if ev.Mask&(unix.IN_Q_OVERFLOW|unix.IN_IGNORED|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0 {
			return true
		}
		in := w.wds[ev.Wd]
		switch {
		case in == nil:
		case in.all && (name == "" || ev.Mask&unix.IN_ISDIR != 0 || strings.HasSuffix(name, ".desktop")):
			return true
		case !in.all && in.names[name]:
			return true
		}
	}
	return false
}
