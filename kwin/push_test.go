package kwin

import (
	"testing"

	"github.com/antidrift/antidrift/service"
)

// Whatever KWin sends becomes a window or "no window has focus", never a
// crash.
func TestPushTakesAnyReport(t *testing.T) {
	s := NewSensor(nil, "", nil)
	s.Push("", "", "")
	if w := <-s.news.C(); w != service.NoFocus() {
		t.Fatalf("no handle: %+v", w)
	}
	s.Push("not a uuid", "\x00\xff", string(make([]byte, 1<<16)))
	if w := <-s.news.C(); !w.Available || w.ID != "not a uuid" {
		t.Fatalf("odd report: %+v", w)
	}
}
