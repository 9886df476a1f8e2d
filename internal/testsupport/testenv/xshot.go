package testenv

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// Screenshot saves what window id shows (0: the whole screen) as a PNG at
// path, through GetImage. Headless KWin has no OpenGL here, and its
// screenshot interface needs it, so a panel is photographed on Xvfb.
func (d *Display) Screenshot(t testing.TB, path string, id uint32) {
	t.Helper()
	c, err := xgb.NewConnDisplay(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	drawable := xproto.Drawable(id)
	if id == 0 {
		drawable = xproto.Drawable(xproto.Setup(c).DefaultScreen(c).Root)
	}
	geo, err := xproto.GetGeometry(c, drawable).Reply()
	if err != nil {
		t.Fatal(err)
	}
	w, h := int(geo.Width), int(geo.Height)
	reply, err := xproto.GetImage(c, xproto.ImageFormatZPixmap, drawable, 0, 0, geo.Width, geo.Height, 0xffffffff).Reply()
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Data) < 4*w*h {
		t.Fatalf("screenshot of %s: %d bytes for %dx%d (depth %d); want 32 bits a pixel", d.Name, len(reply.Data), w, h, reply.Depth)
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range w * h { // B, G, R, X in memory at depth 24
		p := reply.Data[4*i:]
		img.Set(i%w, i/w, color.NRGBA{R: p[2], G: p[1], B: p[0], A: 255})
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}
