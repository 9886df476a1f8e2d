package service

// Windows by their desktop entries: where a window enters the core it is
// given its App (AppDirectory), which rules (app:DESKTOP-ID), the View
// (CurrentApp*, BucketApps) and the nudges use. The class stays what is
// accounted and stored; the app is how it is named.

// maxAppsSeen bounds the classes whose app the core remembers for
// BucketApps (a session's buckets are bounded by MaxBucketKeys anyway).
const maxAppsSeen = 1024

// BucketApp is the desktop entry of a class in Buckets.
type BucketApp struct {
	Class string
	App   App
}

// lookupApp is w's desktop entry, or none. It only reads memory.
func (s *Service) lookupApp(w Window) App {
	if s.apps == nil || !w.Available || (w.Class == "" && w.Instance == "") {
		return App{}
	}
	a, ok := s.apps.Lookup(w.Class, w.Instance, w.AppID)
	if !ok {
		return App{}
	}
	return a
}

// rememberAppLocked keeps the app a class was last seen as, so BucketApps
// names classes that no longer have focus.
func (s *Service) rememberAppLocked(w Window) {
	if w.App.ID == "" {
		return
	}
	if s.appsSeen == nil || (len(s.appsSeen) >= maxAppsSeen && s.appsSeen[w.Class] == (App{})) {
		s.appsSeen = map[string]App{}
	}
	s.appsSeen[w.Class] = w.App
}

// bucketAppsLocked lists the app of every class in buckets and of the
// current window, each class once, in the buckets' order.
func (s *Service) bucketAppsLocked(buckets []Bucket) []BucketApp {
	out := []BucketApp{}
	seen := map[string]bool{}
	add := func(class string, a App) {
		if seen[class] || a.ID == "" {
			return
		}
		seen[class] = true
		out = append(out, BucketApp{Class: class, App: a})
	}
	for _, b := range buckets {
		if b.Class == "" || seen[b.Class] {
			continue
		}
		a, ok := s.appsSeen[b.Class]
		if !ok && s.apps != nil { // a class from before a restart
			a, _ = s.apps.Lookup(b.Class, "", "")
		}
		add(b.Class, a)
	}
	if s.window.Available {
		add(s.window.Class, s.window.App)
	}
	return out
}

// AppsChanged says the desktop entries changed (an app was installed,
// removed or renamed): the window in front is named again, and decided
// again where an app: rule now reads differently. Nothing else about the
// window changed, so nothing is accounted but a changed verdict.
func (s *Service) AppsChanged() {
	s.mu.Lock()
	seen := s.tabs.seen
	s.mu.Unlock()
	app := s.lookupApp(seen) // off the lock, though it only reads memory
	s.mu.Lock()
	if s.tabs.seen != seen || seen.App == app {
		s.mu.Unlock() // the window changed meanwhile (it was named then) or its name did not
		return
	}
	s.tabs.seen.App = app
	s.window.App = app
	s.rememberAppLocked(s.tabs.seen)
	var w writes
	now := s.tickLocked(&w)
	if s.state == StateActive {
		s.redecideLocked(&w, now)
	}
	s.commit(w)
}
