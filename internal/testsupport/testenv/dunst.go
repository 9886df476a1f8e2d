package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// NotificationsName is the bus name of a freedesktop notification server.
const NotificationsName = "org.freedesktop.Notifications"

// Dunst is dunst as the notification server on a private bus and display.
//
// Its dmenu setting points at a script of ours instead of a real menu, so a
// test can "click" a notification action: ChooseNext says which action label
// to pick, OpenMenu makes dunst show its context menu, and the script answers
// with the matching menu line. dunst 1.9 passes one line per action, like
//
//	#Back to work (Drifting) [2,refocus]
//
// i.e. "#<label> (<summary>) [<id>,<action key>]", and invokes the action for
// whichever line comes back on stdout.
type Dunst struct {
	bus     *Bus
	display *Display
	dir     string // dunstrc, menu script and its state files
	proc    *proc
	rootfs  *Rootfs // nil: the host's dunst, first on PATH
}

const dunstrc = `[global]
    dmenu = %s
    browser = /bin/true
    follow = none
    show_indicators = no
    startup_notification = false
# As Debian's /etc/xdg/dunst/dunstrc: the body is Pango markup, and dunst
# advertises body-markup.
    markup = full
# Notifications stay until acted on, so a slow test still finds them.
# The pause levels are those of dunst's own dunstrc (1.10 and later; 1.9
# ignores them): paused at 60, critical ones still show.
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
    override_pause_level = 30
[urgency_critical]
    timeout = 0
    override_pause_level = 60
`

// menuScript stands in for dmenu. Files next to it: "choice" holds the label
// to pick (consumed when it matches, so it applies to one menu only), "menus"
// collects every menu shown, "runs" gets a line per completed run.
const menuScript = `#!/bin/sh
dir=$(dirname "$0")
menu=$(cat)
printf '%s\n---\n' "$menu" >> "$dir/menus"
if [ -f "$dir/choice" ]; then
    want=$(cat "$dir/choice")
    # Prefer the action label ("#label (...)"), else any line containing it.
    line=$(printf '%s\n' "$menu" | grep -F -m1 -e "#$want") ||
        line=$(printf '%s\n' "$menu" | grep -F -m1 -e "$want") || line=
    if [ -n "$line" ]; then
        rm -f "$dir/choice"
        printf '%s\n' "$line"
    fi
fi
echo run >> "$dir/runs"
`

// StartDunst starts dunst on b and d and waits until it owns
// org.freedesktop.Notifications.
func StartDunst(t testing.TB, b *Bus, d *Display) *Dunst {
	t.Helper()
	Need(t, "dunst", "dunstctl", "dbus-send")
	u := &Dunst{bus: b, display: d, dir: tempDir(t)}
	u.configure(t)
	u.launch(t)
	return u
}

func (u *Dunst) configure(t testing.TB) {
	t.Helper()
	script := filepath.Join(u.dir, "menu.sh")
	if err := os.WriteFile(script, []byte(menuScript), 0o755); err != nil {
		t.Fatal(err)
	}
	// tempDir guarantees a path without spaces or quotes, so it can go in as is.
	rc := fmt.Sprintf(dunstrc, script)
	if err := os.WriteFile(filepath.Join(u.dir, "dunstrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (u *Dunst) launch(t testing.TB) {
	t.Helper()
	// A second server would fail to get the name; say so clearly. This also
	// waits for the bus to notice that a killed dunst is gone.
	if !waitUntil(readyTimeout, func() bool { return u.bus.OwnerPID(t, NotificationsName) == 0 }) {
		t.Fatalf("%s is already owned by pid %d", NotificationsName, u.bus.OwnerPID(t, NotificationsName))
	}
	own := []string{
		"DBUS_SESSION_BUS_ADDRESS=" + u.bus.Address,
		"HOME=" + u.dir,
		"XDG_CONFIG_HOME=" + filepath.Join(u.dir, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(u.dir, ".local/share"),
		"XDG_CACHE_HOME=" + filepath.Join(u.dir, ".cache"),
	}
	argv := []string{"dunst", "-config", filepath.Join(u.dir, "dunstrc")}
	var p *proc
	if u.rootfs != nil {
		// unshare, sh, chroot and env each exec the next, so the pid is dunst's.
		p = u.rootfs.Start(t, u.dir, 0, append([]string{"DISPLAY=" + u.display.Name, "LANG=C.UTF-8"}, own...), argv...).p
	} else {
		p = start(t, u.dir, withEnv(u.display.Env(), own...), nil, argv[0], argv[1:]...)
	}
	u.proc = p
	ours := func() bool { return u.bus.OwnerPID(t, NotificationsName) == p.pid() }
	if !waitUntil(readyTimeout, func() bool { return p.exited() || ours() }) || !ours() {
		t.Fatalf("dunst did not take %s\n%s", NotificationsName, p.output())
	}
}

// ChooseNext makes the next context menu that lists an action labelled action
// (e.g. "Back to work") pick it. Menus that do not list it pick nothing.
func (u *Dunst) ChooseNext(action string) {
	// Write-then-rename so the script never reads half a label.
	tmp := filepath.Join(u.dir, "choice.tmp")
	if err := os.WriteFile(tmp, []byte(action), 0o644); err != nil {
		panic(err)
	}
	if err := os.Rename(tmp, filepath.Join(u.dir, "choice")); err != nil {
		panic(err)
	}
}

// OpenMenu opens dunst's context menu (dunstctl context) and waits until our
// menu script has run. If a ChooseNext label is pending, it waits until the
// script has actually picked it, reopening the menu as needed: the
// notification may not be displayed yet when the test calls OpenMenu, and
// dunst only runs the menu when some notification has actions.
func (u *Dunst) OpenMenu(t testing.TB) {
	t.Helper()
	choice := filepath.Join(u.dir, "choice")
	deadline := time.Now().Add(readyTimeout)
	// Back off from 100ms: usually the notification is there by the second try,
	// and a slow menu run must not be raced by too many reopen attempts (dunst
	// refuses to open a second menu while one is running, which is harmless).
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		runs, pending := u.runs(), exists(choice)
		if _, err := u.Ctl(t, "context"); err != nil {
			t.Fatalf("dunstctl context: %v\n%s", err, u.proc.output())
		}
		// The script deletes the choice file once it has picked the action.
		done := func() bool { return u.runs() > runs && !(pending && exists(choice)) }
		if waitUntil(wait, done) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dunst never ran its menu (or the menu lacked the ChooseNext action); menus seen:\n%s\n%s", u.Menus(), u.proc.output())
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// runs counts completed runs of the menu script.
func (u *Dunst) runs() int {
	b, _ := os.ReadFile(filepath.Join(u.dir, "runs"))
	return bytes.Count(b, []byte("\n"))
}

// Menus returns every menu dunst has passed to the script, each followed by a
// "---" line; useful in failure messages.
func (u *Dunst) Menus() string {
	b, _ := os.ReadFile(filepath.Join(u.dir, "menus"))
	return string(b)
}

// Kill stops dunst and waits for it to exit.
func (u *Dunst) Kill() { u.proc.stop() }

// Kill9 kills dunst with SIGKILL, as a crash would, and waits for it.
func (u *Dunst) Kill9() {
	syscall.Kill(u.proc.pid(), syscall.SIGKILL)
	<-u.proc.done
}

// Launch starts dunst again after Kill or Kill9, with the same config,
// and waits until it owns org.freedesktop.Notifications.
func (u *Dunst) Launch(t testing.TB) {
	t.Helper()
	u.launch(t)
}

// Restart kills dunst if it is running, starts it again with the same config
// and waits until the new process owns org.freedesktop.Notifications.
func (u *Dunst) Restart(t testing.TB) {
	t.Helper()
	u.Kill()
	u.launch(t)
}
