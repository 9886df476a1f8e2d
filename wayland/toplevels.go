package wayland

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/wayland/wire"
)

// maxToplevels bounds the handles a compositor can make a client hold.
const maxToplevels = 1 << 14

// errFinished: the compositor ended the foreign-toplevel manager.
var errFinished = errors.New("the compositor stopped sending window information (zwlr_foreign_toplevel_manager_v1.finished)")

// toplevelState is what a handle says about its window, as of a done event.
type toplevelState struct {
	title, appID         string
	activated, minimized bool
}

// toplevel is one zwlr_foreign_toplevel_handle_v1. Events update pending;
// done applies pending at once, so a window is never seen half-changed.
type toplevel struct {
	pending, cur toplevelState
	// focusSeq orders activations: when several toplevels say they are
	// activated (several seats), the latest to become so is the focus.
	focusSeq uint64
}

// toplevels is the state of one foreign-toplevel manager on one connection.
// The connection's reader applies events to it; the guard reads it from
// other goroutines, so every field is under mu. Nothing blocks under mu.
type toplevels struct {
	gen     uint64 // the connection's generation: part of every handle
	manager uint32

	mu      sync.Mutex
	tops    map[uint32]*toplevel
	seq     uint64
	changed chan struct{} // closed and replaced whenever a done or closed was applied
}

func newToplevels(gen uint64, manager uint32) *toplevels {
	return &toplevels{gen: gen, manager: manager, tops: map[uint32]*toplevel{}, changed: make(chan struct{})}
}

// event applies one event addressed to the manager or to a handle; others
// (such as late events to a handle already destroyed) are ignored. It
// reports the id of a handle the compositor closed (the client destroys
// it). A malformed event is an error: the connection is not to be trusted
// after it.
func (t *toplevels) event(m wire.Message) (closed uint32, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m.Object == t.manager {
		return 0, t.managerEvent(m)
	}
	tl, ok := t.tops[m.Object]
	if !ok {
		return 0, nil
	}
	a := m.Args()
	switch m.Opcode {
	case handleTitle:
		tl.pending.title = text(a.String())
	case handleAppID:
		tl.pending.appID = text(a.String())
	case handleState:
		tl.pending.activated, tl.pending.minimized = false, false
		for _, s := range a.Uints() {
			switch s {
			case stateActivated:
				tl.pending.activated = true
			case stateMinimized:
				tl.pending.minimized = true
			}
		}
	case handleDone:
		if tl.pending.activated && !tl.cur.activated {
			t.seq++
			tl.focusSeq = t.seq
		}
		tl.cur = tl.pending
		t.notify()
	case handleClosed:
		delete(t.tops, m.Object)
		t.notify()
		closed = m.Object
	}
	// output_enter, output_leave, parent and events of later versions are
	// of no use here and read no further.
	return closed, a.Err()
}

func (t *toplevels) managerEvent(m wire.Message) error {
	switch m.Opcode {
	case managerToplevel:
		a := m.Args()
		id := a.NewID()
		if err := a.Err(); err != nil {
			return err
		}
		if _, dup := t.tops[id]; dup || id < serverIDMin {
			return fmt.Errorf("%w: a new toplevel with id %#x", wire.ErrMalformed, id)
		}
		if len(t.tops) >= maxToplevels {
			return fmt.Errorf("%w: more than %d toplevels", wire.ErrMalformed, maxToplevels)
		}
		t.tops[id] = &toplevel{}
	case managerFinished:
		return errFinished
	}
	return nil
}

// notify wakes whoever waits for a change. Called with mu held.
func (t *toplevels) notify() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// focused is the window that has focus as of the last done events.
func (t *toplevels) focused() service.Window {
	t.mu.Lock()
	defer t.mu.Unlock()
	var (
		best   uint32
		bestTL *toplevel
	)
	for id, tl := range t.tops {
		if tl.cur.activated && (bestTL == nil || tl.focusSeq > bestTL.focusSeq) {
			best, bestTL = id, tl
		}
	}
	if bestTL == nil {
		return service.NoFocus()
	}
	return service.Window{
		ID:        t.handle(best),
		Class:     bestTL.cur.appID,
		Title:     bestTL.cur.title,
		Available: true,
	}
}

// lookup is the state of handle id and a channel closed at the next change.
func (t *toplevels) lookup(id uint32) (s toplevelState, ok bool, changed <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tl, ok := t.tops[id]; ok {
		return tl.cur, true, t.changed
	}
	return toplevelState{}, false, t.changed
}

// handle is the opaque service.Window.ID of toplevel id: stable for the
// life of the connection, and never repeated by a later connection (whose
// generation differs), even though object ids are.
func (t *toplevels) handle(id uint32) string {
	return "wl:" + strconv.FormatUint(t.gen, 10) + ":" + strconv.FormatUint(uint64(id), 10)
}

// parseHandle reads back a handle made by handle. Handles of other
// evidence sources are refused, not guessed at.
func parseHandle(h string) (gen uint64, id uint32, err error) {
	rest, ok := strings.CutPrefix(h, "wl:")
	g, i, ok2 := strings.Cut(rest, ":")
	gen, err1 := strconv.ParseUint(g, 10, 64)
	id64, err2 := strconv.ParseUint(i, 10, 32)
	if !ok || !ok2 || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("wayland: %q is not a Wayland toplevel handle", h)
	}
	return gen, uint32(id64), nil
}

// text makes a compositor's string valid UTF-8 (D-Bus and the logs need it).
func text(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, string(utf8.RuneError))
}
