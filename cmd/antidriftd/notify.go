package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"

	"github.com/antidrift/antidrift/service"
)

// systemdNotifier speaks sd_notify: READY=1 once the name is owned, a
// one-line STATUS= on every change (shown by systemctl --user status),
// STOPPING=1 on shutdown, and watchdog pings when systemd asks for them.
// Without NOTIFY_SOCKET every call is a cheap no-op.
type systemdNotifier struct {
	svc *service.Service
	log *slog.Logger

	mu     sync.Mutex
	status string // last STATUS= sent
}

func newSystemdNotifier(svc *service.Service, log *slog.Logger) *systemdNotifier {
	return &systemdNotifier{svc: svc, log: log}
}

func (n *systemdNotifier) send(state string) {
	if _, err := daemon.SdNotify(false, state); err != nil {
		n.log.Warn("sd_notify failed", "err", err)
	}
}

// ready sends READY=1 with the first status and starts the watchdog
// pinger when WATCHDOG_USEC asks for one.
func (n *systemdNotifier) ready(ctx context.Context, workers *sync.WaitGroup) {
	n.mu.Lock()
	n.status = statusLine(n.svc.View(), time.Now())
	n.send("READY=1\nSTATUS=" + n.status)
	n.mu.Unlock()
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval == 0 {
		return
	}
	workers.Add(1)
	go func() {
		defer workers.Done()
		t := time.NewTicker(interval / 2)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// Reading the view takes the core's lock, so a wedged
				// core stops the pings and systemd restarts us.
				n.svc.View()
				n.send("WATCHDOG=1")
			}
		}
	}()
}

func (n *systemdNotifier) stopping() { n.send("STOPPING=1") }

// Changed sends STATUS= when the one-line summary differs.
func (n *systemdNotifier) Changed() {
	line := statusLine(n.svc.View(), time.Now())
	n.mu.Lock()
	defer n.mu.Unlock()
	if line != n.status {
		n.status = line
		n.send("STATUS=" + line)
	}
}

func (n *systemdNotifier) SessionEnded(string, service.Outcome, string) {}
func (n *systemdNotifier) Nudged(string, string)                        {}

// statusLine is the one-line summary systemctl shows, e.g. "active: 12m left".
func statusLine(v service.View, now time.Time) string {
	switch v.State {
	case service.StateActive:
		line := fmt.Sprintf("active: %s left", service.ShortLeft(time.Unix(v.Deadline, 0).Sub(now)))
		switch v.Drift {
		case service.DriftDrifting:
			line += ", drifting"
		case service.DriftBreak:
			line += ", on a break"
		}
		return line
	case service.StateReview:
		return fmt.Sprintf("review: %s, waiting for End", v.Outcome)
	}
	line := string(v.State)
	if v.AuditPending > 0 {
		line += fmt.Sprintf(" (%d summaries pending)", v.AuditPending)
	}
	return line
}
