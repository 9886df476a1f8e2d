package report

import (
	"bytes"
	"html"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The page asks for nothing outside itself: no script, no link, no image
// or font by URL. (The browser test below proves it by running offline.)
func TestHTMLIsSelfContained(t *testing.T) {
	var page bytes.Buffer
	if err := HTML(&page, build(t, fixture(t), LastDays(fixtureNow, 7, 0)), time.UTC); err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, page.String())
}

// checkSelfContained fails t for anything in page that would load from
// outside it: an image is a data: URI of a PNG or an SVG and nothing else.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, bad := range []string{"http:", "https:", "url(", "<script", "@import", " href=", "<link", "<object", "<embed", "<iframe"} {
		if strings.Contains(lower, bad) {
			t.Errorf("the page: got %q in it, want nothing loaded from outside", bad)
		}
	}
	// Outside text is escaped ("&lt;img src=x"): only the page's own
	// tags start with "<".
	for _, tag := range regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(page, -1) {
		l := strings.ToLower(tag)
		if !strings.Contains(l, " src=") && !strings.HasPrefix(l, "<img") {
			continue
		}
		if !regexp.MustCompile(`^<img class="icon" src="data:image/(png|svg\+xml);base64,[A-Za-z0-9+/=]+" alt="" width="20" height="20">$`).MatchString(html.UnescapeString(tag)) {
			t.Errorf("the page: got %.120q, want every image an <img> of a data: URI (PNG or SVG)", tag)
		}
	}
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`) {
		t.Errorf("the page's Content-Security-Policy: want default-src 'none' and images from data: alone")
	}
}

// The HTML report rendered by a real Chromium with no network: the figures
// a person looks for are on the page, titles stay private, nothing failed
// or was refused to load, and the screenshots in light and dark mode show
// the charts on the right background.
func TestHTMLInHeadlessChromium(t *testing.T) {
	r := build(t, fixture(t), LastDays(fixtureNow, 7, 0))
	dir := testenv.ArtifactsDir(t)
	page := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := HTML(&buf, r, time.UTC); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		dark bool
		bg   color.RGBA
	}{{"light", false, color.RGBA{0xfb, 0xfb, 0xf8, 0xff}}, {"dark", true, color.RGBA{0x15, 0x18, 0x1c, 0xff}}} {
		t.Run(mode.name, func(t *testing.T) {
			shot := filepath.Join(dir, "report-week-"+mode.name+".png")
			got := testenv.RenderPage(t, page, shot, 900, 2400, mode.dark)
			t.Logf("screenshot: %s (offline: %v)", shot, got.Offline)
			if m := regexp.MustCompile(`.*(net::ERR_|Failed to load resource|Refused to (load|apply|execute)|Not allowed to load).*`).FindString(got.Log); m != "" {
				t.Errorf("Chromium's log: got %s, want the page to load nothing", m)
			}
			dom := got.DOM
			for _, want := range []string{
				dur(r.Totals.OnTaskSeconds), dur(r.Totals.DriftSeconds), pct(r.Totals.CompletionRate),
				"The audit chain is broken", "1 ended session is pending", r.Sessions[0].NextAction,
				r.Sessions[len(r.Sessions)-1].NextAction, "Top windows", r.Windows[0].Class, "…",
			} {
				if !strings.Contains(dom, escaped(want)) {
					t.Errorf("the rendered page: got no %q, want it shown", want)
				}
			}
			for _, private := range []string{"Passwords.kdbx", "alice@example.org"} {
				if strings.Contains(dom, private) {
					t.Errorf("the rendered page: got the private %q, want it hidden", private)
				}
			}
			img := testenv.DecodePNG(t, shot)
			if b := img.Bounds(); b.Dx() != 900 || b.Dy() != 2400 {
				t.Errorf("screenshot: got %v, want 900×2400", b)
			}
			if c := color.RGBAModel.Convert(img.At(4, 4)).(color.RGBA); !near(c, mode.bg) {
				t.Errorf("the page background: got %v, want about %v in %s mode", c, mode.bg, mode.name)
			}
			if n := countNear(img, onTaskColour(mode.dark)); n < 2000 {
				t.Errorf("pixels of the on-task colour: got %d, want at least 2000 (the charts rendered)", n)
			}
		})
	}
}

// escaped is s as a DOM dump writes it in a text node.
func escaped(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func onTaskColour(dark bool) color.RGBA {
	if dark {
		return color.RGBA{0x45, 0xc0, 0x7f, 0xff}
	}
	return color.RGBA{0x2f, 0x9e, 0x62, 0xff}
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int {
		if x > y {
			return int(x - y)
		}
		return int(y - x)
	}
	return d(a.R, b.R) < 12 && d(a.G, b.G) < 12 && d(a.B, b.B) < 12
}

func countNear(img image.Image, c color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if near(color.RGBAModel.Convert(img.At(x, y)).(color.RGBA), c) {
				n++
			}
		}
	}
	return n
}
