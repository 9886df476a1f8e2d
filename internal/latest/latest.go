// Package latest hands the newest of a stream of values from whatever
// watches something to the goroutine that reports it. A watcher must never
// wait for a slow consumer (it would fall behind what it watches), and a
// consumer only cares about the present: so the handoff holds one value,
// and a new one replaces a stale one that was not taken yet.
//
// Every evidence source hands its windows to the core through one: the X11
// and Wayland sensors from their reading goroutine, the KWin and GNOME
// Shell sensors from the bus's handler goroutines (Push) and their own.
package latest

import "sync"

// Mailbox is a single-slot, newest-wins handoff. Any number of goroutines
// may post; one consumer takes from C. Posting a value equal to the one
// posted before does nothing, so consecutive identical snapshots reach the
// consumer once.
type Mailbox[T comparable] struct {
	ch chan T

	mu    sync.Mutex
	last  T
	sent  bool
	posts uint64
}

// New makes an empty mailbox.
func New[T comparable]() *Mailbox[T] {
	return &Mailbox[T]{ch: make(chan T, 1)}
}

// C is where the consumer takes values.
func (m *Mailbox[T]) C() <-chan T { return m.ch }

// Post offers v without blocking.
func (m *Mailbox[T]) Post(v T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.postLocked(v)
}

// PostUnlessNewer posts v only if nothing was posted since Posts returned
// since, and says whether it did: a poster that asked something slowly
// (what has focus now?) must not undo a report that came in the meantime.
func (m *Mailbox[T]) PostUnlessNewer(v T, since uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.posts != since {
		return false
	}
	m.postLocked(v)
	return true
}

func (m *Mailbox[T]) postLocked(v T) {
	m.posts++
	if m.sent && m.last == v {
		return
	}
	m.last, m.sent = v, true
	select {
	case m.ch <- v:
		return
	default: // the consumer is busy: replace the stale value
	}
	select {
	case <-m.ch:
	default:
	}
	m.ch <- v // cannot block: only posters fill the slot, one at a time
}

// Forget empties the slot and forgets the value posted last, so the next
// post is news whatever it is: for a consumer that dropped what it had
// (the compositor that said it is gone).
func (m *Mailbox[T]) Forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = false
	select {
	case <-m.ch:
	default:
	}
}

// Posts counts the values ever posted, repeated ones included.
func (m *Mailbox[T]) Posts() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.posts
}
