package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
)

// ReviewNotesFileName holds the review notes (service.ReviewNoteStore):
// one JSON line per note, appended and fsynced, beside audit.jsonl and
// never in it, so no note is covered by the chain's hash.
//
//	{"version":1,"session_id":"…","note":"…"}
const ReviewNotesFileName = "review-notes.jsonl"

// reviewNotesVersion is the line format this build writes.
const reviewNotesVersion = 1

type reviewNoteLine struct {
	Version   int    `json:"version"`
	SessionID string `json:"session_id"`
	Note      string `json:"note"`
}

// SaveReviewNote appends the model's note on a session (0600, never
// through a symbolic link).
func (s *Store) SaveReviewNote(sessionID, note string) error {
	data, err := json.Marshal(reviewNoteLine{reviewNotesVersion, sessionID, note})
	if err != nil {
		return err
	}
	return appendDurably(filepath.Join(s.dir, ReviewNotesFileName), append(data, '\n'))
}

// ReviewNoteOf is the last note kept for a session, "" when none. A line
// that does not parse (a torn last line) is passed over.
func (s *Store) ReviewNoteOf(sessionID string) (string, error) {
	data, err := ReadStateFile(filepath.Join(s.dir, ReviewNotesFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var note string
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l reviewNoteLine
		if json.Unmarshal(line, &l) == nil && l.SessionID == sessionID && l.Version <= reviewNotesVersion {
			note = l.Note
		}
	}
	return note, nil
}
