package caldav

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/godbus/dbus/v5"

	"github.com/antidrift/antidrift/internal/busconn"
)

// maxPasswordFile bounds what is read of password_file: a password, not a
// file someone pointed there by mistake.
const maxPasswordFile = 4096

// readPasswordFile reads the password from a file only its owner can
// read: a regular file of ours, mode 0600 or 0400, not a symlink (opened
// with O_NOFOLLOW, then checked on the open file, so nothing can be
// swapped in between). One trailing newline is not part of the password.
// Errors name the file and what to do; never its content.
func readPasswordFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, syscall.ELOOP):
		return "", say("password_file %s is a symlink, which antidrift does not follow: name the file itself", path)
	case errors.Is(err, os.ErrNotExist):
		return "", say("password_file %s does not exist: write the CalDAV password there (chmod 600 %s)", path, path)
	case err != nil:
		return "", say("cannot open password_file %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", say("cannot read password_file %s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", say("password_file %s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", say("password_file %s belongs to another user (uid %d): it must be yours, mode 0600", path, st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", say("password_file %s can be read by others (mode %04o): run chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", say("cannot read password_file %s: %v", path, errors.Unwrap(err))
	}
	if len(b) > maxPasswordFile {
		return "", say("password_file %s is longer than %d bytes: it should hold only the password", path, maxPasswordFile)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return "", say("password_file %s is empty: write the CalDAV password there", path)
	}
	return string(b), nil
}

// The Secret Service (org.freedesktop.secrets): gnome-keyring, KWallet 6,
// KeePassXC.
const (
	secretsName     = "org.freedesktop.secrets"
	secretsPath     = "/org/freedesktop/secrets"
	secretsService  = "org.freedesktop.Secret.Service"
	secretsItem     = "org.freedesktop.Secret.Item"
	secretsSession  = "org.freedesktop.Secret.Session"
	errNoSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
)

// secret is the Secret struct of the Secret Service API: (oayays).
type secret struct {
	Session     dbus.ObjectPath
	Parameters  []byte
	Value       []byte
	ContentType string
}

// secretServicePassword asks the Secret Service on the session bus for
// the item with the attributes service=antidrift, url=<url>,
// username=<username> — the ones the docs' secret-tool store line gives.
// The secret comes over a "plain" session: the session bus is this
// user's, and the secret would be in antidrift's memory either way. A
// locked item is not unlocked here: prompting is the desktop's business,
// so the person is told to unlock the keyring.
func secretServicePassword(ctx context.Context, rawURL, username string) (string, error) {
	storeLine := fmt.Sprintf("secret-tool store --label=antidrift service antidrift url %s username %s", rawURL, username)
	conn, err := connectSessionBus(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	svc := conn.Object(secretsName, secretsPath)
	var found, locked []dbus.ObjectPath
	attrs := map[string]string{"service": "antidrift", "url": rawURL, "username": username}
	if err := svc.CallWithContext(ctx, secretsService+".SearchItems", 0, attrs).Store(&found, &locked); err != nil {
		var de dbus.Error
		if errors.As(err, &de) && (de.Name == "org.freedesktop.DBus.Error.ServiceUnknown" || de.Name == "org.freedesktop.DBus.Error.NameHasNoOwner") {
			return "", say("no password_file is set and no Secret Service (gnome-keyring, KWallet, KeePassXC) runs on the session bus: set password_file, or start one and run: %s", storeLine)
		}
		if ctx.Err() != nil {
			return "", say("the Secret Service did not answer in time when asked for the CalDAV password")
		}
		return "", say("the Secret Service failed when asked for the CalDAV password (%s)", dbusErrorName(err))
	}
	if len(found) == 0 && len(locked) > 0 {
		return "", say("the CalDAV password for %s is in a locked keyring: unlock it (log in to the desktop, or open it in Passwords and Keys), then try again", username)
	}
	if len(found) == 0 {
		return "", say("no CalDAV password for %s at %s in the Secret Service: store it with `%s`, or set password_file", username, rawURL, storeLine)
	}
	var out dbus.Variant
	var session dbus.ObjectPath
	if err := svc.CallWithContext(ctx, secretsService+".OpenSession", 0, "plain", dbus.MakeVariant("")).Store(&out, &session); err != nil {
		return "", say("the Secret Service would not open a session to hand over the CalDAV password (%s)", dbusErrorName(err))
	}
	defer conn.Object(secretsName, session).CallWithContext(ctx, secretsSession+".Close", 0)
	var s secret
	for _, item := range found {
		err := conn.Object(secretsName, item).CallWithContext(ctx, secretsItem+".GetSecret", 0, session).Store(&s)
		if err == nil {
			break
		}
		var de dbus.Error
		if errors.As(err, &de) && de.Name == errNoSuchObject {
			continue // deleted since the search
		}
		return "", say("the Secret Service would not hand over the CalDAV password (%s)", dbusErrorName(err))
	}
	if len(s.Value) == 0 {
		return "", say("the CalDAV password for %s in the Secret Service is empty: store it again with `%s`", username, storeLine)
	}
	return string(s.Value), nil
}

// connectSessionBus opens a private connection to the session bus through
// busconn (framed, like every bus connection of the daemon), within ctx.
func connectSessionBus(ctx context.Context) (*dbus.Conn, error) {
	type dialed struct {
		conn *dbus.Conn
		err  error
	}
	ch := make(chan dialed, 1)
	go func() {
		c, err := busconn.Connect("", nil)
		ch <- dialed{c, err}
	}()
	select {
	case d := <-ch:
		if d.err != nil {
			return nil, say("no password_file is set and the session bus cannot be reached to ask the Secret Service for the CalDAV password")
		}
		return d.conn, nil
	case <-ctx.Done():
		go func() {
			if d := <-ch; d.conn != nil {
				d.conn.Close()
			}
		}()
		return nil, say("the session bus did not answer in time when antidrift asked the Secret Service for the CalDAV password")
	}
}

// dbusErrorName is the D-Bus error's name, not its message (a Secret
// Service's message is its own text; the name says enough).
func dbusErrorName(err error) string {
	var de dbus.Error
	if errors.As(err, &de) {
		return de.Name
	}
	var dp *dbus.Error
	if errors.As(err, &dp) {
		return dp.Name
	}
	return "no answer"
}
