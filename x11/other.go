//go:build !linux

package x11

import (
	"context"
	"log/slog"

	"github.com/antidrift/antidrift/service"
)

const reasonNotLinux = "X11 focus tracking is only built for Linux"

// Sensor is the focus sensor. On this platform it only reports that focus
// tracking is unavailable.
type Sensor struct {
	log *slog.Logger
}

// NewSensor prepares a sensor; display is ignored on this platform.
func NewSensor(display string, logger *slog.Logger) *Sensor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Sensor{log: logger}
}

// Run reports unavailable once and waits for ctx.
func (s *Sensor) Run(ctx context.Context, report func(service.Window)) {
	s.log.Warn("x11: focus tracking is off", "reason", reasonNotLinux)
	report(service.Window{Reason: reasonNotLinux})
	<-ctx.Done()
}

// Guard does nothing on this platform.
type Guard struct{}

var _ service.Guard = (*Guard)(nil)

// NewGuard returns a guard that does nothing.
func NewGuard(display string, logger *slog.Logger) *Guard { return &Guard{} }

// MinimizeWindow does nothing.
func (*Guard) MinimizeWindow(ctx context.Context, id string) error { return nil }

// ActivateWindow does nothing.
func (*Guard) ActivateWindow(ctx context.Context, id string) error { return nil }

// Available is always false here.
func (*Guard) Available() bool { return false }

// Close does nothing.
func (*Guard) Close() error { return nil }
