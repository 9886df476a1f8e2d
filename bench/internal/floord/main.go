// Command floord is the benchmarks' floor: the least a Go service on the
// session bus can be. It connects to the bus (DBUS_SESSION_BUS_ADDRESS),
// exports one object, requests its name (default org.antidrift.BenchFloor)
// and, when DISPLAY is set, holds an X connection listening for property
// changes on the root window, as antidriftd's sensor does. Then it waits.
// Same Go runtime, same libraries (godbus, xgb), no antidrift code: what it
// costs at exec and at idle is the cost of the platform, not of ours.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/godbus/dbus/v5"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

type object struct{}

func (object) Ping() *dbus.Error { return nil }

func main() {
	name := "org.antidrift.BenchFloor"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		fail(err)
	}
	if err := conn.Export(object{}, "/org/antidrift/BenchFloor", "org.antidrift.BenchFloor"); err != nil {
		fail(err)
	}
	if reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		fail(fmt.Errorf("requesting %s: %v %v", name, reply, err))
	}
	if display := os.Getenv("DISPLAY"); display != "" {
		xgb.Logger.SetOutput(devNull{})
		x, err := xgb.NewConnDisplay(display)
		if err != nil {
			fail(err)
		}
		root := xproto.Setup(x).DefaultScreen(x).Root
		if err := xproto.ChangeWindowAttributesChecked(x, root, xproto.CwEventMask,
			[]uint32{xproto.EventMaskPropertyChange}).Check(); err != nil {
			fail(err)
		}
		go func() {
			for {
				if ev, err := x.WaitForEvent(); ev == nil && err == nil {
					return
				}
			}
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-sigs:
	case <-conn.Context().Done():
	}
	conn.Close()
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "floord:", err)
	os.Exit(1)
}
