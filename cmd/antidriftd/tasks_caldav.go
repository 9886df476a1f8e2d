package main

import (
	"github.com/antidrift/antidrift/config"
	"github.com/antidrift/antidrift/service"
	"github.com/antidrift/antidrift/tasks/caldav"
)

// The CalDAV task source of [tasks.caldav] (tasks/caldav): Go's default
// HTTP client, so TLS is verified against the system's roots.
func init() {
	newCalDAV = func(c config.CalDAV) (service.TaskSource, error) {
		return caldav.New(caldav.Options{URL: c.URL, Username: c.Username, PasswordFile: c.PasswordFile})
	}
}
