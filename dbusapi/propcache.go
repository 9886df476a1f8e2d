package dbusapi

import (
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/service"
)

// propertyCache is the property map Get and GetAll answer from, built once
// and kept until the core announces a change — or, while the current
// window's seconds grow, until the view says it reads differently
// (service.View.ChangesIn). A panel that reads the properties on every
// change, and a status bar that reads them every second, then cost godbus's
// encoding alone: no wait for the core's lock, no map built per call.
//
// A published map is never written again: godbus encodes it from many
// handler goroutines at once.
type propertyCache struct {
	mu      sync.Mutex
	changes uint64                  // bumped by every change the core announces
	props   map[string]dbus.Variant // nil: build again
	expires time.Duration           // on the boot clock; 0: valid until the next change
	builds  uint64                  // how many maps were built, for tests
}

// bootNow reads the clock ChangesIn is counted on, CLOCK_BOOTTIME. It runs
// on while the machine sleeps, so a map kept across a suspend has expired
// when the machine wakes, as the live seconds it carries have.
func bootNow() time.Duration { return service.SystemClock{}.Boot() }

// invalidate forgets the map. Server.Changed calls it before telling
// clients, so a client that reads after a PropertiesChanged, or after the
// reply to the method that made the change, reads the change.
func (c *propertyCache) invalidate() {
	c.mu.Lock()
	c.changes++
	c.props = nil
	c.mu.Unlock()
}

// get returns the property map, building it from view when it is stale. A
// map built while a change came in is returned but not kept.
func (c *propertyCache) get(view func() service.View) map[string]dbus.Variant {
	c.mu.Lock()
	if c.props != nil && (c.expires == 0 || bootNow() < c.expires) {
		props := c.props
		c.mu.Unlock()
		return props
	}
	changes := c.changes
	c.builds++
	c.mu.Unlock()

	read := bootNow()
	v := view()
	props := properties(v)
	c.mu.Lock()
	if c.changes == changes {
		c.props, c.expires = props, 0
		if v.ChangesIn > 0 {
			c.expires = read + v.ChangesIn
		}
	}
	c.mu.Unlock()
	return props
}
