package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/antidrift/antidrift/service"
)

// rawLogs are the per-session focus logs, sessions/<id>.jsonl. A session's
// file stays open between appends because focus changes come dozens of
// times a minute; CloseSession or Close releases it.
type rawLogs struct {
	dir  string // <state dir>/sessions
	mu   sync.Mutex
	open map[string]*rawLog
}

type rawLog struct {
	f *os.File
	// midLine is true when the file ends without "\n" (the previous daemon
	// died mid-append), so the next append must end that torn line first.
	midLine bool
	// sync is the pending fsync of lines written since the last one (nil
	// when all is on disk); syncErr is its failure, reported by the next
	// append.
	sync    *time.Timer
	syncErr error
}

// rawLogSyncDelay bounds what a power loss can take from a raw log: lines
// are fsynced at most this long after they are written. A crash of the
// daemon itself loses nothing, since written lines are in the kernel's
// page cache; and an idle session costs no timer at all.
const rawLogSyncDelay = time.Second

// AppendEvent appends one event as a JSON line to the session's raw log
// before returning, so a crash of the daemon loses nothing and replay sees
// every event the core accounted; the line reaches the disk within
// rawLogSyncDelay. Focus changes come in bursts, and an fsync each would
// cost more than everything else the daemon does per change.
func (s *Store) AppendEvent(sessionID string, e service.FocusEvent) error {
	if err := checkSessionID(sessionID); err != nil {
		return err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding focus event: %w", err)
	}
	line = append(line, '\n')

	r := &s.raw
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.closed.Load() {
		return errClosed
	}
	log, err := r.get(sessionID)
	if err != nil {
		return err
	}
	if log.midLine {
		line = append([]byte{'\n'}, line...)
	}
	if err = log.syncErr; err == nil {
		_, err = log.f.Write(line)
	}
	if err != nil {
		// The file may now end mid-line. Forget it; the next append
		// reopens it and checks its last byte again.
		log.close()
		delete(r.open, sessionID)
		return fmt.Errorf("appending to the raw log of session %s: %w", sessionID, err)
	}
	log.midLine = false
	if log.sync == nil {
		log.sync = time.AfterFunc(rawLogSyncDelay, func() { r.syncLater(sessionID, log) })
	}
	return nil
}

// syncLater is the delayed fsync of a log's recent lines.
func (r *rawLogs) syncLater(sessionID string, log *rawLog) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open[sessionID] != log || log.sync == nil {
		return // closed (and synced) meanwhile
	}
	log.sync = nil
	log.syncErr = log.f.Sync()
}

// syncPending fsyncs every log with lines not yet on disk, now. A failure
// is kept for that log's next append to report.
func (r *rawLogs) syncPending() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, log := range r.open {
		if log.sync != nil {
			log.sync.Stop()
			log.sync = nil
			log.syncErr = log.f.Sync()
		}
	}
}

// close fsyncs what is pending and closes the file. Called with r.mu held.
func (log *rawLog) close() error {
	var err error
	if log.sync != nil {
		log.sync.Stop()
		log.sync = nil
		err = log.f.Sync()
	}
	return errors.Join(err, log.syncErr, log.f.Close())
}

// ReplayEvents reads a session's raw log in order. It is the recovery source
// after a crash, so it returns every event it can read: a torn last line
// and any unparsable line are skipped rather than failing the replay. A
// session with no log has no events.
func (s *Store) ReplayEvents(sessionID string) ([]service.FocusEvent, error) {
	var events []service.FocusEvent
	err := s.EachEvent(sessionID, func(e service.FocusEvent) { events = append(events, e) })
	return events, err
}

// EachEvent calls fn with each event of a session's raw log, in order,
// without holding the log in memory: a restart on a session of a million
// focus changes costs the stats, not the file. Lines are read as
// ReplayEvents describes.
func (s *Store) EachEvent(sessionID string, fn func(service.FocusEvent)) error {
	if err := checkSessionID(sessionID); err != nil {
		return err
	}
	f, err := s.raw.openLog(sessionID, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	strs := newInterner()
	// One event for the whole walk: &e escapes into the decoder (its
	// encoding/json fallback), so declared per line it cost a heap
	// allocation per line.
	var e service.FocusEvent
	err = eachLine(f, func(line []byte, complete bool) error {
		// An unfinished last line is skipped — unless it is a whole event
		// that lost only its newline (a prefix of a JSON object is valid
		// JSON only when it is the whole object). That event was accounted
		// live, and the next append ends its line, after which it reads as
		// complete: counting it now keeps every replay the same.
		e = service.FocusEvent{}
		if decodeFocusEvent(line, &e, strs) == nil && (complete || bytes.HasSuffix(line, []byte("}"))) {
			fn(e)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("replaying session %s: %w", sessionID, err)
	}
	return nil
}

// CloseSession closes the session's raw log if it is open. Appending again
// reopens it.
func (s *Store) CloseSession(sessionID string) error {
	r := &s.raw
	r.mu.Lock()
	defer r.mu.Unlock()
	log, ok := r.open[sessionID]
	if !ok {
		return nil
	}
	delete(r.open, sessionID)
	return log.close()
}

// PruneSessions removes the raw logs of sessions last written before
// now-age: they are disposable detail once the session is sealed in the
// audit chain. The log of keepID (the live session) and any log still open
// for appending are never removed. It returns how many it removed.
func (s *Store) PruneSessions(age time.Duration, now time.Time, keepID string) (int, error) {
	r := &s.raw
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.closed.Load() {
		return 0, errClosed
	}
	dir, err := openDir(r.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return 0, err
	}
	cutoff := now.Add(-age)
	removed := 0
	var errs []error
	for _, entry := range entries {
		id, isLog := strings.CutSuffix(entry.Name(), rawLogSuffix)
		if !isLog || !entry.Type().IsRegular() || id == keepID || r.open[id] != nil {
			continue
		}
		info, err := entry.Info()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.ModTime().Before(cutoff) {
			continue
		}
		// Removed relative to the directory opened above, so a link
		// swapped in for sessions/ meanwhile cannot point this elsewhere.
		if err := unix.Unlinkat(int(dir.Fd()), entry.Name(), 0); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

const rawLogSuffix = ".jsonl"

func (r *rawLogs) path(sessionID string) string {
	return filepath.Join(r.dir, sessionID+rawLogSuffix)
}

// openLog opens a session's log with flags, inside sessions/ opened
// without following a link, so neither sessions/ nor the log may be one.
func (r *rawLogs) openLog(sessionID string, flags int) (*os.File, error) {
	dir, err := openDir(r.dir)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return openIn(dir, sessionID+rawLogSuffix, flags, 0)
}

// get returns the session's open log, opening (and creating) it on first
// use. Called with r.mu held.
func (r *rawLogs) get(sessionID string) (*rawLog, error) {
	if log, ok := r.open[sessionID]; ok {
		return log, nil
	}
	if err := os.Mkdir(r.dir, privateDirMode); err == nil {
		if err := syncDir(filepath.Dir(r.dir)); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("creating the sessions directory: %w", err)
	}
	dir, err := openDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("opening the sessions directory: %w", err)
	}
	defer dir.Close()
	f, err := openAppend(dir, sessionID+rawLogSuffix)
	if err != nil {
		return nil, fmt.Errorf("opening the raw log of session %s: %w", sessionID, err)
	}
	midLine, err := endsMidLine(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("checking the raw log of session %s: %w", sessionID, err)
	}
	log := &rawLog{f: f, midLine: midLine}
	r.open[sessionID] = log
	return log, nil
}

// closeAll closes every open log. Called with r.mu held.
func (r *rawLogs) closeAll() error {
	var errs []error
	for id, log := range r.open {
		errs = append(errs, log.close())
		delete(r.open, id)
	}
	return errors.Join(errs...)
}

// endsMidLine reports whether a non-empty f's last byte is not "\n".
func endsMidLine(f *os.File) (bool, error) {
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return false, err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, info.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// checkSessionID refuses ids that are not a plain file name, since the id
// becomes sessions/<id>.jsonl: no path separators, nothing hidden or
// relative ("." prefix), no NUL, and short enough for any file system.
func checkSessionID(id string) error {
	switch {
	case id == "":
		return errors.New("persist: empty session id")
	case strings.ContainsAny(id, "/\x00"), strings.HasPrefix(id, "."), len(id) > 200:
		return fmt.Errorf("persist: session id %q is not a safe file name", id)
	}
	return nil
}

// decodeFocusEvent decodes one raw-log line, on the fast path when it can
// (see flatjson.go): replaying a long session must take about a second.
func decodeFocusEvent(line []byte, e *service.FocusEvent, strs *interner) error {
	if fastFocusEvent(line, e, strs) {
		return nil
	}
	*e = service.FocusEvent{}
	return json.Unmarshal(line, e)
}

func fastFocusEvent(line []byte, e *service.FocusEvent, strs *interner) bool {
	return eachMember(line, func(key, value []byte) bool {
		switch string(key) {
		case "at_unix_millis":
			return setInt(value, &e.AtUnixMillis)
		case "class":
			return setString(value, &e.Class, strs)
		case "instance":
			return setString(value, &e.Instance, strs)
		case "title":
			return setString(value, &e.Title, strs)
		case "site":
			return setString(value, &e.Site, strs)
		case "available":
			return setBool(value, &e.Available)
		case "reason":
			return setString(value, &e.Reason, strs)
		case "off_task":
			return setBool(value, &e.OffTask)
		case "mark":
			return setString(value, &e.Mark, strs)
		case "jump_millis":
			return setInt(value, &e.JumpMillis)
		}
		// A key this switch does not know may be a field added to
		// FocusEvent since; only encoding/json knows where it goes.
		return false
	})
}
