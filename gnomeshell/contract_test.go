package gnomeshell

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testenv"
)

// The evidence contract's scenarios, as the extension reports them
// (evidence.js Focus: Mutter's window id, WM class and title, or "" for
// each when no window has focus). GNOME Shell 48 reports "" when the only
// window closes or the desktop is clicked: that is no window, not a window
// without a class.
func TestEvidenceContract(t *testing.T) {
	for _, sc := range testenv.EvidenceScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			s := NewSensor(nil, nil)
			s.Push("12", sc.App, sc.Title)
			got := <-s.news.C()
			if sc.Closed {
				s.Push("", "", "")
				got = <-s.news.C()
			}
			testenv.CheckEvidence(t, sc, got)
		})
	}
}
