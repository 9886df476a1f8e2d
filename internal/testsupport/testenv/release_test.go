package testenv

import "testing"

func TestIsVersion(t *testing.T) {
	for _, c := range []struct {
		deb, v string
		want   bool
	}{
		{"4:6.7.4-1", "6.7", true}, {"50.5-1", "50", true}, {"1.10-1", "1.10", true},
		{"1.10-1", "1.1", false}, {"51.0-1", "50", false}, {"0.20.2-1", "0.20", true}, {"6.3.6-1", "6.3", true},
	} {
		if got := isVersion(c.deb, c.v); got != c.want {
			t.Errorf("isVersion(%q, %q) = %v, want %v", c.deb, c.v, got, c.want)
		}
	}
}
