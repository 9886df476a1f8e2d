// Command antidrift-native-host is the native messaging host of antidrift's
// browser extension (docs/browsers.md). The browser starts it when the
// extension connects and talks to it over stdin and stdout
// (internal/nativemsg); it passes each tab report on to antidriftd over the
// session bus (org.antidrift.Evidence1.ReportTab), relays the daemon's
// BlockTab and RestoreTabs signals back to the extension, and the
// extension's confirmation of a block to the daemon (TabBlocked).
//
// It outlives the daemon: a report the daemon missed (it was restarting,
// or not running) is sent again as soon as org.antidrift has an owner.
// It never starts the daemon (no bus activation): a browser opened outside
// a session of antidrift costs nothing.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
)

const (
	busName     = "org.antidrift"
	objectPath  = dbus.ObjectPath("/org/antidrift/Session1")
	evidenceAPI = "org.antidrift.Evidence1"
	callTimeout = 5 * time.Second
)

func main() {
	browser := browserOf(os.Args[1:])
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		fmt.Fprintf(os.Stderr, "antidrift-native-host: cannot connect to the session bus: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()
	d := &busDaemon{conn: conn, log: os.Stderr}
	h := &host{browser: browser, d: d, log: os.Stderr, out: os.Stdout}
	if err := d.watch(h); err != nil {
		fmt.Fprintf(os.Stderr, "antidrift-native-host: cannot watch the bus: %v\n", err)
	}
	if err := h.run(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "antidrift-native-host: %v\n", err)
		os.Exit(1)
	}
}

// busDaemon is antidriftd on the session bus. It keeps the last report, so
// that a daemon that (re)appears hears it at once.
type busDaemon struct {
	conn *dbus.Conn
	log  io.Writer

	mu      sync.Mutex
	browser string
	last    *report
}

func (d *busDaemon) call(method string, args ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return d.conn.Object(busName, objectPath).CallWithContext(ctx, evidenceAPI+"."+method, dbus.FlagNoAutoStart, args...).Err
}

func (d *busDaemon) ReportTab(browser string, r report) error {
	d.mu.Lock()
	d.browser, d.last = browser, &r
	d.mu.Unlock()
	if err := d.call("ReportTab", browser, r.TabID, r.Scheme, r.Host, r.Path, r.Title, r.Private); err != nil {
		return fmt.Errorf("antidrift did not take the tab report (it is sent again when antidrift starts): %v", err)
	}
	return nil
}

// TabBlocked relays the extension's word that it replaced the tab a
// BlockTab named; without it in time the daemon minimizes the window.
func (d *busDaemon) TabBlocked(browser string, tabID int64) error {
	if err := d.call("TabBlocked", browser, tabID); err != nil {
		return fmt.Errorf("antidrift did not take the block's confirmation: %v", err)
	}
	return nil
}

func (d *busDaemon) ForgetTabs(browser string) error {
	d.mu.Lock()
	d.last = nil
	d.mu.Unlock()
	return d.call("ForgetTabs", browser)
}

// resend sends the last report again: the daemon is new.
func (d *busDaemon) resend() {
	d.mu.Lock()
	browser, last := d.browser, d.last
	d.mu.Unlock()
	if last == nil {
		return
	}
	if err := d.call("ReportTab", browser, last.TabID, last.Scheme, last.Host, last.Path, last.Title, last.Private); err != nil {
		fmt.Fprintf(d.log, "antidrift-native-host: the restarted antidrift did not take the tab report: %v\n", err)
	}
}

// watch follows org.antidrift's owner (to resend on a restart) and the
// daemon's signals for the extension (to relay them, from the owner
// only). It learns the owner as every watcher does (internal/busname):
// NameOwnerChanged only as the bus itself sends it, never a peer's
// forgery, and older news never undoes newer.
func (d *busDaemon) watch(h *host) error {
	ctx := context.Background()
	f := busname.New(d.conn, slog.New(slog.NewTextHandler(d.log, nil)))
	if err := f.Subscribe(ctx, dbus.WithMatchInterface(evidenceAPI), dbus.WithMatchObjectPath(objectPath)); err != nil {
		return err
	}
	daemon, err := f.Follow(ctx, busName)
	if err != nil {
		return err
	}
	go func() {
		for sig := range f.Signals {
			if changed, news := f.OwnerChange(sig); news {
				if changed != nil && changed.Unique != "" {
					d.resend() // a new daemon: it hears the last report at once
				}
				continue
			}
			d.relay(h, sig, daemon.Unique)
		}
	}()
	return nil
}

// relay passes sig on to the extension when owner, the daemon, sent it.
func (d *busDaemon) relay(h *host, sig *dbus.Signal, owner string) {
	if msg, ok := relayed(h.browser, sig, owner); ok {
		if err := h.send(msg); err != nil {
			fmt.Fprintf(d.log, "antidrift-native-host: relaying to the extension: %v\n", err)
		}
	}
}
