package testenv

import (
	"fmt"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// WaitForWindow waits until the newest window an evidence source reported
// (as last returns it) satisfies ok, and returns it. A failure shows that
// window field by field, so it says what the source saw:
//
//	timed out after 30s waiting for the sensor to report org.example.Editor "main.go";
//	last saw {ID:7 Class:org.example.Browser Instance: Title:news Site: Available:true Reason:}
func WaitForWindow(t testing.TB, timeout time.Duration, what string, last func() service.Window, ok func(service.Window) bool) service.Window {
	t.Helper()
	w := WaitFor(t, timeout, what,
		func() shownWindow { return shownWindow(last()) },
		func(w shownWindow) bool { return ok(service.Window(w)) })
	return service.Window(w)
}

// shownWindow is a service.Window that prints its fields' names.
type shownWindow service.Window

func (w shownWindow) String() string { return fmt.Sprintf("%+v", service.Window(w)) }
