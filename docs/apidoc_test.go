// Package docs_test keeps the documentation true to the tree: the API page
// to the interface XML, every link to a file and heading that exists.
package docs_test

import (
	"encoding/xml"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/dist"
)

// introspection is the part of the interface XML the API page documents.
type introspection struct {
	Interfaces []struct {
		Name    string `xml:"name,attr"`
		Methods []struct {
			Name string `xml:"name,attr"`
			Args []struct {
				Name      string `xml:"name,attr"`
				Type      string `xml:"type,attr"`
				Direction string `xml:"direction,attr"`
			} `xml:"arg"`
		} `xml:"method"`
		Signals []struct {
			Name string `xml:"name,attr"`
			Args []struct {
				Name string `xml:"name,attr"`
				Type string `xml:"type,attr"`
			} `xml:"arg"`
		} `xml:"signal"`
		Properties []struct {
			Name string `xml:"name,attr"`
			Type string `xml:"type,attr"`
		} `xml:"property"`
	} `xml:"interface"`
}

// docs/dbus-api.md is written by hand for people; this keeps it the API the
// daemon serves. Every method of org.antidrift.Session1 has a row with its
// in and out arguments as `type` name, every property is named with its
// type, every signal and Evidence1's and ErrorData1's methods with their
// signatures; and the
// page's method table names no method the interface lacks.
func TestAPIPageMatchesTheInterfaceXML(t *testing.T) {
	data, err := os.ReadFile("dbus-api.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	var in introspection
	if err := xml.Unmarshal([]byte(dist.InterfaceXML), &in); err != nil {
		t.Fatal(err)
	}
	// The method table: from its header to the first line that is not a row.
	start := strings.Index(page, "| method | in | out | effect |")
	if start < 0 {
		t.Fatal("the page has no method table (| method | in | out | effect |)")
	}
	table, _, _ := strings.Cut(page[start:], "\n\n")
	rows := map[string]string{} // method → its table row
	for _, m := range regexp.MustCompile("(?m)^\\| (\\w+) \\|(.*)$").FindAllStringSubmatch(table, -1) {
		if m[1] != "method" {
			rows[m[1]] = m[2]
		}
	}
	methods := 0
	for _, iface := range in.Interfaces {
		for _, m := range iface.Methods {
			methods++
			var ins, outs []string
			for _, a := range m.Args {
				arg := fmt.Sprintf("`%s` %s", a.Type, a.Name)
				if a.Direction == "out" {
					outs = append(outs, arg)
				} else {
					ins = append(ins, arg)
				}
			}
			if iface.Name == "org.antidrift.Evidence1" || iface.Name == "org.antidrift.ErrorData1" {
				sig := m.Name + "(" + strings.ReplaceAll(strings.ReplaceAll(strings.Join(ins, ", "), "`", ""), "  ", " ") + ")"
				if !strings.Contains(page, sig) {
					t.Errorf("the page: got no %s.%s, want it", iface.Name, sig)
				}
				continue
			}
			row, ok := rows[m.Name]
			if !ok {
				t.Errorf("the method table: got no row for %s, want one", m.Name)
				continue
			}
			cells := strings.Split(row, " | ")
			if len(cells) < 3 {
				t.Errorf("the row of %s: got %d cells %q, want at least 3", m.Name, len(cells), row)
				continue
			}
			for i, want := range [][]string{ins, outs} {
				got := strings.TrimSpace(cells[i])
				if len(want) == 0 && got != "—" || len(want) > 0 && !strings.HasPrefix(got, strings.Join(want, ", ")) {
					t.Errorf("%s's %s arguments: the page says %q, the XML %q", m.Name, []string{"in", "out"}[i], got, strings.Join(want, ", "))
				}
			}
			delete(rows, m.Name)
		}
		for _, p := range iface.Properties {
			// Named as `Name type`; the page may wrap the line between them.
			if !regexp.MustCompile("`" + p.Name + `\s+` + regexp.QuoteMeta(p.Type) + "`").MatchString(page) {
				t.Errorf("the page: got no property `%s %s`, want it named", p.Name, p.Type)
			}
		}
		for _, s := range iface.Signals {
			var args []string
			for _, a := range s.Args {
				args = append(args, a.Type+" "+a.Name)
			}
			if sig := s.Name + "(" + strings.Join(args, ", ") + ")"; !strings.Contains(page, "`"+sig+"`") {
				t.Errorf("the page: got no signal `%s`, want it given", sig)
			}
		}
	}
	for name := range rows {
		t.Errorf("the method table: got a row for %s, want none (the interface does not have it)", name)
	}
	if methods < 14 {
		t.Fatalf("methods in the interface XML: got %d, want at least 14", methods)
	}
}
