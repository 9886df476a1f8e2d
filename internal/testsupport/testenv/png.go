package testenv

import (
	"image"
	"image/png"
	"os"
	"testing"
)

// DecodePNG reads a screenshot a test took.
func DecodePNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}
