package service

import (
	"fmt"
	"time"
)

// ShortLeft is time left as every antidrift surface shows it (status,
// panels, the systemd status line): to the minute and rounded up ("12m",
// "1h05m"), and from a minute down to the second, rounded up ("20s"), so a
// session with 20 s left never reads "1m left".
func ShortLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d <= time.Minute:
		return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second))
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// NextLeftChange is how long until ShortLeft of a countdown now at d shows
// something else: under a minute the next whole second, otherwise the next
// whole minute. 0 means it never will (the time is up).
func NextLeftChange(d time.Duration) time.Duration {
	unit := time.Minute
	switch {
	case d <= 0:
		return 0
	case d <= time.Minute:
		unit = time.Second
	case d <= 2*time.Minute:
		// "2m" turns into "60s" when a minute is left.
		return d - time.Minute
	}
	if r := d % unit; r != 0 {
		return r
	}
	return unit
}
