package caldav

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

const (
	radUser     = "alice"
	radPassword = "s3cret-Pa55-radicale"
)

// vtodo is a calendar object holding one task.
func vtodo(uid, extra string) string {
	return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//antidrift test//EN\nBEGIN:VTODO\nUID:" + uid +
		"\nDTSTAMP:20261201T100000Z\n" + extra + "END:VTODO\nEND:VCALENDAR\n"
}

// taskList starts Radicale with a task list of four tasks (two open, one
// completed, one cancelled) and returns it with a source reading it
// through a 0600 password file.
func taskList(t *testing.T) (*testenv.Radicale, *Source, string) {
	t.Helper()
	r := testenv.StartRadicale(t, radUser, radPassword)
	url := r.MakeTaskList(t, "/alice/tasks/")
	r.Put(t, "/alice/tasks/report.ics", vtodo("report-1", "SUMMARY:Write the Q4 report\\, draft 2\nDUE;VALUE=DATE:20261205\nPRIORITY:1\n"))
	r.Put(t, "/alice/tasks/taxes.ics", vtodo("taxes-2", "SUMMARY:File taxes\nDUE;TZID=Europe/Berlin:20261210T170000\nSTATUS:NEEDS-ACTION\n"))
	r.Put(t, "/alice/tasks/done.ics", vtodo("done-3", "SUMMARY:Already done\nSTATUS:COMPLETED\nCOMPLETED:20261130T090000Z\n"))
	r.Put(t, "/alice/tasks/dropped.ics", vtodo("dropped-4", "SUMMARY:Dropped\nSTATUS:CANCELLED\n"))
	s, err := newSource(Options{URL: url, Username: radUser, PasswordFile: passwordFile(t, radPassword)})
	if err != nil {
		t.Fatal(err)
	}
	return r, s, url
}

func passwordFile(t *testing.T, password string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "caldav-password")
	if err := os.WriteFile(p, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctx5(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func itemsOf(todos []todo) []service.TaskItem {
	var out []service.TaskItem
	for _, t := range todos {
		out = append(out, t.item)
	}
	return out
}

func byID(items []service.TaskItem) map[string]service.TaskItem {
	m := map[string]service.TaskItem{}
	for _, it := range items {
		m[it.ID] = it
	}
	return m
}

// The open VTODOs of a real Radicale collection list, mapped exactly:
// title unescaped and otherwise as stored, DUE as a date or in its TZID,
// PRIORITY, and the ETag as the version; completed and cancelled ones not.
func TestListsOpenTasksFromRadicale(t *testing.T) {
	_, s, _ := taskList(t)
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	got := byID(items)
	if len(items) != 2 || got["report-1"].ID == "" || got["taxes-2"].ID == "" {
		t.Fatalf("got %+v, want the two open tasks report-1 and taxes-2", items)
	}
	rep := got["report-1"]
	if rep.Title != "Write the Q4 report, draft 2" || rep.Priority != 1 || rep.Source != "caldav" || rep.Version == "" || rep.Done {
		t.Errorf("report-1: got %+v, want title %q, priority 1, source caldav, a version, open", rep, "Write the Q4 report, draft 2")
	}
	if want := time.Date(2026, 12, 5, 0, 0, 0, 0, time.Local); !rep.Due.Equal(want) {
		t.Errorf("report-1 due: got %v, want %v", rep.Due, want)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if want := time.Date(2026, 12, 10, 17, 0, 0, 0, berlin); !got["taxes-2"].Due.Equal(want) {
		t.Errorf("taxes-2 due: got %v, want %v", got["taxes-2"].Due, want)
	}
	// The server picks the open ones itself (COMPLETED not defined): a
	// done task is not even sent. A cancelled one without COMPLETED is,
	// and is left out here.
	raw, err := s.report(ctx5(t), filter{open: true})
	if err != nil {
		t.Fatal(err)
	}
	if ids := byID(itemsOf(raw)); len(raw) != 3 || ids["done-3"].ID != "" || ids["dropped-4"].ID == "" {
		t.Errorf("the server's open tasks: got %+v, want report-1, taxes-2 and dropped-4", itemsOf(raw))
	}
	one, err := s.Get(ctx5(t), "done-3")
	if err != nil || !one.Done || one.Title != "Already done" {
		t.Errorf("Get(done-3): got %+v, %v; want the completed task", one, err)
	}
	var nf *service.TaskNotFound
	for _, id := range []string{"no-such-uid", "report", "REPORT-1", "<x>&amp;"} {
		if got, err := s.Get(ctx5(t), id); !errors.As(err, &nf) {
			t.Errorf("Get(%q): got %+v, %v; want *service.TaskNotFound (the UID matched whole)", id, got, err)
		}
	}
}

// Complete writes STATUS:COMPLETED, COMPLETED and PERCENT-COMPLETE:100,
// as a second client reads back, and keeps the rest of the task.
func TestCompleteWritesCompletedToRadicale(t *testing.T) {
	r, s, _ := taskList(t)
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	task := byID(items)["report-1"]
	before := time.Now().UTC().Add(-time.Second)
	if err := s.Complete(ctx5(t), task); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	code, ics, _ := r.Get(t, "/alice/tasks/report.ics")
	if code != 200 {
		t.Fatalf("GET after Complete: HTTP %d", code)
	}
	for _, want := range []string{"STATUS:COMPLETED", "PERCENT-COMPLETE:100", "UID:report-1", "SUMMARY:Write the Q4 report\\, draft 2", "PRIORITY:1", "DUE;VALUE=DATE:20261205"} {
		if !strings.Contains(ics, want) {
			t.Errorf("the server's copy after Complete has no %q:\n%s", want, ics)
		}
	}
	i := strings.Index(ics, "\r\nCOMPLETED:")
	if i < 0 {
		t.Fatalf("the server's copy has no COMPLETED:\n%s", ics)
	}
	stamp, err := time.Parse("20060102T150405Z", ics[i+len("\r\nCOMPLETED:"):i+len("\r\nCOMPLETED:")+16])
	if err != nil || stamp.Before(before.Truncate(time.Second)) || stamp.After(time.Now().Add(time.Second)) {
		t.Errorf("COMPLETED: got %v (%v), want now in UTC", stamp, err)
	}
	items, err = s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, still := byID(items)["report-1"]; still {
		t.Errorf("report-1 still lists as open after Complete: %+v", items)
	}
}

// A task another client edited between the session's read and Complete
// is not overwritten: Complete says *service.TaskChanged, naming what
// changed, and the server keeps the other client's copy byte for byte.
func TestCompleteRefusesATaskChangedMeanwhile(t *testing.T) {
	r, s, _ := taskList(t)
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	task := byID(items)["taxes-2"]
	r.Put(t, "/alice/tasks/taxes.ics", vtodo("taxes-2", "SUMMARY:File taxes (and the VAT)\nDUE;TZID=Europe/Berlin:20261210T170000\nSTATUS:NEEDS-ACTION\n"))
	_, theirs, _ := r.Get(t, "/alice/tasks/taxes.ics")
	err = s.Complete(ctx5(t), task)
	var changed *service.TaskChanged
	if !errors.As(err, &changed) {
		t.Fatalf("Complete after a concurrent edit: got %v, want *service.TaskChanged", err)
	}
	if changed.ID != "taxes-2" || changed.Source != "caldav" || !strings.Contains(changed.What, "renamed") || changed.Do == "" {
		t.Errorf("got %+v, want it to say the task was renamed and what to do", changed)
	}
	if _, now, _ := r.Get(t, "/alice/tasks/taxes.ics"); now != theirs {
		t.Errorf("the other client's copy was overwritten:\ngot  %q\nwant %q", now, theirs)
	}
}

// The ETag check is the server's too: a write raced between antidrift's
// fresh read and its PUT gets 412 from Radicale, seen as TaskChanged.
func TestCompleteSendsIfMatch(t *testing.T) {
	r, s, _ := taskList(t)
	err := s.put(ctx5(t), "/alice/tasks/taxes.ics", []byte("BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"), "not-the-etag")
	var se *statusError
	if !errors.As(err, &se) || se.code != 412 {
		t.Fatalf("PUT with a stale If-Match: got %v, want HTTP 412", err)
	}
	code, ics, _ := r.Get(t, "/alice/tasks/taxes.ics")
	if code != 200 || !strings.Contains(ics, "SUMMARY:File taxes") {
		t.Errorf("after a refused PUT the task is: HTTP %d\n%s", code, ics)
	}
}

// A task deleted meanwhile is never recreated: TaskChanged says so, and
// the server still has no such object.
func TestCompleteNeverRecreatesADeletedTask(t *testing.T) {
	r, s, _ := taskList(t)
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatal(err)
	}
	task := byID(items)["report-1"]
	if code, _, reply := r.Do(t, "DELETE", "/alice/tasks/report.ics", ""); code/100 != 2 {
		t.Fatalf("DELETE: HTTP %d %s", code, reply)
	}
	err = s.Complete(ctx5(t), task)
	var changed *service.TaskChanged
	if !errors.As(err, &changed) || !strings.Contains(changed.What, "deleted") {
		t.Fatalf("Complete of a deleted task: got %v, want TaskChanged saying it was deleted", err)
	}
	if code, ics, _ := r.Get(t, "/alice/tasks/report.ics"); code != 404 {
		t.Errorf("the deleted task is back: HTTP %d\n%s", code, ics)
	}
	// And the PUT itself cannot recreate it either (If-Match on nothing).
	err = s.put(ctx5(t), "/alice/tasks/report.ics", []byte(vtodo("report-1", "SUMMARY:x\n")), task.Version)
	var se *statusError
	if !errors.As(err, &se) || se.code != 412 {
		t.Errorf("PUT with If-Match to a deleted object: got %v, want HTTP 412", err)
	}
	if code, _, _ := r.Get(t, "/alice/tasks/report.ics"); code != 404 {
		t.Errorf("the PUT recreated the deleted task: HTTP %d", code)
	}
}

// The wrong password is the server's refusal in a sentence, without the
// password in it.
func TestWrongPasswordIsASentence(t *testing.T) {
	r := testenv.StartRadicale(t, radUser, radPassword)
	url := r.MakeTaskList(t, "/alice/tasks/")
	wrong := "wrong-Pa55-xyzzy"
	s, err := newSource(Options{URL: url, Username: radUser, PasswordFile: passwordFile(t, wrong)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(ctx5(t))
	if err == nil || err.Error() != "the CalDAV server refused the username or password" {
		t.Fatalf("List with a wrong password: got %v, want the refusal sentence", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("the error holds the password: %v", err)
	}
}

// A server that stopped is a sentence, at once: no hang, no retry loop.
func TestServerStoppedIsASentence(t *testing.T) {
	r, s, _ := taskList(t)
	r.Stop()
	_, err := s.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "is not running") {
		t.Fatalf("List with the server stopped: got %v, want a sentence saying it is not running", err)
	}
	if strings.Contains(err.Error(), radPassword) {
		t.Errorf("the error holds the password: %v", err)
	}
}

// The password from a real gnome-keyring, stored by secret-tool under the
// attributes the docs give, opens the task list; once the keyring is
// locked (and nothing cached), the person is told to unlock it.
func TestPasswordFromGnomeKeyring(t *testing.T) {
	r := testenv.StartRadicale(t, radUser, radPassword)
	url := r.MakeTaskList(t, "/alice/tasks/")
	r.Put(t, "/alice/tasks/a.ics", vtodo("a-1", "SUMMARY:From the keyring\n"))
	bus := testenv.StartBus(t)
	k := testenv.StartKeyring(t, bus, "login-keyring-pass")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", bus.Address)

	s, err := newSource(Options{URL: url, Username: radUser})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "secret-tool store --label=antidrift service antidrift url "+url+" username "+radUser) {
		t.Fatalf("List before the password is stored: got %v, want the secret-tool store line", err)
	}

	k.Store(t, radPassword, "antidrift", "service", "antidrift", "url", url, "username", radUser)
	items, err := s.List(ctx5(t))
	if err != nil {
		t.Fatalf("List with the password in the keyring: %v", err)
	}
	if len(items) != 1 || items[0].Title != "From the keyring" {
		t.Fatalf("got %+v, want the one task", items)
	}

	k.Lock(t)
	s2, _ := newSource(Options{URL: url, Username: radUser})
	_, err = s2.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("List with the keyring locked: got %v, want a sentence saying it is locked", err)
	}
	if strings.Contains(err.Error(), radPassword) {
		t.Errorf("the error holds the password: %v", err)
	}
}

// A repeating task is not ticked off whole: Complete says so and the
// server's copy stays as it was.
func TestCompleteLeavesARepeatingTask(t *testing.T) {
	r, s, _ := taskList(t)
	r.Put(t, "/alice/tasks/weekly.ics", vtodo("weekly-5", "SUMMARY:Weekly review\nDTSTART:20261201T090000Z\nDUE:20261201T100000Z\nRRULE:FREQ=WEEKLY\n"))
	_, before, _ := r.Get(t, "/alice/tasks/weekly.ics")
	task, err := s.Get(ctx5(t), "weekly-5")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Complete(ctx5(t), task)
	if err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("Complete of a repeating task: got %v, want a sentence saying it repeats", err)
	}
	if _, after, _ := r.Get(t, "/alice/tasks/weekly.ics"); after != before {
		t.Errorf("the repeating task was rewritten:\ngot  %q\nwant %q", after, before)
	}
}

// Without password_file and with no Secret Service on the bus, the
// person is told where a password can come from.
func TestNoSecretServiceIsASentence(t *testing.T) {
	bus := testenv.StartBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", bus.Address)
	s, err := newSource(Options{URL: "http://127.0.0.1:9/alice/tasks/", Username: radUser})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.List(ctx5(t))
	if err == nil || !strings.Contains(err.Error(), "no Secret Service") || !strings.Contains(err.Error(), "password_file") {
		t.Fatalf("List with no Secret Service: got %v, want a sentence naming the Secret Service and password_file", err)
	}
}
