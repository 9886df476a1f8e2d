package kwin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// KWin's D-Bus names, as KWin 6 serves them.
const (
	// BusName is KWin's well-known name on the session bus; its owner is
	// the connection focus reports must come from.
	BusName        = "org.kde.KWin"
	scriptingPath  = dbus.ObjectPath("/Scripting")
	scriptingIface = "org.kde.kwin.Scripting"
)

// callTimeout bounds each call to KWin the sensor makes on its own (the
// guard's calls are bounded by the caller's context).
const callTimeout = 5 * time.Second

// errNameTaken is loadScript's -1: KWin already has a script by that name.
var errNameTaken = errors.New("KWin already has a script by that name")

// scripting is KWin's org.kde.kwin.Scripting interface on /Scripting.
//
// KWin numbers scripts by how many are loaded, so after an unload two
// scripts can get the same number and only the first is exported as
// /Scripting/Script<n>: running a script through that path could run
// someone else's. So scripts are run with Scripting.start, which runs every
// loaded script that is not running yet, and are known by name only.
type scripting struct{ conn *dbus.Conn }

func (s scripting) call(ctx context.Context, method string, args ...any) *dbus.Call {
	return s.conn.Object(BusName, scriptingPath).CallWithContext(ctx, scriptingIface+"."+method, 0, args...)
}

// run loads the script at path under name and starts it. A script left
// under that name (by a daemon that died before unloading it) is unloaded
// first, so KWin runs the file as it is now.
func (s scripting) run(ctx context.Context, path, name string) error {
	err := s.load(ctx, path, name)
	if errors.Is(err, errNameTaken) {
		if _, err = s.unload(ctx, name); err == nil {
			err = s.load(ctx, path, name)
		}
	}
	if err != nil {
		return err
	}
	if err := s.call(ctx, "start").Err; err != nil {
		return fmt.Errorf("starting KWin's scripts: %w", err)
	}
	return nil
}

func (s scripting) load(ctx context.Context, path, name string) error {
	var id int32
	if err := s.call(ctx, "loadScript", path, name).Store(&id); err != nil {
		return fmt.Errorf("loading %s into KWin: %w", path, err)
	}
	if id < 0 {
		return errNameTaken
	}
	return nil
}

// unload stops and removes the script called name; it reports whether
// KWin had one.
func (s scripting) unload(ctx context.Context, name string) (bool, error) {
	var had bool
	if err := s.call(ctx, "unloadScript", name).Store(&had); err != nil {
		return false, fmt.Errorf("unloading %s from KWin: %w", name, err)
	}
	return had, nil
}

// unloadSoon unloads name with a fresh bounded context: it is called when
// the caller's context may be over.
func (s scripting) unloadSoon(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := s.unload(ctx, name)
	return err
}
