package persist

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/antidrift/antidrift/service"
)

// Reader reads a state directory without owning it: no lock, no repair, no
// write of any kind (the one write beside it is LoadTrust's: appending the
// key of a device seen for the first time to device-keys.jsonl, which any
// reader may do, see sync_keys.go). It exists for `antidrift report`, which
// must work while the daemon runs (the daemon holds the directory's lock)
// and must never change what it reports on. It shares the Store's
// readers, so the files are parsed and verified by one code path.
type Reader struct{ s *Store }

// NewReader reads dir. A directory that does not exist reads as empty.
func NewReader(dir string) *Reader {
	dir = filepath.Clean(dir)
	return &Reader{s: &Store{
		dir:   dir,
		now:   time.Now,
		raw:   rawLogs{dir: filepath.Join(dir, sessionsDirName), open: map[string]*rawLog{}},
		audit: auditChain{path: filepath.Join(dir, auditFileName)},
	}}
}

// Dir is the state directory read.
func (r *Reader) Dir() string { return r.s.dir }

// VerifyAudit walks the chain as Store.VerifyAudit does, against the head
// state.json recorded at the last seal, so a cut tail reads broken here as
// it does to the daemon. (A state.json that cannot be read leaves the walk
// to the chain alone; Pending names why.)
func (r *Reader) VerifyAudit() service.AuditReport {
	if data, err := ReadStateFile(r.s.statePath()); err == nil {
		if snap, why := decodeSnapshot(data); why == "" {
			r.s.adoptHead(snap.AuditHead)
		}
	}
	return r.s.VerifyAudit()
}

// LaterVersion is a *NewerFormatError when a file of the directory (or a
// line of one) was written by a later version of antidrift, as the daemon
// checks at start (version.go); nil when every version is known.
func (r *Reader) LaterVersion() error { return r.s.refuseNewer() }

// History returns every sealed summary that parses, oldest first.
func (r *Reader) History() ([]service.Summary, error) {
	sums, err := r.s.History(0)
	for i, j := 0, len(sums)-1; i < j; i, j = i+1, j-1 {
		sums[i], sums[j] = sums[j], sums[i]
	}
	return sums, err
}

// HasRawLog reports whether a session's raw log is still retained.
func (r *Reader) HasRawLog(sessionID string) bool {
	if checkSessionID(sessionID) != nil {
		return false
	}
	f, err := r.s.raw.openLog(sessionID, os.O_RDONLY)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// EachEvent streams a session's raw log as Store.EachEvent does.
func (r *Reader) EachEvent(sessionID string, fn func(service.FocusEvent)) error {
	return r.s.EachEvent(sessionID, fn)
}

// Pending returns the ended summaries state.json holds that are not yet in
// the chain. A missing state.json has none; one that cannot be decoded is
// left where it is (the daemon sets it aside, not a reader) and named in
// problem.
func (r *Reader) Pending() (pending []service.Summary, problem string, err error) {
	data, err := ReadStateFile(r.s.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", stateFileName, err)
	}
	snap, why := decodeSnapshot(data)
	if why != "" {
		return nil, fmt.Sprintf("%s %s; summaries it may hold are not shown", stateFileName, why), nil
	}
	return snap.Pending, "", nil
}
