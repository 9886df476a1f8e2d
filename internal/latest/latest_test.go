package latest

import "testing"

func TestNewestWins(t *testing.T) {
	m := New[string]()
	for _, v := range []string{"a", "b", "c", "c"} {
		m.Post(v)
	}
	if got := <-m.C(); got != "c" {
		t.Errorf("mailbox held %q, want the newest, c", got)
	}
	m.Post("c") // same as the last: dropped
	select {
	case got := <-m.C():
		t.Errorf("a repeated value was posted again: %q", got)
	default:
	}
	m.Post("d")
	if got := <-m.C(); got != "d" {
		t.Errorf("mailbox held %q after a new value, want d", got)
	}
}
