package gnomeshell

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// The evidence contract's scenarios, as the extension reports them
// (evidence.js Focus: Mutter's window id, WM class and title, or "" for
// each when no window has focus). GNOME Shell 48 reports "" when the only
// window closes or the desktop is clicked: that is no window, not a window
// without a class.
func TestEvidenceContract(t *testing.T) {
	testenv.CheckPushed(t, "12", func() (func(string, string, string), func() service.Window) {
		s := NewSensor(nil, nil)
		return s.Push, func() service.Window { return <-s.news.C() }
	})
}
