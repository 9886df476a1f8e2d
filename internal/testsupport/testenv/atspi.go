package testenv

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// Accessibility is the accessibility bus of a session, as a screen reader
// sees it: at-spi2-core's bus launcher (the host's, as any desktop runs it)
// owns org.a11y.Bus on the session bus and starts the accessibility bus and
// its registry; toolkits that find it enabled (as Orca enables it) put their
// widget trees on it. Tests read those trees over D-Bus, as Orca does.
type Accessibility struct {
	Conn *dbus.Conn // on the accessibility bus
}

// atspiLauncher is where Debian's at-spi2-core puts its bus launcher.
const atspiLauncher = "/usr/libexec/at-spi-bus-launcher"

// StartAccessibility starts the accessibility bus for the session bus b and
// turns the screen reader on, so toolkits started after it expose their
// widgets. runtimeDir is the session's XDG_RUNTIME_DIR.
func StartAccessibility(t testing.TB, b *Bus, runtimeDir string) *Accessibility {
	t.Helper()
	Need(t, atspiLauncher)
	env := withEnv(os.Environ(), "DBUS_SESSION_BUS_ADDRESS="+b.Address, "XDG_RUNTIME_DIR="+runtimeDir)
	p := start(t, tempDir(t), env, nil, atspiLauncher, "--launch-immediately", "--a11y=1", "--screen-reader=1")
	b.waitForOwner(t, "at-spi-bus-launcher", "org.a11y.Bus", p)

	session := b.Dial(t)
	launcher := session.Object("org.a11y.Bus", "/org/a11y/bus")
	// What Orca sets when it starts; Qt and GTK read it.
	if err := launcher.SetProperty("org.a11y.Status.ScreenReaderEnabled", dbus.MakeVariant(true)); err != nil {
		t.Fatalf("turning the screen reader on: %v", err)
	}
	var addr string
	if err := launcher.Call("org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
		t.Fatalf("asking for the accessibility bus: %v\n%s", err, p.output())
	}
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the accessibility bus %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &Accessibility{Conn: conn}
}

// Node is one accessible object: a widget as a screen reader announces it.
type Node struct {
	Name, Role string
	States     []string // the AT-SPI states that are set, by their names
	Children   []*Node
	Ref        dbus.ObjectPath
	Dest       string
}

// Has reports whether state (an AT-SPI state name, e.g. "focusable") is set.
func (n *Node) Has(state string) bool { return slices.Contains(n.States, state) }

// Find returns every node below n, n included, for which match is true.
func (n *Node) Find(match func(*Node) bool) []*Node {
	var out []*Node
	if match(n) {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.Find(match)...)
	}
	return out
}

// String draws the tree below n, one node per line, for failure messages.
func (n *Node) String() string {
	if n == nil {
		return "(nothing)"
	}
	var b strings.Builder
	var draw func(*Node, int)
	draw = func(n *Node, depth int) {
		fmt.Fprintf(&b, "%s%s %q [%s]\n", strings.Repeat("  ", depth), n.Role, n.Name, strings.Join(n.States, " "))
		for _, c := range n.Children {
			draw(c, depth+1)
		}
	}
	draw(n, 0)
	return b.String()
}

// atspiStates names the bits of AT-SPI's state set (atspi-constants.h).
var atspiStates = []string{"invalid", "active", "armed", "busy", "checked", "collapsed", "defunct",
	"editable", "enabled", "expandable", "expanded", "focusable", "focused", "has-tooltip", "horizontal",
	"iconified", "modal", "multi-line", "multiselectable", "opaque", "pressed", "resizable", "selectable",
	"selected", "sensitive", "showing", "single-line", "stale", "transient", "vertical", "visible",
	"manages-descendants", "indeterminate", "required", "truncated", "animated", "invalid-entry",
	"supports-autocompletion", "selectable-text", "is-default", "visited", "checkable", "has-popup",
	"read-only"}

// Application returns the tree of the first application registered under
// name (its accessible name: Qt uses the program's), or nil when none is.
func (a *Accessibility) Application(t testing.TB, name string) *Node {
	t.Helper()
	root := a.Conn.Object("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
	var apps []struct {
		Dest string
		Path dbus.ObjectPath
	}
	if err := root.Call("org.a11y.atspi.Accessible.GetChildren", 0).Store(&apps); err != nil {
		t.Fatalf("listing the accessible applications: %v", err)
	}
	for _, app := range apps {
		obj := a.Conn.Object(app.Dest, app.Path)
		v, err := obj.GetProperty("org.a11y.atspi.Accessible.Name")
		if err == nil && v.Value() == name {
			n, err := a.read(app.Dest, app.Path, 0)
			if err != nil {
				return nil // gone while being read: not there
			}
			return n
		}
	}
	return nil
}

// read reads the node at dest/path and everything below it. Only what is
// showing is descended into, as a screen reader's flat review does.
func (a *Accessibility) read(dest string, path dbus.ObjectPath, depth int) (*Node, error) {
	if depth > 64 {
		return nil, fmt.Errorf("the accessible tree at %s%s is deeper than 64", dest, path)
	}
	obj := a.Conn.Object(dest, path)
	n := &Node{Ref: path, Dest: dest}
	name, err := obj.GetProperty("org.a11y.atspi.Accessible.Name")
	if err != nil {
		return nil, err
	}
	n.Name, _ = name.Value().(string)
	if err := obj.Call("org.a11y.atspi.Accessible.GetRoleName", 0).Store(&n.Role); err != nil {
		return nil, err
	}
	var bits []uint32
	if err := obj.Call("org.a11y.atspi.Accessible.GetState", 0).Store(&bits); err != nil {
		return nil, err
	}
	for i, s := range atspiStates {
		if i/32 < len(bits) && bits[i/32]&(1<<(i%32)) != 0 {
			n.States = append(n.States, s)
		}
	}
	if depth > 0 && !n.Has("showing") {
		return n, nil
	}
	var children []struct {
		Dest string
		Path dbus.ObjectPath
	}
	if err := obj.Call("org.a11y.atspi.Accessible.GetChildren", 0).Store(&children); err != nil {
		return nil, err
	}
	for _, c := range children {
		child, err := a.read(c.Dest, c.Path, depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, child)
	}
	return n, nil
}

// Press does n's first action (a button's "Press"), as a screen reader user
// does with Enter on it.
func (a *Accessibility) Press(t testing.TB, n *Node) {
	t.Helper()
	var ok bool
	if err := a.Conn.Object(n.Dest, n.Ref).Call("org.a11y.atspi.Action.DoAction", 0, int32(0)).Store(&ok); err != nil || !ok {
		t.Fatalf("pressing %s %q: %v (done: %v)", n.Role, n.Name, err, ok)
	}
}

// Type sets the text of an editable field n, as typing into it does.
func (a *Accessibility) Type(t testing.TB, n *Node, text string) {
	t.Helper()
	var ok bool
	if err := a.Conn.Object(n.Dest, n.Ref).Call("org.a11y.atspi.EditableText.SetTextContents", 0, text).Store(&ok); err != nil || !ok {
		t.Fatalf("typing into %s %q: %v (done: %v)", n.Role, n.Name, err, ok)
	}
}

// WaitForNode waits until the application's tree has a node that match
// picks and returns it with the tree it was found in.
func (a *Accessibility) WaitForNode(t testing.TB, app, what string, match func(*Node) bool) (*Node, *Node) {
	t.Helper()
	var tree, found *Node
	if !waitUntil(time.Minute, func() bool {
		if tree = a.Application(t, app); tree != nil {
			if all := tree.Find(match); len(all) > 0 {
				found = all[0]
			}
		}
		return found != nil
	}) {
		t.Fatalf("%s: not in %s's accessible tree:\n%s", what, app, tree)
	}
	return found, tree
}
