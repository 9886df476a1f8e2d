package persist

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

func sampleEvents() []service.FocusEvent {
	return []service.FocusEvent{
		{AtUnixMillis: 1_780_000_000_000, Class: "code", Instance: "code", Title: "rawlog.go - antidrift", Available: true},
		{AtUnixMillis: 1_780_000_004_250, Class: "firefox", Instance: "Navigator", Title: `"quoted" <b>tags</b> & ümlauts 🚀`, Available: true},
		{AtUnixMillis: 1_780_000_009_000, Reason: "no active window"},
		{AtUnixMillis: 1_780_000_010_000, Class: "firefox", Title: "news", Available: true, OffTask: true},
		{AtUnixMillis: 1_780_000_011_000, Class: "firefox", Title: "news", Available: true, Mark: service.MarkVerdict},
		{AtUnixMillis: 1_780_000_011_500, Class: "firefox-esr", Title: "PR — Mozilla Firefox", Site: "github.com/antidrift/antidrift/pull/3", Available: true},
		{AtUnixMillis: 1_780_000_011_600, Mark: service.MarkTabBlocked, Site: "www.youtube.com/watch"},
		{AtUnixMillis: 1_780_000_012_000, Mark: service.MarkPause},
	}
}

func appendEvents(t *testing.T, s *Store, id string, events []service.FocusEvent) {
	t.Helper()
	for _, e := range events {
		if err := s.AppendEvent(id, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRawLogReplaysEventsInOrder(t *testing.T) {
	s := openStore(t, newStateDir(t))
	want := sampleEvents()
	appendEvents(t, s, "s1", want)
	appendEvents(t, s, "s2", want[:1]) // another session's log stays separate

	got, err := s.ReplayEvents("s1")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReplayEvents = %v, %v\nwant %v", got, err, want)
	}

	// After a crash-restart the log is the recovery source.
	s, _ = reopen(t, s)
	if got, err := s.ReplayEvents("s1"); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after restart ReplayEvents: got %v, %v; want %v", got, err, want)
	}
}

func TestRawLogOfAnUnknownSessionIsEmpty(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if got, err := s.ReplayEvents("never-started"); err != nil || len(got) != 0 {
		t.Errorf("ReplayEvents = %v, %v; want no events, no error", got, err)
	}
}

// A crash mid-append leaves a torn last line: replay skips it, and the next
// append starts on a line of its own instead of gluing onto the fragment.
func TestRawLogTornLineIsSkippedAndTheNextAppendStartsFresh(t *testing.T) {
	s := openStore(t, newStateDir(t))
	events := sampleEvents()
	appendEvents(t, s, "s1", events[:2])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logPath := s.raw.path("s1")
	torn := []byte(`{"at_unix_millis":1780000009000,"class":"fire`)
	appendToFile(t, logPath, torn)

	s, _ = reopen(t, s)
	if got, err := s.ReplayEvents("s1"); err != nil || !reflect.DeepEqual(got, events[:2]) {
		t.Errorf("ReplayEvents with a torn tail = %v, %v; want the 2 whole events", got, err)
	}

	appendEvents(t, s, "s1", events[2:3])
	got, err := s.ReplayEvents("s1")
	if err != nil || !reflect.DeepEqual(got, events[:3]) {
		t.Errorf("after the next append ReplayEvents = %v, %v; want the old events and the new one", got, err)
	}
	if data := readFile(t, logPath); !bytes.Contains(data, append(torn, '\n')) {
		t.Errorf("the raw log: got\n%s\nwant the torn fragment %q kept on its own line", data, torn)
	}
}

func TestRawLogSkipsAnUnreadableMiddleLine(t *testing.T) {
	s := openStore(t, newStateDir(t))
	events := sampleEvents()
	appendEvents(t, s, "s1", events[:1])
	appendToFile(t, s.raw.path("s1"), []byte("\x00garbage{\n\n[]\n"))
	appendEvents(t, s, "s1", events[1:])

	if got, err := s.ReplayEvents("s1"); err != nil || !reflect.DeepEqual(got, events) {
		t.Errorf("ReplayEvents = %v, %v; want every readable event", got, err)
	}
}

func TestRawLogRejectsSessionIDsThatAreNotPlainFileNames(t *testing.T) {
	s := openStore(t, newStateDir(t))
	for _, id := range []string{"", "../escape", "a/b", ".hidden", "..", "nul\x00byte", string(make([]byte, 300))} {
		if err := s.AppendEvent(id, service.FocusEvent{}); err == nil {
			t.Errorf("AppendEvent(%q): got success, want a refusal", id)
		}
		if _, err := s.ReplayEvents(id); err == nil {
			t.Errorf("ReplayEvents(%q): got success, want a refusal", id)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir()), "escape.jsonl")); !os.IsNotExist(err) {
		t.Error("escape.jsonl beside the state directory: got it written, want a session id never to escape the sessions directory")
	}
}

func TestCloseSessionThenAppendReopens(t *testing.T) {
	s := openStore(t, newStateDir(t))
	events := sampleEvents()
	appendEvents(t, s, "s1", events[:2])
	if err := s.CloseSession("s1"); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseSession("s1"); err != nil {
		t.Errorf("closing a closed session: got %v, want nil", err)
	}
	appendEvents(t, s, "s1", events[2:])
	if got, _ := s.ReplayEvents("s1"); !reflect.DeepEqual(got, events) {
		t.Errorf("ReplayEvents: got %v, want %v", got, events)
	}
}

func TestPruneRemovesOnlyOldLogsAndNeverTheLiveOne(t *testing.T) {
	s := openStore(t, newStateDir(t))
	now := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	old := now.Add(-31 * 24 * time.Hour)
	for _, id := range []string{"old", "old-but-live", "recent"} {
		appendEvents(t, s, id, sampleEvents()[:1])
		if err := s.CloseSession(id); err != nil {
			t.Fatal(err)
		}
	}
	notALog := filepath.Join(s.raw.dir, "notes.txt")
	writeFile(t, notALog, []byte("not a session log"))
	for _, path := range []string{s.raw.path("old"), s.raw.path("old-but-live"), notALog} {
		if err := os.Chtimes(path, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(s.raw.path("recent"), now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}

	removed, err := s.PruneSessions(30*24*time.Hour, now, "old-but-live")
	if err != nil || removed != 1 {
		t.Errorf("PruneSessions = %d, %v; want 1 removed", removed, err)
	}
	for path, wantExists := range map[string]bool{
		s.raw.path("old"):          false,
		s.raw.path("old-but-live"): true,
		s.raw.path("recent"):       true,
		notALog:                    true,
	} {
		if _, err := os.Stat(path); (err == nil) != wantExists {
			t.Errorf("%s: exists %v, want %v", filepath.Base(path), err == nil, wantExists)
		}
	}
}

func TestPruneSparesALogStillOpenForAppending(t *testing.T) {
	s := openStore(t, newStateDir(t))
	now := time.Now()
	appendEvents(t, s, "open", sampleEvents()[:1])
	old := now.Add(-40 * 24 * time.Hour)
	if err := os.Chtimes(s.raw.path("open"), old, old); err != nil {
		t.Fatal(err)
	}
	if removed, err := s.PruneSessions(30*24*time.Hour, now, ""); err != nil || removed != 0 {
		t.Errorf("PruneSessions: got %d, %v; want 0 removed: an open log must not be unlinked under its writer", removed, err)
	}
}

func TestPruneWithNoSessionsYet(t *testing.T) {
	s := openStore(t, newStateDir(t))
	if removed, err := s.PruneSessions(time.Hour, time.Now(), ""); err != nil || removed != 0 {
		t.Errorf("PruneSessions: got %d, %v; want 0, nil", removed, err)
	}
}
