package dist

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// The applet on Plasma 6.4 and later (FollowProperties.qml) turns the
// daemon's typed D-Bus values into plain ones by the interface's property
// types: every number property (t, x, u) and every string list (as) of
// org.antidrift.Session1 is in its lists, and nothing else, so a property
// added to the interface is never shown as "[object Object]" or compared
// as a string.
func TestAppletConvertsEveryPropertyByItsType(t *testing.T) {
	raw, err := os.ReadFile("org.antidrift.Session1.xml")
	if err != nil {
		t.Fatal(err)
	}
	var node struct {
		Interfaces []struct {
			Name       string `xml:"name,attr"`
			Properties []struct {
				Name string `xml:"name,attr"`
				Type string `xml:"type,attr"`
			} `xml:"property"`
		} `xml:"interface"`
	}
	if err := xml.Unmarshal(raw, &node); err != nil {
		t.Fatal(err)
	}
	var numbers, lists []string
	for _, iface := range node.Interfaces {
		if iface.Name != "org.antidrift.Session1" {
			continue
		}
		for _, p := range iface.Properties {
			switch p.Type {
			case "t", "x", "u":
				numbers = append(numbers, p.Name)
			case "as":
				lists = append(lists, p.Name)
			case "s", "b", "a(sst)", "a(ssss)", "(sstass)": // the buckets, their apps, the coach's proposal: by name
			default:
				t.Errorf("property %s: got type %s, want one FollowProperties.qml converts", p.Name, p.Type)
			}
		}
	}
	qml, err := os.ReadFile(filepath.Join("plasma", "org.antidrift.panel", "contents", "ui", "FollowProperties.qml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want []string
	}{{"numbers", numbers}, {"lists", lists}} {
		m := regexp.MustCompile(`property var ` + c.name + `: \[([^\]]*)\]`).FindSubmatch(qml)
		if m == nil {
			t.Fatalf("FollowProperties.qml: got no list %s, want one", c.name)
		}
		var got []string
		for _, q := range regexp.MustCompile(`"(\w+)"`).FindAllSubmatch(m[1], -1) {
			got = append(got, string(q[1]))
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("FollowProperties.qml's %s are %v, the interface's are %v", c.name, got, c.want)
		}
	}
}
