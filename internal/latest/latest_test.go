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

// Many posters, one consumer: the consumer ends up with the value posted
// last, and Posts counts every post.
func TestManyPosters(t *testing.T) {
	m := New[int]()
	const posters, each = 8, 1000
	done := make(chan struct{})
	for p := range posters {
		go func() {
			for i := range each {
				m.Post(p*each + i)
			}
			done <- struct{}{}
		}()
	}
	for range posters {
		<-done
	}
	m.Post(-1)
	var got int
	for got != -1 {
		got = <-m.C()
	}
	if n := m.Posts(); n != posters*each+1 {
		t.Errorf("Posts() = %d, want %d", n, posters*each+1)
	}
	select {
	case v := <-m.C():
		t.Errorf("the mailbox held %d after its newest value was taken", v)
	default:
	}
}
