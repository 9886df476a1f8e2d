package notifications

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/internal/testsupport/hostile"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// A body carries the person's next action and a window's class. A server
// that reads markup in it (it advertises body-markup) gets each hostile
// text escaped, so it shows the text rather than a tag, a link or an image
// it would fetch; a server that reads plain text gets it exactly.
func TestBodyIsEscapedOnlyForAServerThatReadsMarkup(t *testing.T) {
	bus := testenv.StartBus(t)
	c := newClient(t, bus)
	for _, server := range []struct {
		caps   []string
		markup bool
	}{
		{[]string{"actions", "body"}, false},
		{[]string{"actions", "body", "body-markup"}, true},
	} {
		s := startFakeServer(t, bus, server.caps...)
		for _, h := range hostile.Texts {
			note := driftNote("Drifting")
			note.Body = "Next: " + h.Text + "\nDone when: it is done"
			c.notify(t, note)
			want := note.Body
			if server.markup {
				want = inert.Markup(note.Body)
			}
			if got := s.last(t).Body; got != want {
				t.Errorf("%v: %s: body %q, want %q", server.caps, h.Name, got, want)
			}
		}
		s.stop(t)
	}
}

// The hint that stands in for actions is part of the body too, and names a
// window class: escaped with the rest.
func TestNoActionsHintIsEscapedForMarkup(t *testing.T) {
	bus := testenv.StartBus(t)
	s := startFakeServer(t, bus, "body", "body-markup")
	c := newClient(t, bus)
	note := driftNote("Drifting")
	note.NoActionsHint = "Run `antidrift allow <Distraction&Co>` to allow it."
	c.notify(t, note)
	if got, want := s.last(t).Body, note.Body+"\nRun `antidrift allow &lt;Distraction&amp;Co&gt;` to allow it."; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
}

// dunst advertises body-markup and draws the body as Pango markup: a next
// action of "<b>x</b> & y" shows as those characters, not as a bold x (or,
// since a lone & does not parse, as the text with its tags stripped).
// What dunst draws is its "message", the markup it hands Pango, as
// dunstctl history says once the notification is closed; photographed.
func TestDunstShowsMarkupInTheBodyLiterally(t *testing.T) {
	d := testenv.StartX(t)
	bus := testenv.StartBus(t)
	testenv.StartDunst(t, bus, d)
	c := newClient(t, bus)
	// The summary names a window's class, which its program chose: plain
	// text by the specification, and dunst escapes it itself.
	note := driftNote("Drifting: <b>Class</b> & Co")
	note.Body = "Next: <b>x</b> & y\nDone when: <i>done</i>"
	c.notify(t, note)
	waitDisplayed(t, bus, 1)
	caps, err := bus.Run(t, "gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path",
		"/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.GetCapabilities")
	if err != nil || !strings.Contains(caps, "'body-markup'") {
		t.Fatalf("dunst does not advertise body-markup (%v), so this checks nothing: %s", err, caps)
	}
	shot := filepath.Join(testenv.ArtifactsDir(t), "dunst-markup.png")
	testenv.WaitUntil(t, 10*time.Second, "dunst to draw the notification", func() bool {
		d.Screenshot(t, shot, 0)
		img := testenv.DecodePNG(t, shot)
		// dunst draws at the top right of the black screen.
		for y := range img.Bounds().Dy() / 4 {
			if r, g, b, _ := img.At(img.Bounds().Max.X-20, y).RGBA(); r|g|b != 0 {
				return true
			}
		}
		return false
	})
	t.Logf("screenshot: %s", shot)

	if _, err := bus.Run(t, "dunstctl", "close-all"); err != nil {
		t.Fatal(err)
	}
	out, err := bus.Run(t, "dunstctl", "history")
	if err != nil {
		t.Fatal(err)
	}
	var history struct {
		Data [][]map[string]struct{ Data any }
	}
	if err := json.Unmarshal([]byte(out), &history); err != nil || len(history.Data) != 1 || len(history.Data[0]) != 1 {
		t.Fatalf("dunstctl history: %v\n%s", err, out)
	}
	message, _ := history.Data[0][0]["message"].Data.(string)
	drawn, elements, err := hostile.Markup(message)
	if err != nil {
		t.Fatalf("dunst's markup %q does not parse, so Pango draws something else: %v", message, err)
	}
	if want := "Drifting: <b>Class</b> & Co\nNext: <b>x</b> & y\nDone when: <i>done</i>"; !strings.Contains(drawn, want) {
		t.Errorf("dunst draws %q (markup %q), want it to show %q", drawn, message, want)
	}
	// dunst's own format makes the summary bold; the body adds no element.
	if elements != 1 {
		t.Errorf("dunst's markup %q: got %d elements, want 1 (dunst's own <b> summary; the body adds none)", message, elements)
	}
}
