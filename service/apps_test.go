package service

import (
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeApps is a desktop with a few entries, found by class (as
// StartupWMClass or a desktop id would) — the real matching is apps'.
type fakeApps map[string]App

func (f fakeApps) Lookup(class, instance, appID string) (App, bool) {
	a, ok := f[class]
	return a, ok
}

var desktop = fakeApps{
	"firefox-esr":         {ID: "firefox-esr", Name: "Firefox ESR", Icon: "firefox-esr"},
	"org.mozilla.firefox": {ID: "org.mozilla.firefox", Name: "Firefox", Icon: "org.mozilla.firefox"},
	"Emacs":               {ID: "emacs", Name: "GNU Emacs", Icon: "emacs"},
}

func TestAppRulesMatchTheDesktopID(t *testing.T) {
	esr, flat, emacs := winID("1", "firefox-esr"), winID("2", "org.mozilla.firefox"), winID("3", "Emacs")
	plain := winID("4", "firefox") // a class that looks like the app, with no desktop entry
	bareApp := Window{ID: "5", Class: "app", Title: "firefox-esr", Available: true}
	for _, c := range []struct {
		rule string
		yes  []Window
		no   []Window
	}{
		{"app:firefox-esr", []Window{esr}, []Window{flat, emacs, plain, bareApp}},
		{"APP:Org.Mozilla.Firefox.desktop", []Window{flat}, []Window{esr, plain}},
		{"app:*firefox*", []Window{esr, flat}, []Window{emacs, plain, bareApp}},
		{"app:emacs", []Window{emacs}, []Window{esr}},
		{"[a]pp:firefox-esr", []Window{bareApp}, []Window{esr}}, // the class "app" narrowed to titles
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", c.rule, err)
		}
		for _, w := range append(append([]Window{}, c.yes...), c.no...) {
			w.App, _ = desktop.Lookup(w.Class, w.Instance, "")
			want := false
			for _, y := range c.yes {
				want = want || y.ID == w.ID
			}
			if got := matches(r, w, FoldTitle(w.Title)); got != want {
				t.Errorf("%q on class %q (app %q): got %v, want %v", c.rule, w.Class, w.App.ID, got, want)
			}
		}
	}
	for _, bad := range []string{"app:", "app: ", "app:.desktop", "app:[x"} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q): got no error, want one", bad)
		}
	}
	if !strings.Contains(RuleSyntax, "app:DESKTOP-ID for") {
		t.Errorf("RuleSyntax does not say how to write an app: rule: %q", RuleSyntax)
	}
}

func TestWindowsAreNamedByTheirApp(t *testing.T) {
	h, _, n := newDriftHarness(t, driftOpts{apps: desktop, distractions: []string{"app:org.mozilla.firefox"}})
	esr, flat, editor := winID("1", "firefox-esr"), winID("2", "org.mozilla.firefox"), winID("3", "Editor")
	h.RecordWindow(esr)
	h.start(t, LevelWarn, "app:firefox-esr")
	v := h.View()
	if v.Drift != DriftOnTask || v.DriftReason != "Firefox ESR is allowed in this session" {
		t.Fatalf("an app: rule in allowed_classes: got %s (%q), want %s (%q)", v.Drift, v.DriftReason, DriftOnTask, "Firefox ESR is allowed in this session")
	}
	if want := (App{ID: "firefox-esr", Name: "Firefox ESR", Icon: "firefox-esr"}); v.CurrentApp != want || v.CurrentClass != "firefox-esr" {
		t.Fatalf("CurrentApp: got %+v (class %q), want %+v (class firefox-esr)", v.CurrentApp, v.CurrentClass, want)
	}
	h.clock.Advance(time.Minute)
	h.RecordWindow(flat)
	h.settle()
	v = h.View()
	if v.Drift != DriftDrifting || v.DriftReason != "matches distraction app:org.mozilla.firefox" {
		t.Fatalf("an app: distraction: got %s (%q)", v.Drift, v.DriftReason)
	}
	if shown, _ := n.history(); len(shown) != 1 || shown[0].Summary != "Drifting: Firefox" || shown[0].Actions[1].Label != "Allow Firefox" || shown[0].Image != "org.mozilla.firefox" ||
		!strings.Contains(shown[0].NoActionsHint, "antidrift allow org.mozilla.firefox") {
		t.Fatalf("the nudge: got %+v, want %q with %q and the icon org.mozilla.firefox, its hint allowing the class", shown, "Drifting: Firefox", "Allow Firefox")
	}
	h.clock.Advance(time.Minute)
	h.RecordWindow(editor)
	h.settle()
	v = h.View()
	if v.CurrentApp != (App{}) || !strings.Contains(v.DriftReason, "Editor is not in this session's allowlist") {
		t.Fatalf("a window with no entry: got app %+v, reason %q; want none and its class named", v.CurrentApp, v.DriftReason)
	}
	got := map[string]string{}
	for _, b := range v.BucketApps {
		got[b.Class] = b.App.Name
	}
	if want := map[string]string{"firefox-esr": "Firefox ESR", "org.mozilla.firefox": "Firefox"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("BucketApps: got %v, want %v (buckets %+v)", got, want, v.Buckets)
	}
	// Allow takes an app: rule; a forged class spelling the rule matches nothing
	must(t, h.Allow("app:emacs"))
	h.RecordWindow(Window{ID: "9", Class: "app:emacs", Instance: "app:emacs", Title: "x", Available: true})
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting {
		t.Fatalf("a class spelling app:emacs: got %s (%q), want drifting", v.Drift, v.DriftReason)
	}
	h.RecordWindow(winID("10", "Emacs"))
	if v := h.View(); v.Drift != DriftOnTask || v.CurrentApp.Name != "GNU Emacs" {
		t.Fatalf("after Allow app:emacs: got %s (%q), app %+v", v.Drift, v.DriftReason, v.CurrentApp)
	}
}

// mutableApps is a desktop whose entries a test changes.
type mutableApps struct {
	mu sync.Mutex
	m  map[string]App
}

func (f *mutableApps) Lookup(class, instance, appID string) (App, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.m[class]
	return a, ok
}

// An app installed while its window is in front: the window is named, and
// decided again by the app: rule that now covers it.
func TestAppsChangedNamesTheWindowInFront(t *testing.T) {
	d := &mutableApps{m: map[string]App{}}
	h, _, _ := newDriftHarness(t, driftOpts{apps: d})
	h.RecordWindow(winID("0", "Viewer")) // no session yet: named all the same
	d.mu.Lock()
	d.m["Viewer"] = App{ID: "viewer", Name: "Viewer App"}
	d.mu.Unlock()
	h.AppsChanged()
	if v := h.View(); v.CurrentApp.Name != "Viewer App" || v.State != StateLocked {
		t.Fatalf("AppsChanged with no session: got app %+v in %s, want Viewer App in locked", v.CurrentApp, v.State)
	}
	h.RecordWindow(winID("1", "Editor"))
	h.start(t, LevelWarn, "app:myeditor")
	h.settle()
	if v := h.View(); v.Drift != DriftDrifting || v.CurrentApp != (App{}) {
		t.Fatalf("before the entry: got %s, app %+v; want drifting, no app", v.Drift, v.CurrentApp)
	}
	events := len(h.store.events[h.View().SessionID])
	h.AppsChanged() // nothing changed: nothing happens
	d.mu.Lock()
	d.m["Editor"] = App{ID: "myeditor", Name: "My Editor"}
	d.mu.Unlock()
	h.AppsChanged()
	v := h.View()
	if v.Drift != DriftOnTask || v.CurrentApp.Name != "My Editor" || v.DriftReason != "My Editor is allowed in this session" {
		t.Fatalf("after the entry appeared: got %s (%q), app %+v; want on task, My Editor", v.Drift, v.DriftReason, v.CurrentApp)
	}
	if got := h.store.events[v.SessionID][events:]; len(got) != 1 || got[0].Mark != MarkVerdict {
		t.Fatalf("the raw log after AppsChanged: got %+v, want only the new verdict", got)
	}
}

// An app: rule, however written, never matches a window that has no
// desktop entry, whatever its class and title spell.
func FuzzAppRule(f *testing.F) {
	for _, s := range []string{"app:firefox-esr", "APP:*", "app:*.desktop", "app:[a-", `app:\`, "app:org.mozilla.firefox.desktop"} {
		f.Add(s, "app:*", "x")
	}
	f.Fuzz(func(t *testing.T, text, class, title string) {
		r, err := ParseRule(text)
		if err != nil || !r.App() {
			return
		}
		w := Window{ID: "1", Class: class, Instance: class, Title: title, Available: true}
		if matches(r, w, FoldTitle(title)) {
			t.Fatalf("%q matched class %q title %q with no desktop entry", text, class, title)
		}
		w.App = App{ID: "x"}
		matches(r, w, FoldTitle(title)) // and never panics with one
	})
}

// gatedApps is mutableApps whose Lookup of one class reads the desktop,
// then waits for the test before it answers: a reading that raced a
// change of the desktop entries.
type gatedApps struct {
	mutableApps
	class   string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gatedApps) Lookup(class, instance, appID string) (App, bool) {
	a, ok := g.mutableApps.Lookup(class, instance, appID)
	if class == g.class {
		g.once.Do(func() {
			close(g.entered)
			<-g.release
		})
	}
	return a, ok
}

// A window that comes to the front while the desktop entries change: its
// lookup read the old entries, and the change's AppsChanged found another
// window in front. The window must still end up named by the new entries,
// not by the old reading until the next switch.
func TestAppsChangedDuringRecordWindow(t *testing.T) {
	d := &gatedApps{mutableApps: mutableApps{m: map[string]App{}}, class: "Editor",
		entered: make(chan struct{}), release: make(chan struct{})}
	h, _, _ := newDriftHarness(t, driftOpts{apps: d})
	h.RecordWindow(winID("0", "Viewer"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.RecordWindow(winID("1", "Editor")) // reads the entries: none for Editor
	}()
	<-d.entered
	d.mu.Lock()
	d.m["Editor"] = App{ID: "myeditor", Name: "My Editor"} // installed meanwhile
	d.mu.Unlock()
	h.AppsChanged() // Viewer is still in front: nothing to rename
	close(d.release)
	<-done
	if v := h.View(); v.CurrentClass != "Editor" || v.CurrentApp.Name != "My Editor" {
		t.Fatalf("a window recorded while its entry was installed: got class %q, app %+v; want Editor named My Editor", v.CurrentClass, v.CurrentApp)
	}
}

// An app renamed or removed while a session runs: BucketApps names the
// classes that are no longer in front by the entries as they are now, not
// as they were when the window was last seen.
func TestAppsChangedRenamesTheBuckets(t *testing.T) {
	d := &mutableApps{m: map[string]App{"Viewer": {ID: "viewer", Name: "Viewer"}, "Tool": {ID: "tool", Name: "Tool"}}}
	h, _, _ := newDriftHarness(t, driftOpts{apps: d})
	h.RecordWindow(winID("1", "Viewer"))
	h.start(t, LevelWarn, "Viewer", "Tool", "Editor")
	h.clock.Advance(time.Minute)
	h.RecordWindow(winID("2", "Tool"))
	h.clock.Advance(time.Minute)
	h.RecordWindow(winID("3", "Editor")) // in front, no entry, before and after
	h.clock.Advance(time.Minute)
	d.mu.Lock()
	d.m["Viewer"] = App{ID: "viewer", Name: "Viewer Pro"} // renamed
	delete(d.m, "Tool")                                   // removed
	d.mu.Unlock()
	h.AppsChanged()
	got := map[string]string{}
	for _, b := range h.View().BucketApps {
		got[b.Class] = b.App.Name
	}
	if want := map[string]string{"Viewer": "Viewer Pro"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("BucketApps after a rename and a removal: got %v, want %v", got, want)
	}
}
