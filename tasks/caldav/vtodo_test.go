package caldav

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/antidrift/antidrift/internal/testsupport/hostile"
	"github.com/antidrift/antidrift/service"
)

func crlf(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }

// The mapping of a VTODO's properties to the core's TaskItem.
func TestMapTodo(t *testing.T) {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	newYork, _ := time.LoadLocation("America/New_York")
	for _, c := range []struct {
		name, props string
		title       string
		due         time.Time
		prio        int
		done        bool
	}{
		{"date", "SUMMARY:a\nDUE;VALUE=DATE:20261205\n", "a", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), 0, false},
		{"date without VALUE", "SUMMARY:a\nDUE:20261205\n", "a", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), 0, false},
		{"utc", "SUMMARY:a\nDUE:20261205T150000Z\n", "a", time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC), 0, false},
		{"tzid", "SUMMARY:a\nDUE;TZID=Europe/Berlin:20261205T150000\n", "a", time.Date(2026, 12, 5, 15, 0, 0, 0, berlin), 0, false},
		{"mozilla tzid", "SUMMARY:a\nDUE;TZID=/mozilla.org/20070129_1/America/New_York:20261205T150000\n", "a", time.Date(2026, 12, 5, 15, 0, 0, 0, newYork), 0, false},
		{"unknown tzid is floating", "SUMMARY:a\nDUE;TZID=W. Europe Standard Time:20261205T150000\n", "a", time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC), 0, false},
		{"floating", "SUMMARY:a\nDUE:20261205T150000\n", "a", time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC), 0, false},
		{"bad due is none", "SUMMARY:a\nDUE:tomorrow\n", "a", time.Time{}, 0, false},
		{"priority", "SUMMARY:a\nPRIORITY:5\n", "a", time.Time{}, 5, false},
		{"priority 0 is none", "SUMMARY:a\nPRIORITY:0\n", "a", time.Time{}, 0, false},
		{"priority out of range", "SUMMARY:a\nPRIORITY:12\n", "a", time.Time{}, 0, false},
		{"completed", "SUMMARY:a\nSTATUS:COMPLETED\n", "a", time.Time{}, 0, true},
		{"cancelled", "SUMMARY:a\nSTATUS:cancelled\n", "a", time.Time{}, 0, true},
		{"completed date only", "SUMMARY:a\nCOMPLETED:20261130T090000Z\n", "a", time.Time{}, 0, true},
		{"in process is open", "SUMMARY:a\nSTATUS:IN-PROCESS\n", "a", time.Time{}, 0, false},
		{"escapes", "SUMMARY:Call Bob\\; then\\, maybe\\nAlice \\\\o/\n", "Call Bob; then, maybe\nAlice \\o/", time.Time{}, 0, false},
		{"exact, not neutralized", "SUMMARY:\u202eevil\u202c <b>x</b> \U0001F600\n", "\u202eevil\u202c <b>x</b> \U0001F600", time.Time{}, 0, false},
		{"folded", "SUMMARY:a long\n  title\n", "a long title", time.Time{}, 0, false},
		{"no summary", "", "", time.Time{}, 0, false},
	} {
		data := crlf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:u-1\nDTSTAMP:20261201T100000Z\n" + c.props + "END:VTODO\nEND:VCALENDAR\n")
		_, item, err := decodeObject(data, time.UTC)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if item.ID != "u-1" || item.Title != c.title || !item.Due.Equal(c.due) || item.Priority != c.prio || item.Done != c.done {
			t.Errorf("%s: got %+v, want title %q due %v priority %d done %v", c.name, item, c.title, c.due, c.prio, c.done)
		}
	}
}

// A recurring task's overrides (RECURRENCE-ID) are not the task; a
// calendar object without a VTODO, or a VTODO without UID, is none.
func TestMasterTodo(t *testing.T) {
	data := crlf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:r\nDTSTAMP:20261201T100000Z\nRECURRENCE-ID:20261208T090000Z\nSUMMARY:override\nEND:VTODO\nBEGIN:VTODO\nUID:r\nDTSTAMP:20261201T100000Z\nSUMMARY:master\nRRULE:FREQ=WEEKLY\nEND:VTODO\nEND:VCALENDAR\n")
	_, item, err := decodeObject(data, time.UTC)
	if err != nil || item.Title != "master" {
		t.Errorf("got %+v, %v; want the master", item, err)
	}
	for name, body := range map[string]string{
		"event only": "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VEVENT\nUID:e\nDTSTAMP:20261201T100000Z\nEND:VEVENT\nEND:VCALENDAR\n",
		"no uid":     "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nSUMMARY:a\nEND:VTODO\nEND:VCALENDAR\n",
	} {
		if _, item, err := decodeObject(crlf(body), time.UTC); err == nil {
			t.Errorf("%s: got %+v, want an error", name, item)
		}
	}
}

// Marking done sets the four properties and keeps every other, unknown
// ones included; the result encodes and reads back as done.
func TestMarkCompletedKeepsTheRest(t *testing.T) {
	data := crlf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:u-1\nDTSTAMP:20261201T100000Z\nSUMMARY:keep me\nSTATUS:IN-PROCESS\nPERCENT-COMPLETE:40\nX-APPLE-SORT-ORDER:12\nCATEGORIES:work,home\nBEGIN:VALARM\nACTION:DISPLAY\nTRIGGER:-PT15M\nDESCRIPTION:r\nEND:VALARM\nEND:VTODO\nEND:VCALENDAR\n")
	cal, _, err := decodeObject(data, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	comp, _ := masterTodo(cal)
	now := time.Date(2026, 12, 3, 14, 5, 6, 0, time.FixedZone("x", 3600))
	markCompleted(comp, now)
	out, err := encodeCalendar(cal)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STATUS:COMPLETED\r\n", "COMPLETED:20261203T130506Z\r\n", "PERCENT-COMPLETE:100\r\n", "LAST-MODIFIED:20261203T130506Z\r\n", "DTSTAMP:20261203T130506Z\r\n", "SUMMARY:keep me\r\n", "X-APPLE-SORT-ORDER:12\r\n", "CATEGORIES:work,home\r\n", "TRIGGER:-PT15M\r\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Count(string(out), "STATUS:") != 1 || strings.Contains(string(out), "PERCENT-COMPLETE:40") {
		t.Errorf("old values left behind:\n%s", out)
	}
	if _, item, err := decodeObject(out, time.UTC); err != nil || !item.Done || item.Title != "keep me" {
		t.Errorf("read back: got %+v, %v", item, err)
	}
}

// FuzzDecodeTodo feeds anything to the calendar decoding and the mapping
// to TaskItem: never a panic; a task that maps has a UID; its title is
// what SUMMARY says, byte for byte when the text has no escapes; a due
// time, if any, is a real time; the priority is 0..9; and a mapped task
// marked done encodes to something that reads back done with the same id.
func FuzzDecodeTodo(f *testing.F) {
	for _, seed := range []string{
		"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:u\nDTSTAMP:20261201T100000Z\nSUMMARY:a\\, b\nDUE;VALUE=DATE:20261205\nPRIORITY:1\nSTATUS:NEEDS-ACTION\nEND:VTODO\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:u\nDUE;TZID=Europe/Berlin:20261205T150000\nEND:VTODO\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:u\nDUE;TZID=/a/b/../../etc/passwd:20261205T150000\nEND:VTODO\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:u\nRECURRENCE-ID:1\nEND:VTODO\nBEGIN:VTODO\nUID:u\nCOMPLETED:x\nEND:VTODO\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:u\nSUMMARY;LANGUAGE=\"de\":\u00e4\n \u00f6\nEND:VTODO\nEND:VCALENDAR\n",
		"BEGIN:VCALENDAR\nBEGIN:VTODO\nEND:VCALENDAR\n",
		"garbage",
	} {
		f.Add(crlf(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cal, item, err := decodeObject(data, time.UTC)
		if err != nil {
			return
		}
		if strings.TrimSpace(item.ID) == "" {
			t.Fatalf("a task without UID mapped: %+v", item)
		}
		if item.Priority < 0 || item.Priority > 9 {
			t.Fatalf("priority %d out of 0..9", item.Priority)
		}
		if !item.Due.IsZero() && (item.Due.Year() < 0 || item.Due.Year() > 9999) {
			t.Fatalf("due %v", item.Due)
		}
		comp, err := masterTodo(cal)
		if err != nil {
			t.Fatal(err)
		}
		if p := comp.Props.Get("SUMMARY"); p != nil && !strings.Contains(p.Value, "\\") && utf8.ValidString(p.Value) && item.Title != p.Value {
			t.Fatalf("title %q is not SUMMARY %q", item.Title, p.Value)
		}
		markCompleted(comp, time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
		out, err := encodeCalendar(cal)
		if err != nil {
			return // refused with a sentence; nothing would be written
		}
		_, back, err := decodeObject(out, time.UTC)
		if err != nil {
			t.Fatalf("what antidrift would PUT does not read back: %v\n%q", err, out)
		}
		if !back.Done || back.ID != item.ID {
			t.Fatalf("read back %+v, want done with id %q", back, item.ID)
		}
	})
}

// Hostile task names come through exact, as a server would send them
// (TEXT escaped as RFC 5545 says, every other byte raw): the data is never
// neutralized here (renderers do that, each for its reader).
func TestHostileTitlesAreExact(t *testing.T) {
	esc := strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\n", `\n`)
	for _, h := range hostile.Texts {
		data := crlf("BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\nBEGIN:VTODO\nUID:u-1\nDTSTAMP:20261201T100000Z\n")
		data = append(data, "SUMMARY:"+esc.Replace(h.Text)+"\r\n"...)
		data = append(data, crlf("END:VTODO\nEND:VCALENDAR\n")...)
		_, item, err := decodeObject(data, time.UTC)
		if err != nil {
			t.Errorf("%s: %v", h.Name, err)
			continue
		}
		if item.Title != h.Text {
			t.Errorf("%s: got title %q, want %q", h.Name, item.Title, h.Text)
		}
	}
}

// FuzzMultistatus feeds anything as a calendar-query's reply: never a
// panic; every task read has a UID, a path and its calendar object.
func FuzzMultistatus(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:response><D:href>/a/b.ics</D:href><D:propstat><D:prop><D:getetag>"1"</D:getetag><C:calendar-data>BEGIN:VCALENDAR&#13;
BEGIN:VTODO&#13;
UID:u&#13;
SUMMARY:x&#13;
END:VTODO&#13;
END:VCALENDAR&#13;
</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>`))
	f.Add([]byte(`<D:multistatus xmlns:D="DAV:"><D:response><D:href>%zz</D:href></D:response></D:multistatus>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		todos, err := parseMultistatus(body)
		if err != nil {
			return
		}
		for _, td := range todos {
			if td.item.ID == "" || td.path == "" || td.cal == nil || td.comp == nil || td.item.Version != td.etag {
				t.Fatalf("got %+v", td)
			}
		}
	})
}

// What changed is said from what the session kept: a zero due date or
// priority (not kept) is not news.
func TestWhatChanged(t *testing.T) {
	due := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	now := service.TaskItem{ID: "u", Title: "b", Due: due, Priority: 3, Done: true}
	for _, c := range []struct {
		was  service.TaskItem
		want string
	}{
		{service.TaskItem{ID: "u", Title: "b"}, "it was marked done or cancelled"},
		{service.TaskItem{ID: "u", Title: "a", Done: true}, "it was renamed"},
		{service.TaskItem{ID: "u", Title: "b", Due: due.Add(time.Hour), Priority: 1, Done: true}, "its due date changed, its priority changed"},
		{service.TaskItem{ID: "u", Title: "b", Due: due, Priority: 3, Done: true}, "it was edited"},
	} {
		if got := whatChanged(c.was, now); got != c.want {
			t.Errorf("whatChanged(%+v): got %q, want %q", c.was, got, c.want)
		}
	}
}
