package main

import (
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The tests' own client of the daemon, on top of testenv.Session: what
// they start, end, wait for and forge, in Go values. (busctl and gdbus
// stay in the tests about them: call, gdbusProp.)

// startSession starts a session through s and returns its id.
func startSession(t *testing.T, s *testenv.Session, next, success string, timebox uint64, level string, allowed ...string) string {
	t.Helper()
	if allowed == nil {
		allowed = []string{}
	}
	var id string
	s.Call(t, "Start", testenv.Args(next, success, timebox, level, allowed), &id)
	return id
}

// completeAndEnd completes the session through s and ends it, returning
// the audit hash End gave.
func completeAndEnd(t *testing.T, s *testenv.Session) string {
	t.Helper()
	s.Call(t, "Complete", nil)
	var hash string
	s.Call(t, "End", nil, &hash)
	return hash
}

// waitProp waits until d's property name reads want, and fails naming the
// last value it read.
func waitProp[T comparable](t *testing.T, d *testenv.Daemon, name string, want T) T {
	t.Helper()
	return testenv.WaitForProp(t, wait, d.Session(t), name, want)
}

// buckets is the Buckets property decoded.
func buckets(t *testing.T, d *testenv.Daemon) []bucketProp {
	t.Helper()
	return testenv.Prop[[]bucketProp](t, d.Session(t), "Buckets")
}

// hasBucket says whether list holds a bucket of class and title.
func hasBucket(list []bucketProp, class, title string) bool {
	for _, b := range list {
		if b.Class == class && b.Title == title {
			return true
		}
	}
	return false
}

// forgeFocus sends a focus report from a connection of its own to bus, as
// any program but the compositor could, and returns the daemon's answer.
func forgeFocus(t *testing.T, bus *testenv.Bus, handle, appID, title string) error {
	t.Helper()
	return bus.Dial(t).Object("org.antidrift", "/org/antidrift/Session1").Call("org.antidrift.Evidence1.ReportFocus", 0, handle, appID, title).Err
}

// checkRefusedAccess fails unless err is org.freedesktop.DBus.Error.AccessDenied.
func checkRefusedAccess(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got success, want org.freedesktop.DBus.Error.AccessDenied", what)
	}
	if name, msg := testenv.Refused(t, err); name != "org.freedesktop.DBus.Error.AccessDenied" {
		t.Fatalf("%s: got %s %q, want org.freedesktop.DBus.Error.AccessDenied", what, name, msg)
	}
}
