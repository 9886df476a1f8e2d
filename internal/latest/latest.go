// Package latest hands the newest of a stream of values from the goroutine
// that watches something to the goroutine that reports it. A watcher must
// never wait for a slow consumer (it would fall behind what it watches), and
// a consumer only cares about the present: so the handoff holds one value,
// and a new one replaces a stale one that was not taken yet.
package latest

// Mailbox is a single-slot, newest-wins handoff with one poster. Posting a
// value equal to the previous one does nothing, so consecutive identical
// snapshots reach the consumer once.
type Mailbox[T comparable] struct {
	ch   chan T
	last T
	sent bool
}

// New makes an empty mailbox.
func New[T comparable]() *Mailbox[T] {
	return &Mailbox[T]{ch: make(chan T, 1)}
}

// C is where the consumer takes values.
func (m *Mailbox[T]) C() <-chan T { return m.ch }

// Post offers v without blocking. Only one goroutine may post.
func (m *Mailbox[T]) Post(v T) {
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
	m.ch <- v // cannot block: only the poster fills the slot
}
