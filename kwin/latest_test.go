package kwin

import (
	"testing"

	"github.com/antidrift/antidrift/dbusapi"
	"github.com/antidrift/antidrift/service"
)

func win(class string) service.Window {
	return service.Window{ID: "{00000000-0000-4000-8000-000000000000}", Class: class, Available: true}
}

// Newest wins by the sender's serial, across wrap-around; the sensor's own
// news always counts; a repeat is not news; a new KWin numbers afresh.
func TestLatestKeepsTheNewestReport(t *testing.T) {
	l := latest{wake: make(chan struct{}, 1)}
	take := func() string {
		w, ok := l.take()
		if !ok {
			return "-"
		}
		if !w.Available {
			return w.Reason
		}
		return w.Class
	}
	l.post(win("b"), 20)
	l.post(win("a"), 19) // overtaken by 20 on its way: stale
	if got := take(); got != "b" {
		t.Fatalf("took %s, want b", got)
	}
	l.post(win("b"), 21)
	if got := take(); got != "-" {
		t.Fatalf("a repeat was news: %s", got)
	}
	l.post(unavailable(reasonGone), 0)
	if got := take(); got != reasonGone {
		t.Fatalf("took %s", got)
	}
	l.newConnection()
	l.post(win("c"), 2)
	if got := take(); got != "c" {
		t.Fatalf("a new KWin's first report: %s", got)
	}
	l.newConnection()
	l.post(win("d"), 0xfffffffe)
	if got := take(); got != "d" {
		t.Fatalf("took %s, want d", got)
	}
	l.post(win("e"), 1) // after wrap-around
	l.post(win("f"), 0xffffffff)
	if got := take(); got != "e" {
		t.Fatalf("after wrap-around took %s, want e", got)
	}
	if l.count() != 5 { // b, b, c, d, e
		t.Fatalf("count %d, want 5 reports accepted", l.count())
	}
}

// Whatever KWin sends becomes a window or a reason, never a crash.
func TestPushTakesAnyReport(t *testing.T) {
	s := NewSensor(nil, "", nil)
	s.Push(dbusapi.FocusReport{Serial: 1})
	if w, _ := s.news.take(); w != (service.Window{Reason: reasonNoFocus}) {
		t.Fatalf("no handle: %+v", w)
	}
	s.Push(dbusapi.FocusReport{Handle: "not a uuid", AppID: "\x00\xff", Title: string(make([]byte, 1<<16)), Serial: 2})
	if w, _ := s.news.take(); !w.Available || w.ID != "not a uuid" {
		t.Fatalf("odd report: %+v", w)
	}
}
