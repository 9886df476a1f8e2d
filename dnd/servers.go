package dnd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busname"
)

// The notification server, as the freedesktop specification names it.
const (
	notificationsName  = "org.freedesktop.Notifications"
	notificationsPath  = dbus.ObjectPath("/org/freedesktop/Notifications")
	notificationsIface = "org.freedesktop.Notifications"
)

// setting is one server's own Do Not Disturb switch, read and written its
// way. Values are the server's words ("true", "false", "absent"), kept as
// they are in the record.
type setting interface {
	// kind names the server in the record.
	kind() string
	// get reads the person's value now.
	get(ctx context.Context) (string, error)
	// set writes a value get returned, or quiet.
	set(ctx context.Context, v string) error
	// quiet is the value that silences the server.
	quiet() string
	// already is the sentence for a person who had silenced it already.
	already() string
}

// A setting with more than one silenced value says which values are
// silenced (otherwise only quiet is).
type quietValues interface{ isQuiet(v string) bool }

// A setting whose silencing leaves something the person should know says
// it (QuietNote; "" when nothing).
type quietNoter interface {
	quietNote(ctx context.Context) string
}

// settingOf is the switch of a kind of server, for putting back a record
// whatever server runs now.
func settingOf(conn *dbus.Conn, gsettings, kind string) setting {
	switch kind {
	case kindGnome:
		return gnomeBanners{gsettings: gsettings}
	case kindDunst:
		return dunstPaused{conn: conn}
	case kindXfce:
		return xfceDND{conn: conn}
	case kindMako:
		return makoDND{conn: conn, configs: makoConfigs()}
	}
	return nil
}

const (
	kindGnome = "gnome-shell"
	kindDunst = "dunst"
	kindXfce  = "xfce4-notifyd"
)

// gnomeBanners is GNOME Shell's org.gnome.desktop.notifications
// show-banners, through gsettings (the desktop's own settings backend:
// dconf in a session, whatever GSETTINGS_BACKEND names otherwise). The
// Shell still shows critical notifications with banners off.
type gnomeBanners struct{ gsettings string }

const gnomeSchema, gnomeKey = "org.gnome.desktop.notifications", "show-banners"

func (gnomeBanners) kind() string  { return kindGnome }
func (gnomeBanners) quiet() string { return "false" }
func (gnomeBanners) already() string {
	return "Notification banners were already off in GNOME: antidrift leaves them off, and off they stay after the session."
}

func (g gnomeBanners) get(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, g.gsettings, "get", gnomeSchema, gnomeKey).Output()
	if err != nil {
		return "", fmt.Errorf("gsettings get %s %s: %w%s", gnomeSchema, gnomeKey, err, stderrOf(err))
	}
	switch v := strings.TrimSpace(string(out)); v {
	case "true", "false":
		return v, nil
	default:
		return "", fmt.Errorf("gsettings get %s %s: got %q, want true or false", gnomeSchema, gnomeKey, v)
	}
}

func (g gnomeBanners) set(ctx context.Context, v string) error {
	if v != "true" && v != "false" {
		return fmt.Errorf("show-banners: %q is not a boolean", v)
	}
	if err := exec.CommandContext(ctx, g.gsettings, "set", gnomeSchema, gnomeKey, v).Run(); err != nil {
		return fmt.Errorf("gsettings set %s %s %s: %w%s", gnomeSchema, gnomeKey, v, err, stderrOf(err))
	}
	return nil
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// dunstPaused is dunst's pause, on org.dunstproject.cmd0. dunst 1.10 and
// later have pause levels (pauseLevel, as dunstctl set-pause-level sets
// it): a notification shows while paused when its override_pause_level,
// which only the person's dunstrc rules give, is at least the level, and
// dunst's own dunstrc gives critical ones 60 and normal ones 30. So a
// quiet session pauses at dunstQuietLevel, where antidrift's critical
// nudges still show and other apps' normal ones wait. dunst 1.9 has only
// paused, which holds every notification, antidrift's too: the session
// says so (quietNote). Values: "level:N" (1.10+), "true"/"false" (1.9, and
// records from before).
type dunstPaused struct{ conn *dbus.Conn }

const (
	dunstIface = "org.dunstproject.cmd0"
	// dunstQuietLevel is the override_pause_level dunst's own dunstrc
	// gives [urgency_critical].
	dunstQuietLevel = 60
	dunstQuiet      = "quiet" // set's word for "pause the way this dunst can"
)

func (dunstPaused) kind() string  { return kindDunst }
func (dunstPaused) quiet() string { return dunstQuiet }
func (dunstPaused) already() string {
	return "dunst was already paused: antidrift leaves it paused, and paused it stays after the session."
}

// isQuiet: the person had paused dunst already, at any level.
func (dunstPaused) isQuiet(v string) bool {
	return v == "true" || (strings.HasPrefix(v, "level:") && v != "level:0")
}

func (d dunstPaused) prop(ctx context.Context, name string, v any) error {
	return d.conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", dbus.FlagNoAutoStart, dunstIface, name).Store(v)
}

func (d dunstPaused) setProp(ctx context.Context, name string, v any) error {
	return d.conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Set", dbus.FlagNoAutoStart, dunstIface, name, dbus.MakeVariant(v)).Err
}

// level is dunst's pause level, ok false for a dunst without levels (1.9).
func (d dunstPaused) level(ctx context.Context) (uint32, bool, error) {
	var level uint32
	err := d.prop(ctx, "pauseLevel", &level)
	if busname.IsError(err, "org.freedesktop.DBus.Error.ServiceUnknown") || busname.IsError(err, "org.freedesktop.DBus.Error.NameHasNoOwner") || busname.IsError(err, "org.freedesktop.DBus.Error.NoReply") {
		return 0, false, err
	}
	return level, err == nil, nil
}

func (d dunstPaused) get(ctx context.Context) (string, error) {
	level, levels, err := d.level(ctx)
	if err != nil {
		return "", fmt.Errorf("reading dunst's pause level: %w", err)
	}
	if levels {
		return fmt.Sprintf("level:%d", level), nil
	}
	var paused bool
	if err := d.prop(ctx, "paused", &paused); err != nil {
		return "", fmt.Errorf("reading dunst's paused: %w", err)
	}
	return fmt.Sprint(paused), nil
}

func (d dunstPaused) set(ctx context.Context, v string) error {
	var err error
	switch {
	case v == dunstQuiet:
		if _, levels, _ := d.level(ctx); levels {
			err = d.setProp(ctx, "pauseLevel", uint32(dunstQuietLevel))
		} else {
			err = d.setProp(ctx, "paused", true)
		}
	case v == "true" || v == "false":
		err = d.setProp(ctx, "paused", v == "true")
	case strings.HasPrefix(v, "level:"):
		n, perr := strconv.ParseUint(strings.TrimPrefix(v, "level:"), 10, 32)
		if perr != nil || n > 100 {
			return fmt.Errorf("dunst's pause level: %q is not a level", v)
		}
		if err = d.setProp(ctx, "pauseLevel", uint32(n)); busname.IsError(err, "org.freedesktop.DBus.Error.UnknownProperty") || busname.IsError(err, "org.freedesktop.DBus.Error.InvalidArgs") {
			err = d.setProp(ctx, "paused", n > 0) // a dunst without levels now
		}
	default:
		return fmt.Errorf("dunst's pause: %q is not a value", v)
	}
	if v != dunstQuiet && (busname.IsError(err, "org.freedesktop.DBus.Error.ServiceUnknown") || busname.IsError(err, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
		return nil // dunst is gone, and its pause with it: the next one starts unpaused
	}
	if err != nil {
		return fmt.Errorf("setting dunst's pause to %s: %w", v, err)
	}
	return nil
}

// quietNote is what the person should know about a paused dunst: one
// without pause levels holds antidrift's nudges too.
func (d dunstPaused) quietNote(ctx context.Context) string {
	if _, levels, err := d.level(ctx); err == nil && !levels {
		return "This dunst (before 1.10) holds every notification while paused, antidrift's nudges too: they wait with the others until the session ends or you step away; antidrift status and the panels show drift as it happens. dunst 1.10 and later let the nudges through."
	}
	return ""
}

// xfceDND is xfce4-notifyd's do-not-disturb setting, in xfconf's channel
// xfce4-notifyd ("absent" when the person never set it).
type xfceDND struct{ conn *dbus.Conn }

const (
	xfconfName    = "org.xfce.Xfconf"
	xfconfPath    = dbus.ObjectPath("/org/xfce/Xfconf")
	xfconfIface   = "org.xfce.Xfconf"
	xfceChannel   = "xfce4-notifyd"
	xfceProperty  = "/do-not-disturb"
	xfconfMissing = "org.xfce.Xfconf.Error.PropertyNotFound"
)

func (xfceDND) kind() string  { return kindXfce }
func (xfceDND) quiet() string { return "true" }
func (xfceDND) already() string {
	return "xfce4-notifyd's Do Not Disturb was already on: antidrift leaves it on, and on it stays after the session."
}

func (x xfceDND) get(ctx context.Context) (string, error) {
	var v dbus.Variant
	err := x.conn.Object(xfconfName, xfconfPath).CallWithContext(ctx, xfconfIface+".GetProperty", 0, xfceChannel, xfceProperty).Store(&v)
	if busname.IsError(err, xfconfMissing) {
		return "absent", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading xfce4-notifyd's do-not-disturb: %w", err)
	}
	b, ok := v.Value().(bool)
	if !ok {
		return "", fmt.Errorf("xfce4-notifyd's do-not-disturb: got %s, want a boolean", v.Signature())
	}
	return fmt.Sprint(b), nil
}

func (x xfceDND) set(ctx context.Context, v string) error {
	obj := x.conn.Object(xfconfName, xfconfPath)
	var err error
	switch v {
	case "absent":
		err = obj.CallWithContext(ctx, xfconfIface+".ResetProperty", 0, xfceChannel, xfceProperty, false).Err
	case "true", "false":
		err = obj.CallWithContext(ctx, xfconfIface+".SetProperty", 0, xfceChannel, xfceProperty, dbus.MakeVariant(v == "true")).Err
	default:
		return fmt.Errorf("do-not-disturb: %q is not a value", v)
	}
	if err != nil {
		return fmt.Errorf("setting xfce4-notifyd's do-not-disturb to %s: %w", v, err)
	}
	return nil
}

// plasmaInhibit is Plasma's extension of the specification: Inhibit
// holds other notifications back until UnInhibit, or until the caller
// leaves the bus (so a crash releases it by itself).
const (
	plasmaInhibitReason = "A quiet focus session is running"
)

func inhibit(ctx context.Context, conn *dbus.Conn) (uint32, error) {
	var cookie uint32
	err := conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, notificationsIface+".Inhibit", dbus.FlagNoAutoStart,
		"antidrift", plasmaInhibitReason, map[string]dbus.Variant{}).Store(&cookie)
	if err != nil {
		return 0, fmt.Errorf("Inhibit: %w", err)
	}
	return cookie, nil
}

func uninhibit(ctx context.Context, conn *dbus.Conn, cookie uint32) error {
	err := conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, notificationsIface+".UnInhibit", dbus.FlagNoAutoStart, cookie).Err
	if err != nil {
		return fmt.Errorf("UnInhibit: %w", err)
	}
	return nil
}

// serverInfo asks the notification server its name and vendor
// (GetServerInformation), starting it when the bus can.
func serverInfo(ctx context.Context, conn *dbus.Conn) (name, vendor string, err error) {
	var version, spec string
	err = conn.Object(notificationsName, notificationsPath).CallWithContext(ctx, notificationsIface+".GetServerInformation", 0).Store(&name, &vendor, &version, &spec)
	return name, vendor, err
}

// The server kinds that are not a setting.
const (
	kindPlasma  = "plasma"
	kindUnknown = ""
)

// kindOf says which server answered GetServerInformation with name and
// vendor.
func kindOf(name, vendor string) string {
	switch {
	case name == "gnome-shell":
		return kindGnome
	case name == "dunst":
		return kindDunst
	case name == "Xfce Notify Daemon" || name == "xfce4-notifyd":
		return kindXfce
	case name == "mako":
		return kindMako
	case name == "Plasma" || vendor == "KDE":
		return kindPlasma
	}
	return kindUnknown
}

// makoDND is mako's do-not-disturb mode (fr.emersion.Mako's SetModes, as
// makoctl mode -a/-r sets it), where the person's config defines one: a
// mode is only a name to mako, and what it hides is the config's.
type makoDND struct {
	conn *dbus.Conn
	// configs are the files mako reads its config from, first found wins.
	configs []string
}

const (
	kindMako     = "mako"
	makoPath     = dbus.ObjectPath("/fr/emersion/Mako")
	makoIface    = "fr.emersion.Mako"
	makoDNDMode  = "do-not-disturb"
	makoDNDWords = "do-not-disturb mode"
)

func (makoDND) kind() string  { return kindMako }
func (makoDND) quiet() string { return "on" }
func (makoDND) already() string {
	return "mako's do-not-disturb mode was already on: antidrift leaves it on, and on it stays after the session."
}

// defined says whether the person's mako config has a section for the
// do-not-disturb mode ([mode=do-not-disturb], alone or with other criteria).
func (m makoDND) defined() (bool, string) {
	for _, path := range m.configs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "[") || !strings.HasSuffix(line, "]") {
				continue
			}
			for _, c := range strings.Fields(strings.Trim(line, "[]")) {
				if c == "mode="+makoDNDMode || c == `mode="`+makoDNDMode+`"` {
					return true, path
				}
			}
		}
		return false, path
	}
	return false, ""
}

func (m makoDND) modes(ctx context.Context) ([]string, error) {
	var modes []string
	err := m.conn.Object(notificationsName, makoPath).CallWithContext(ctx, makoIface+".ListModes", dbus.FlagNoAutoStart).Store(&modes)
	if err != nil {
		return nil, fmt.Errorf("asking mako its modes: %w", err)
	}
	return modes, nil
}

func (m makoDND) get(ctx context.Context) (string, error) {
	modes, err := m.modes(ctx)
	if err != nil {
		return "", err
	}
	if slices.Contains(modes, makoDNDMode) {
		return "on", nil
	}
	return "off", nil
}

func (m makoDND) set(ctx context.Context, v string) error {
	if v != "on" && v != "off" {
		return fmt.Errorf("mako's %s: %q is neither on nor off", makoDNDWords, v)
	}
	modes, err := m.modes(ctx)
	if v == "off" && (busname.IsError(err, "org.freedesktop.DBus.Error.ServiceUnknown") || busname.IsError(err, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
		return nil // mako is gone, and its modes with it: the next one starts in its default mode
	}
	if err != nil {
		return err
	}
	// The person's other modes are kept as they are.
	modes = slices.DeleteFunc(modes, func(s string) bool { return s == makoDNDMode })
	if v == "on" {
		modes = append(modes, makoDNDMode)
	}
	if err := m.conn.Object(notificationsName, makoPath).CallWithContext(ctx, makoIface+".SetModes", dbus.FlagNoAutoStart, modes).Err; err != nil {
		return fmt.Errorf("setting mako's modes: %w", err)
	}
	return nil
}

// makoConfigs are the files mako looks for its config in, in its order.
func makoConfigs() []string {
	home, _ := os.UserHomeDir()
	config := os.Getenv("XDG_CONFIG_HOME")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	var out []string
	if config != "" {
		out = append(out, filepath.Join(config, "mako", "config"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".mako", "config"))
	}
	return out
}
