package kwin

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// Whatever KWin sends becomes a window or "no window has focus", never a
// crash.
func TestPushTakesAnyReport(t *testing.T) {
	s := NewSensor(nil, "", nil)
	s.Push("", "", "")
	if w := <-s.news.C(); w != service.NoFocus() {
		t.Fatalf("no handle: got %+v, want %+v", w, service.NoFocus())
	}
	s.Push("not a uuid", "\x00\xff", string(make([]byte, 1<<16)))
	if w := <-s.news.C(); !w.Available || w.ID != "not a uuid" {
		t.Fatalf("odd report: got %+v, want an available window with ID %q", w, "not a uuid")
	}
}

// The evidence contract's scenarios, as the KWin script reports them
// (dist/kwin/focus.js: the window's internalId, resourceClass and caption,
// or "" for each when no window is active).
func TestEvidenceContract(t *testing.T) {
	testenv.CheckPushed(t, "{00000000-0000-4000-8000-000000000001}", func() (func(string, string, string), func() service.Window) {
		s := NewSensor(nil, "", nil)
		return s.Push, func() service.Window { return <-s.news.C() }
	})
}
