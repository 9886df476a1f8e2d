package caldav

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/antidrift/antidrift/service"
)

// todo is one task of the collection as the server holds it: the
// calendar object it lives in (path and ETag), its master VTODO (the one
// without RECURRENCE-ID) and the TaskItem the core sees.
type todo struct {
	path string
	etag string
	cal  *ical.Calendar
	comp *ical.Component
	item service.TaskItem
}

// errNotATask is a calendar object that holds no single task.
var errNotATask = errors.New("a calendar object without one VTODO")

// errNoUID is a VTODO that cannot be addressed: it has no UID.
var errNoUID = errors.New("a VTODO without UID")

// decodeObject parses one calendar object's text (what the fuzz target
// feeds) and maps its task.
func decodeObject(data []byte, loc *time.Location) (*ical.Calendar, service.TaskItem, error) {
	var cal *ical.Calendar
	err := guard(func() (err error) {
		cal, err = ical.NewDecoder(bytes.NewReader(data)).Decode()
		return err
	})
	if err != nil {
		return nil, service.TaskItem{}, err
	}
	comp, err := masterTodo(cal)
	if err != nil {
		return nil, service.TaskItem{}, err
	}
	item, err := mapTodo(comp, loc)
	return cal, item, err
}

// errPanicked is text the iCalendar decoder panicked on.
var errPanicked = errors.New("the iCalendar decoder gave up on malformed text")

// guard runs f, which decodes text from outside with go-ical, turning a
// panic into errPanicked: go-ical (2024-01 and 2025-03 alike) indexes past
// the end of a line like "0;0=" (found by FuzzDecodeTodo), and a server's
// reply must never take the daemon down.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errPanicked
		}
	}()
	return f()
}

// masterTodo is the calendar object's VTODO: the one without
// RECURRENCE-ID (a recurring task's overrides carry one). A calendar
// object holds one task (RFC 4791 section 4.1).
func masterTodo(cal *ical.Calendar) (*ical.Component, error) {
	var found *ical.Component
	for _, c := range cal.Children {
		if c == nil || c.Name != ical.CompToDo {
			continue
		}
		if c.Props.Get(ical.PropRecurrenceID) != nil {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%w: two VTODOs", errNotATask)
		}
		found = c
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no VTODO", errNotATask)
	}
	return found, nil
}

// mapTodo is the core's view of a VTODO. The title is exact (SUMMARY
// unescaped as RFC 5545 says, nothing else done to it): it is neutralized
// only where it is rendered. A DUE or PRIORITY that does not parse is
// treated as absent rather than losing the task; only a missing UID makes
// the VTODO unusable, since the task could not be written back.
func mapTodo(c *ical.Component, loc *time.Location) (service.TaskItem, error) {
	item := service.TaskItem{Source: SourceName}
	uid := c.Props.Get(ical.PropUID)
	if uid == nil || strings.TrimSpace(uid.Value) == "" {
		return item, errNoUID
	}
	item.ID = uid.Value
	if p := c.Props.Get(ical.PropSummary); p != nil {
		if s, err := p.Text(); err == nil {
			item.Title = s
		} else {
			item.Title = p.Value
		}
	}
	if p := c.Props.Get(ical.PropDue); p != nil {
		item.Due = parseDue(p, loc)
	}
	if p := c.Props.Get(ical.PropPriority); p != nil {
		// RFC 5545 3.8.1.9: 0 undefined, 1 highest .. 9 lowest.
		if n, err := strconv.Atoi(strings.TrimSpace(p.Value)); err == nil && n >= 1 && n <= 9 {
			item.Priority = n
		}
	}
	item.Done = isClosed(c)
	return item, nil
}

// isClosed: a VTODO that is COMPLETED or CANCELLED, or carries a COMPLETED
// date (some clients set only that), is not an open task.
func isClosed(c *ical.Component) bool {
	if p := c.Props.Get(ical.PropStatus); p != nil {
		switch strings.ToUpper(strings.TrimSpace(p.Value)) {
		case "COMPLETED", "CANCELLED":
			return true
		}
	}
	return c.Props.Get(ical.PropCompleted) != nil
}

// parseDue reads DUE: a DATE is that day's start in loc (as Taskwarrior
// has a due date); a DATE-TIME in UTC, in its TZID's zone, or floating
// (loc). A TZID Go does not know — a Windows name, or a vendor prefix like
// /mozilla.org/20070129_1/Europe/Berlin — is tried by its trailing IANA
// name, else the time is taken as floating. A value that is no date at all
// is no due date: the task still lists.
func parseDue(p *ical.Prop, loc *time.Location) time.Time {
	v := strings.TrimSpace(p.Value)
	isDate := strings.EqualFold(p.Params.Get(ical.ParamValue), "DATE") || len(v) == len("20060102")
	if isDate {
		t, err := time.ParseInLocation("20060102", v, loc)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	if strings.HasSuffix(v, "Z") {
		t, err := time.ParseInLocation("20060102T150405Z", v, time.UTC)
		if err != nil {
			return time.Time{}
		}
		return t
	}
	zone := loc
	if tzid := p.Params.Get(ical.ParamTimezoneID); tzid != "" {
		if z := zoneOf(tzid); z != nil {
			zone = z
		}
	}
	t, err := time.ParseInLocation("20060102T150405", v, zone)
	if err != nil {
		return time.Time{}
	}
	return t
}

// zoneOf is the IANA zone a TZID names, trying the whole name and then
// each trailing part after a '/' ("/mozilla.org/20070129_1/Europe/Berlin"
// → "Europe/Berlin"); nil when none is known.
func zoneOf(tzid string) *time.Location {
	name := strings.Trim(tzid, "\"")
	for name != "" {
		if strings.EqualFold(name, "UTC") || strings.EqualFold(name, "GMT") {
			return time.UTC
		}
		if !strings.HasPrefix(name, "/") && !strings.Contains(name, "..") && len(name) < 64 {
			if z, err := time.LoadLocation(name); err == nil && name != "Local" {
				return z
			}
		}
		_, rest, ok := strings.Cut(name, "/")
		if !ok {
			return nil
		}
		name = rest
	}
	return nil
}

// markCompleted sets the VTODO done the way RFC 5545 says and task apps
// (Evolution, Tasks.org, Nextcloud Tasks) read it: STATUS:COMPLETED,
// COMPLETED and LAST-MODIFIED and DTSTAMP now in UTC, PERCENT-COMPLETE:100.
// Every other property stays as it was.
func markCompleted(c *ical.Component, now time.Time) {
	now = now.UTC().Truncate(time.Second)
	set := func(name, value string, dt bool) {
		p := ical.NewProp(name)
		if dt {
			p.SetDateTime(now)
		} else {
			p.Value = value
		}
		c.Props.Set(p)
	}
	set(ical.PropStatus, "COMPLETED", false)
	set(ical.PropCompleted, "", true)
	set(ical.PropPercentComplete, "100", false)
	set(ical.PropLastModified, "", true)
	set(ical.PropDateTimeStamp, "", true)
}

// encodeCalendar is the object's text to PUT back.
func encodeCalendar(cal *ical.Calendar) ([]byte, error) {
	var buf bytes.Buffer
	if err := ical.NewEncoder(&buf).Encode(cal); err != nil {
		return nil, say("antidrift cannot write this task back in a form the server would accept (%v): tick it off in your task app", err)
	}
	return buf.Bytes(), nil
}
