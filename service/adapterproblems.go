package service

// NoteProblem sets the Problems sentence that an adapter outside the core
// owns under key (msg "" clears it), and tells the listeners, so a failure
// the core never sees — the published copy in sync_dir could not be
// written — shows where every other one does, and goes when it heals.
// Keys live apart from the core's own.
func (s *Service) NoteProblem(key, msg string) {
	if msg == "" {
		s.problems.clear("adapter-" + key)
	} else {
		s.problems.set("adapter-"+key, msg)
	}
	s.mu.Lock()
	listeners := s.listeners
	s.mu.Unlock()
	for _, l := range listeners {
		l.Changed()
	}
}
