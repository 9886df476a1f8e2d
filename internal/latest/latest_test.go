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
		t.Errorf("a repeated value: got %q posted again, want it dropped", got)
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
		t.Errorf("the mailbox after its newest value was taken: got %d, want it empty", v)
	default:
	}
}

// A slow answer does not undo a post that came while it was asked for.
func TestPostUnlessNewer(t *testing.T) {
	m := New[string]()
	since := m.Posts()
	if !m.PostUnlessNewer("asked", since) {
		t.Fatal("PostUnlessNewer with nothing posted in between: got the answer dropped, want it posted")
	}
	if got := <-m.C(); got != "asked" {
		t.Fatalf("took: got %q, want \"asked\"", got)
	}
	since = m.Posts()
	m.Post("pushed")
	if m.PostUnlessNewer("asked again", since) {
		t.Fatal("PostUnlessNewer of a slow answer: got it posted over a newer one, want it dropped")
	}
	if got := <-m.C(); got != "pushed" {
		t.Fatalf("took %q, want the newer post", got)
	}
}

// After Forget the slot is empty and any value is news, even the last one.
func TestForget(t *testing.T) {
	m := New[string]()
	m.Post("a")
	m.Forget()
	select {
	case v := <-m.C():
		t.Fatalf("after Forget: got %q, want nothing", v)
	default:
	}
	m.Post("a")
	select {
	case v := <-m.C():
		if v != "a" {
			t.Fatalf("took: got %q, want \"a\"", v)
		}
	default:
		t.Fatal("the value posted before Forget, posted again after it: got no news, want it news")
	}
}
