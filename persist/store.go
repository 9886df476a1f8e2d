package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/antidrift/antidrift/service"
)

const (
	stateFileName   = "state.json"
	auditFileName   = "audit.jsonl"
	sessionsDirName = "sessions"
)

// Store is the file-backed service.Store. One Store owns its directory for
// as long as it is open (see lockDir).
type Store struct {
	dir    string
	lock   *os.File // the flocked directory; closing it releases the lock
	closed atomic.Bool

	// now stamps the names of set-aside files. Tests pin it.
	now func() time.Time

	snapshotMu sync.Mutex // one state.json replacement at a time
	raw        rawLogs
	audit      auditChain
	spare      spareFile
}

var _ service.Store = (*Store)(nil)

var errClosed = errors.New("persist: store is closed")

// DefaultDir returns $XDG_STATE_HOME/antidrift, or ~/.local/state/antidrift
// when XDG_STATE_HOME is unset or relative (the XDG spec says to ignore
// relative values).
func DefaultDir() (string, error) {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "antidrift"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "antidrift"), nil
}

// Open prepares dir and takes ownership of it. It creates dir 0700, locks it
// against a second daemon, refuses it (a *NewerFormatError, nothing changed)
// when a file in it was written by a later version of antidrift, tightens any path in it that is looser than
// 0700/0600, and sets aside an unfinished last line of audit.jsonl so the
// chain can continue. Each such repair is described by one sentence in
// problems; the store is usable regardless. err means the store could not
// be opened at all.
func Open(dir string) (st *Store, problems []string, err error) {
	if dir == "" {
		return nil, nil, errors.New("persist: no state directory given")
	}
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return nil, nil, fmt.Errorf("creating state directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			lock.Close()
		}
	}()

	if err := checkPrivateDirs(dir, lock); err != nil {
		return nil, nil, err
	}
	s := &Store{
		dir:   dir,
		lock:  lock,
		now:   time.Now,
		raw:   rawLogs{dir: filepath.Join(dir, sessionsDirName), open: map[string]*rawLog{}},
		audit: auditChain{path: filepath.Join(dir, auditFileName)},
		spare: spareFile{path: filepath.Join(dir, spareFileName)},
	}
	// Before anything below changes the directory: a file a later version
	// wrote is refused untouched (version.go).
	if err := s.refuseNewer(); err != nil {
		return nil, nil, err
	}
	problems, err = tightenModes(dir, lock)
	if err != nil {
		return nil, problems, err
	}
	problems = append(problems, s.setAsideLinks()...)
	problem, err := s.loadAuditChain()
	if err != nil {
		// The daemon must still start (a read-only or failing disk): the
		// chain is reloaded, and a torn tail set aside, before its next use,
		// and until then sealing fails and summaries stay pending.
		s.audit.stale = true
		problem = fmt.Sprintf("%s could not be prepared for sealing (%v); ended sessions stay pending in %s until it can", auditFileName, err, stateFileName)
	}
	if problem != "" {
		problems = append(problems, problem)
	}
	return s, problems, nil
}

// Dir is the state directory this store owns.
func (s *Store) Dir() string { return s.dir }

// Close closes the session logs kept open for appending and releases the
// directory lock, so another daemon may open it. Closing twice is harmless.
func (s *Store) Close() error {
	// Take every lock so no write is mid-flight when the directory lock
	// goes: after it, another daemon may write here.
	s.snapshotMu.Lock()
	defer s.snapshotMu.Unlock()
	s.raw.mu.Lock()
	defer s.raw.mu.Unlock()
	s.audit.mu.Lock()
	defer s.audit.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	return errors.Join(s.raw.closeAll(), s.lock.Close())
}

// setAside renames a damaged file to <path>.<why>-<unix>[-n] and makes the
// rename durable, so the bytes survive for a person to inspect but no longer
// stand in the daemon's way. It returns the new path.
func (s *Store) setAside(path, why string) (string, error) {
	dest, err := s.asideName(path, why)
	if err != nil {
		return "", err
	}
	if err := os.Rename(path, dest); err != nil {
		return "", err
	}
	return dest, syncDir(filepath.Dir(path))
}

// asideName picks an unused <path>.<why>-<unix>[-n] for bytes set aside from
// path.
func (s *Store) asideName(path, why string) (string, error) {
	return unusedName(fmt.Sprintf("%s.%s-%d", path, why, s.now().Unix()))
}
