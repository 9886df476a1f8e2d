package persist

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// SaveSnapshot replaces state.json atomically: a crash leaves the previous
// snapshot or this one, never a torn file. The version written is always
// the oldest format that holds it (snap.Format: 1 without a task, so a
// daemon from before tasks still reads it), which this build reads back.
func (s *Store) SaveSnapshot(snap service.Snapshot) error {
	snap.Version = snap.Format()
	snap.AuditHead = s.recordedHead()
	data, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding snapshot: %w", err)
	}
	data = append(data, '\n')

	// Raw-log lines are fsynced within a second; state.json must not reach
	// the disk ahead of the lines it follows (a power loss would leave a
	// snapshot saying review with the pause line before it lost). A raw log
	// that fails its fsync does not hold state.json back: its error goes to
	// that log's next append, and the snapshot may be the only record of a
	// pending summary.
	s.raw.syncPending()
	s.snapshotMu.Lock()
	defer s.snapshotMu.Unlock()
	if s.closed.Load() {
		return errClosed
	}
	if err := writeFileAtomic(s.statePath(), data); err != nil {
		return s.keepPendingElsewhere(snap.Pending, fmt.Errorf("saving %s: %w", stateFileName, err))
	}
	// state.json holds the pending list again; the spare is made ready for
	// the next full disk (its pages are taken now, while there is room).
	// Neither write is needed for this save to count: their errors show
	// when the spare is needed.
	s.spare.clear()
	s.spare.prepare()
	return nil
}

// keepPendingElsewhere writes pending summaries that state.json could not
// take into the spare, and says in the returned error what became of them.
func (s *Store) keepPendingElsewhere(pending []service.Summary, saveErr error) error {
	if len(pending) == 0 {
		return saveErr
	}
	kept, err := s.spare.keep(pending)
	switch {
	case err != nil:
		return fmt.Errorf("%w; the %d pending summary(ies) could not be kept in %s either (%v): they exist only in memory", saveErr, len(pending), spareFileName, err)
	case kept < len(pending):
		return fmt.Errorf("%w; %d of %d pending summaries kept in %s (the rest do not fit and exist only in memory)", saveErr, kept, len(pending), spareFileName)
	}
	return fmt.Errorf("%w; the %d pending summary(ies) are kept in %s", saveErr, kept, spareFileName)
}

// LoadSnapshot reads state.json. A missing file is a first start: found is
// false and nothing is wrong. A file of a later version than this build
// knows is left as it is, and err is a *NewerFormatError. A file that
// cannot be used (not JSON, truncated, empty, a version below 1, an
// unknown state) is set aside as
// state.json.damaged-<unix> and named in problem, so the daemon can start
// fresh without destroying what may be the only record of a session. err is
// only for I/O failures, which say nothing about the file's contents.
//
// Pending summaries only the spare holds (state.json could not be saved
// when they ended) are added to snap.Pending, and problem says so.
func (s *Store) LoadSnapshot() (snap service.Snapshot, found bool, problem string, err error) {
	s.snapshotMu.Lock()
	defer s.snapshotMu.Unlock()
	if s.closed.Load() {
		return snap, false, "", errClosed
	}
	path := s.statePath()
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		problem = s.adoptSpare(&snap)
		if n := s.chainLength(); n > 0 {
			problem = strings.TrimPrefix(problem+fmt.Sprintf("; %s is missing but %s holds %d sealed session(s): the head recorded at the last seal is gone with it, so a cut tail can no longer be noticed from state.json (antidrift verify --journal checks the heads the journal recorded)",
				stateFileName, auditFileName, n), "; ")
		}
		return snap, false, problem, nil
	}
	if err != nil {
		return snap, false, "", err
	}
	var why string
	if !info.Mode().IsRegular() {
		why = "is not a regular file"
	} else {
		data, err := ReadStateFile(path)
		if err != nil {
			return snap, false, "", fmt.Errorf("reading %s: %w", stateFileName, err)
		}
		// A later version's file is not damaged: it is refused, untouched
		// (Open already refused it; this holds for a file put there since).
		if v, ok := versionOf(data); ok {
			if err := checkVersion(stateFileName, 0, v, StateFileVersion); err != nil {
				return snap, false, "", err
			}
		}
		if snap, why = decodeSnapshot(data); why == "" {
			s.adoptHead(snap.AuditHead)
			return snap, true, s.adoptSpare(&snap), nil
		}
	}
	moved, err := s.setAside(path, "damaged")
	if err != nil {
		return service.Snapshot{}, false, "", fmt.Errorf("%s %s, and setting it aside failed: %w", stateFileName, why, err)
	}
	snap = service.Snapshot{}
	problem = fmt.Sprintf("%s %s; kept it as %s and started without saved state", stateFileName, why, filepath.Base(moved))
	if s.chainLength() > 0 {
		problem += fmt.Sprintf("; the head of %s recorded in it is lost with it, so a tail cut from %s before now can no longer be noticed from state.json (antidrift verify --journal checks the heads the journal recorded)", auditFileName, auditFileName)
	}
	if spared := s.adoptSpare(&snap); spared != "" {
		problem += "; " + spared
	}
	return snap, false, problem, nil
}

// decodeSnapshot parses state.json's bytes. why is empty when snap is
// usable, else it says (as a predicate of "state.json") what is wrong.
func decodeSnapshot(data []byte) (snap service.Snapshot, why string) {
	if len(data) == 0 {
		return snap, "is empty"
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		return snap, fmt.Sprintf("is not valid JSON (%v)", err)
	}
	if snap.Version < 1 || snap.Version > service.SnapshotVersion {
		return snap, fmt.Sprintf("has format version %d, but this build reads versions 1 to %d", snap.Version, service.SnapshotVersion)
	}
	if !slices.Contains(service.States, snap.State) {
		return snap, fmt.Sprintf("has unknown state %s", service.Quote(string(snap.State)))
	}
	return snap, ""
}

func (s *Store) statePath() string { return filepath.Join(s.dir, stateFileName) }

// CheckWritable creates and removes a probe file in the state directory:
// the cheapest honest answer to "would a save work now?" (a read-only or
// otherwise refusing file system says no; nothing is fsynced).
func (s *Store) CheckWritable() error {
	f, err := os.CreateTemp(s.dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	return errors.Join(f.Close(), os.Remove(name))
}

// recordedHead is the anchor to write into state.json (nil before the
// first seal).
func (s *Store) recordedHead() *service.AuditHead {
	s.audit.mu.Lock()
	defer s.audit.mu.Unlock()
	if s.audit.anchor.Seq == 0 {
		return nil
	}
	head := s.audit.anchor
	return &head
}

// adoptHead takes the head state.json recorded as the anchor the chain
// must reach.
func (s *Store) adoptHead(head *service.AuditHead) {
	if head == nil {
		return
	}
	s.audit.mu.Lock()
	defer s.audit.mu.Unlock()
	s.audit.anchor = *head
}

// chainLength is how many sessions audit.jsonl holds, as last read.
func (s *Store) chainLength() int {
	s.audit.mu.Lock()
	defer s.audit.mu.Unlock()
	return len(s.audit.sealed)
}
