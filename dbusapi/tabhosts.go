package dbusapi

import (
	"context"
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/service"
)

// HostIdentifier says whether the process pid is antidrift's native host
// started by a browser: the browser's family and process, or an error that
// says in a person's words why not (internal/nativehost's Checker.Identify,
// in the daemon).
type HostIdentifier func(pid int) (browser string, browserPID int, err error)

// Bounds on what tabHosts keeps per connection. Unique names are never
// reused on a bus, so neither a host nor a refusal can go stale.
const (
	maxTabHosts     = 64   // hosts believed at once (each is a browser profile running)
	maxTabRefusals  = 1024 // refusals remembered; forgotten all at once when full
	tabReportSource = "antidrift believes a tab report only from antidrift-native-host started by a browser (docs/evidence.md)"
)

// tabHosts decides whose ReportTab and ForgetTabs calls are believed, and
// for which browser: a connection whose process the HostIdentifier says is
// a native host a browser started. What a host claims is its own
// connection's (service.TabSource.Conn), and ends when that connection
// leaves the bus, as the bus says (busname.Leaving).
type tabHosts struct {
	conn *dbus.Conn
	svc  *service.Service

	mu       sync.Mutex
	identify HostIdentifier
	leaving  *busname.Leaving
	known    map[string]*tabHost // believed hosts by unique name
	refused  map[string]string   // unique name → why it is not believed
}

// tabHost is one believed host's connection. Its lock orders its reports
// with its leaving: no claim is recorded for a connection after the core
// was told it left.
type tabHost struct {
	mu    sync.Mutex
	src   service.TabSource
	gone  bool
	order reportOrder // of its calls, by message serial
}

// TrustTabHosts makes ReportTab and ForgetTabs believed from connections
// identify says are native hosts started by a browser (each for its own
// browser, its claims ending when it leaves the bus). Before it is called
// every such call is refused.
func (s *Server) TrustTabHosts(identify HostIdentifier) {
	s.tabHosts.mu.Lock()
	defer s.tabHosts.mu.Unlock()
	s.tabHosts.identify = identify
	if s.tabHosts.leaving == nil {
		s.tabHosts.leaving = busname.NewLeaving(s.conn, s.log, s.tabHosts.left)
	}
}

func tabRefusal(format string, args ...any) *dbus.Error {
	return accessDenied("%s", fmt.Sprintf(format, args...))
}

// source is the believed host calling as sender, reporting for browser,
// or the refusal.
func (t *tabHosts) source(sender, browser string) (*tabHost, *dbus.Error) {
	t.mu.Lock()
	h, why, identify := t.known[sender], t.refused[sender], t.identify
	t.mu.Unlock()
	switch {
	case h != nil:
		if h.src.Browser != browser {
			return nil, tabRefusal("this native host was started by a %s browser; it cannot report %s's tabs", h.src.Browser, browser)
		}
		return h, nil
	case why != "":
		return nil, tabRefusal("%s", why)
	case identify == nil:
		return nil, tabRefusal("this antidriftd takes no tab reports")
	case sender == "":
		return nil, tabRefusal("%s, and this call names no sender", tabReportSource)
	}
	ctx, cancel := context.WithTimeout(context.Background(), busname.CallTimeout)
	defer cancel()
	var pid uint32
	if err := t.conn.BusObject().CallWithContext(ctx, busname.Bus+".GetConnectionUnixProcessID", 0, sender).Store(&pid); err != nil {
		return nil, tabRefusal("%s, and the bus could not say which process %s is (%v)", tabReportSource, sender, err)
	}
	family, browserPID, err := identify(int(pid))
	if err != nil {
		why := fmt.Sprintf("%s; %s is not one: %v", tabReportSource, sender, err)
		t.mu.Lock()
		if t.refused == nil || len(t.refused) >= maxTabRefusals {
			t.refused = map[string]string{}
		}
		t.refused[sender] = why
		t.mu.Unlock()
		return nil, tabRefusal("%s", why)
	}
	if family != browser {
		return nil, tabRefusal("this native host was started by a %s browser; it cannot report %s's tabs", family, browser)
	}
	t.mu.Lock()
	if have := t.known[sender]; have != nil {
		t.mu.Unlock()
		return have, nil
	}
	if len(t.known) >= maxTabHosts {
		t.mu.Unlock()
		return nil, tabRefusal("antidrift already follows %d browsers' native hosts; close a browser first", maxTabHosts)
	}
	if t.known == nil {
		t.known = map[string]*tabHost{}
	}
	h = &tabHost{src: service.TabSource{Conn: sender, Browser: family, BrowserPID: browserPID}}
	t.known[sender] = h
	leaving := t.leaving
	t.mu.Unlock()
	if alive, err := leaving.Watch(ctx, sender); !alive {
		t.left(sender)
		return nil, tabRefusal("antidrift could not follow %s on the bus, so it does not take its tabs (%v)", sender, err)
	}
	return h, nil
}

// record runs fn, which changes the core's tabs for h, unless h has left.
func (h *tabHost) record(fn func() error) *dbus.Error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gone {
		return dbus.NewError(errAccessDenied, []any{"this native host's connection has left the bus"})
	}
	return dbusError(fn())
}

// recordInOrder is record for a call numbered serial on h's connection,
// which is dropped when a call h sent after it was taken already: godbus
// handles calls concurrently, and the host's resend after a daemon
// restart can cross its next report, or its ForgetTabs.
func (h *tabHost) recordInOrder(serial uint32, fn func() error) *dbus.Error {
	return h.record(func() error {
		if !h.order.newer(serial) {
			return nil // overtaken by a newer call of the same host
		}
		return fn()
	})
}

// left ends the claims of a host that left the bus.
func (t *tabHosts) left(unique string) {
	t.mu.Lock()
	h := t.known[unique]
	delete(t.known, unique)
	t.mu.Unlock()
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone = true
	_ = t.svc.ForgetTabs(unique) // it never fails
}
