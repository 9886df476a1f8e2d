package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"testing"
)

// What the GNOME tests do with screenshots: cut, compare, save.

// crop is the part r of img, as seen from r's corner.
func crop(img image.Image, r image.Rectangle) image.Image {
	out := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			out.Set(x, y, img.At(r.Min.X+x, r.Min.Y+y))
		}
	}
	return out
}

// savePNG writes img to path.
func savePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameIn says whether a and b have the same pixels in r.
func sameIn(a, b image.Image, r image.Rectangle) bool {
	if !r.In(a.Bounds()) || !r.In(b.Bounds()) {
		return false
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				return false
			}
		}
	}
	return true
}

// diffIn is the smallest rectangle holding every pixel in which a and b
// differ (empty when they are the same).
func diffIn(a, b image.Image) image.Rectangle {
	var r image.Rectangle
	bounds := a.Bounds().Intersect(b.Bounds())
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}
