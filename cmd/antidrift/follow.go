package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
	"github.com/antidrift/antidrift/service"
)

// follow is status --follow: it prints a line in format at start and again
// whenever the line would change, until ctx ends (SIGINT or SIGTERM, which
// is a normal end: exit 0).
//
// A line can change for three reasons, and each is watched:
//   - a PropertiesChanged from the daemon. All properties are then read
//     again rather than merged from the signal: a signal queued before a
//     read would otherwise overwrite newer values with older ones.
//   - the daemon going away or coming back (NameOwnerChanged for
//     org.antidrift): gone prints an "offline" line; a new owner is read
//     afresh, so a restarted (or re-activated) daemon is picked up.
//   - time passing: the time left moves without any signal (the daemon
//     has no ticker), so while a session is active the line is rendered
//     again when its time left would read differently: once a minute,
//     and once a second in the last minute. It is printed only if it
//     differs from the last one. Outside a session nothing moves with
//     time, and follow waits for signals only.
//
// The first read may start the daemon through bus activation; later reads
// do not (FlagNoAutoStart), so watching never revives a daemon that was
// stopped on purpose.
func follow(ctx context.Context, c *client, format string, w io.Writer) error {
	sigs, err := watchDaemon(c)
	if err != nil {
		return err
	}
	st, err := readStatus(c)
	if err != nil {
		return err
	}
	c.flags = dbus.FlagNoAutoStart

	last := ""
	show := func() error {
		line := statusLine(format, st, time.Now())
		if line == last {
			return nil
		}
		last = line
		_, err := fmt.Fprintln(w, line)
		return err
	}
	if err := show(); err != nil {
		return err
	}
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		tick.Stop()
		if st != nil && st.is(service.StateActive) {
			if next := service.NextLeftChange(st.left(time.Now())); next > 0 {
				tick.Reset(next)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-sigs:
			if err := drain(sigs, ok); err != nil {
				return err
			}
			if st, err = readStatus(c); err != nil {
				return err
			}
		case <-tick.C:
		}
		if err := show(); err != nil {
			return err
		}
	}
}

// watchDaemon subscribes to what changes the status: the daemon's
// PropertiesChanged, and its name changing owner (gone, restarted). It is
// called before the first read, so no change between that read and the
// wait is missed.
func watchDaemon(c *client) (chan *dbus.Signal, error) {
	sigs := make(chan *dbus.Signal, 64)
	c.conn.Signal(sigs)
	for _, match := range [][]dbus.MatchOption{
		{dbus.WithMatchObjectPath(objectPath), dbus.WithMatchInterface(propertiesIface),
			dbus.WithMatchMember("PropertiesChanged"), dbus.WithMatchArg(0, iface)},
		busname.OwnerChangedMatch(busName),
	} {
		if err := c.conn.AddMatchSignal(match...); err != nil {
			return nil, unreachable("cannot watch the session bus (%v)", err)
		}
	}
	return sigs, nil
}

// drain takes a burst of signals (a window switch, a state change) as one:
// ok is what the receive that woke the caller said.
func drain(sigs chan *dbus.Signal, ok bool) error {
	for ok && len(sigs) > 0 {
		_, ok = <-sigs
	}
	if !ok {
		return unreachable("lost the connection to the session bus")
	}
	return nil
}

// readStatus reads every property; a daemon that is not there is a nil
// status (offline), not an error. A refusal (e.g. AccessDenied) is an error.
func readStatus(c *client) (*status, error) {
	st, err := c.properties()
	if isExit(err, exitUnreachable) {
		return nil, nil
	}
	return st, err
}
