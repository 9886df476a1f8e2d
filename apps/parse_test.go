package apps

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseEntry(t *testing.T) {
	for _, c := range []struct {
		in   string
		want parsed
		ok   bool
	}{
		{"[Desktop Entry]\nType=Application\nName=A\\sB\nIcon = /x/y.png\n", parsed{name: "A B", icon: "/x/y.png"}, true},
		{"# c\n[Desktop Entry]\r\nName=A\r\nType=Application\r\nNoDisplay=true\r\n[Desktop Action new]\nName=New\nStartupWMClass=no\n", parsed{name: "A", noDisplay: true}, true},
		{"[Other]\nName=A\nType=Application\n", parsed{}, false},
		{"Name=A\nType=Application\n", parsed{}, false},
		{"[Desktop Entry]\nType=Application\n", parsed{}, false},
		{"[Desktop Entry]\nType=Link\nName=A\n", parsed{}, false},
		{"[Desktop Entry]\nHidden=true\n", parsed{hidden: true}, true},
		{"[Desktop Entry]\nType=Application\nName=A\nStartupWMClass=" + strings.Repeat("w", MaxWMClassLen+1) + "\n", parsed{name: "A"}, true},
	} {
		got, ok := parseEntry([]byte(c.in), []string{"de"})
		if got != c.want || ok != c.ok {
			t.Errorf("parseEntry(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseEntry(f *testing.F) {
	f.Add([]byte("[Desktop Entry]\nType=Application\nName=Files\nName[de]=Dateien\nIcon=org.gnome.Nautilus\nStartupWMClass=nautilus\n"))
	f.Add([]byte("[Desktop Entry]\nHidden=true\n"))
	f.Add([]byte("[Desktop Entry]\nType=Application\nName[de_DE@euro]=\\\\x\\s\\\n[x"))
	f.Add([]byte("\xff[Desktop Entry]\x00\nType=Application\nName=\xfe\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := parseEntry(data, []string{"de_DE@euro", "de_DE", "de@euro", "de"})
		if !ok {
			return
		}
		if p.hidden {
			if p != (parsed{hidden: true}) {
				t.Fatalf("a Hidden entry kept %+v", p)
			}
			return
		}
		if p.name == "" || !utf8.ValidString(p.name) || utf8.RuneCountInString(p.name) > MaxNameRunes {
			t.Fatalf("name %q: want non-empty valid UTF-8 of at most %d runes", p.name, MaxNameRunes)
		}
		if len(p.icon) > MaxIconLen || !utf8.ValidString(p.icon) || len(p.wmClass) > MaxWMClassLen || !utf8.ValidString(p.wmClass) {
			t.Fatalf("icon %q / StartupWMClass %q past the caps or not UTF-8", p.icon, p.wmClass)
		}
	})
}
