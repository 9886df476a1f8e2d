package apps

import (
	"fmt"
	"path/filepath"
	"testing"
)

// benchDir is an applications directory of n entries, a tenth with a
// StartupWMClass, as a full desktop has (Debian with GNOME: ~500).
func benchDir(b *testing.B, n int) string {
	b.Helper()
	d := filepath.Join(b.TempDir(), "applications")
	for i := 0; i < n; i++ {
		extra := []string{"Name[de]=Anwendung", "Icon=app" + fmt.Sprint(i)}
		if i%10 == 0 {
			extra = append(extra, fmt.Sprintf("StartupWMClass=Class%d", i))
		}
		writeEntry(b, d, fmt.Sprintf("org.example.App%d.desktop", i), app(fmt.Sprintf("App %d", i), extra...))
	}
	return d
}

// BenchmarkLookup is the cost the core pays per window switch (a miss,
// the worst case: every step of the matching is tried).
func BenchmarkLookup(b *testing.B) {
	x, err := open([]string{benchDir(b, 500)}, "de_DE.UTF-8")
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := x.Lookup("Some Window", "some-window", ""); ok {
			b.Fatal("a match")
		}
	}
}

// BenchmarkScan is one reading of 500 entries (at start, and after each
// change inotify reports).
func BenchmarkScan(b *testing.B) {
	d := benchDir(b, 500)
	langs := localeVariants("de_DE.UTF-8")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, _ := scan([]string{d}, langs); len(s.byID) != 500 {
			b.Fatalf("got %d entries, want 500", len(s.byID))
		}
	}
}
