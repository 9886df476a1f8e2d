package persist

import (
	"encoding/json"
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
