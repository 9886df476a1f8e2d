package wayland

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// swayEventWindow is the i3-ipc event type of window events (high bit set).
const swayEventWindow = 0x80000003

// BenchmarkSwayFocusReport measures how long a focus change on real sway
// takes to reach the sensor's report, beside the floor: the same change
// reaching a client subscribed to sway's own window events (what
// `swaymsg -t subscribe -m '["window"]'` prints). Each op is one focus
// change, made over sway's IPC.
func BenchmarkSwayFocusReport(b *testing.B) {
	sw := testenv.StartSway(b)
	ipc := swayIPC{path: sw.SwaySock}
	sw.Foot(b, "Editor", "notes.txt")
	sw.Foot(b, "Browser", "news")
	apps := [2]string{"Editor", "Browser"}
	testenv.WaitFor(b, waitTimeout, "both windows to take focus", func() error {
		ctx := context.Background()
		if err := ipc.command(ctx, "[app_id=Editor] focus"); err != nil {
			return err
		}
		return ipc.command(ctx, "[app_id=Browser] focus")
	}, func(err error) bool { return err == nil })
	focus := func(i int) string {
		app := apps[i%2]
		if err := ipc.command(context.Background(), fmt.Sprintf("[app_id=%s] focus", app)); err != nil {
			b.Fatal(err)
		}
		return app
	}

	b.Run("sensor", func(b *testing.B) {
		reports := make(chan service.Window, 64)
		s := NewSensor(sw.Display, nil)
		s.runtimeDir = sw.RuntimeDir
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx, func(w service.Window) { reports <- w }) }()
		defer func() { cancel(); <-done }()
		wait := func(app string) {
			for w := range reports {
				if w.Class == app {
					return
				}
			}
		}
		wait(focus(1)) // both windows are up; start from the browser
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			wait(focus(i))
		}
	})

	b.Run("sway-subscribe", func(b *testing.B) {
		focus(1) // start from the browser
		conn, err := net.Dial("unix", sw.SwaySock)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		const subscribe = 2
		if _, err := conn.Write(swayMessage(subscribe, `["window"]`)); err != nil {
			b.Fatal(err)
		}
		if _, err := readSwayReply(conn, subscribe); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			focus(i)
			// The focus event of the change (one per change: the
			// windows alternate).
			if _, err := readSwayReply(conn, swayEventWindow); err != nil {
				b.Fatal(err)
			}
		}
	})
}
