//go:build !linux

package x11

import (
	"context"
	"log/slog"
	"time"
)

// IdleWatcher tells when the user stops and resumes using the keyboard and
// mouse. On this platform it never reports.
type IdleWatcher struct {
	log *slog.Logger
}

// NewIdleWatcher prepares a watcher; display and after are ignored on this
// platform.
func NewIdleWatcher(display string, after time.Duration, logger *slog.Logger) *IdleWatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &IdleWatcher{log: logger}
}

// Run never reports on this platform; it waits for ctx.
func (w *IdleWatcher) Run(ctx context.Context, report func(idle bool)) {
	w.log.Warn("x11: idle detection is off", "reason", "X11 idle detection is only built for Linux")
	<-ctx.Done()
}
