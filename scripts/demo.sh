#!/usr/bin/env bash
# A guided tour of antidrift on a virtual desktop: `make demo`.
#
# Usage: scripts/demo.sh [BINDIR]    (BINDIR holds antidriftd and antidrift;
#                                     default: bin, as built by `make build`)
#
# It starts, all inside one temp dir: a private D-Bus session bus, an Xvfb X
# server on a free display, openbox, dunst and two xterms ("Editor" and
# "Distraction"); then antidriftd on that bus and display, and a 20-second
# `block` session driven by the antidrift CLI. It switches windows by script
# and shows what the daemon does about it, lets the session expire, ends it
# and verifies the audit log. Everything it started is stopped on exit and
# the temp dir removed; nothing touches your own desktop, bus or state.
# Exits 0 when every step worked, 1 (naming the step) when one did not.
set -Eeuo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bindir=${1:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac

# --- presentation ------------------------------------------------------------
if [ -t 1 ]; then
	bold=$(printf '\033[1m') dim=$(printf '\033[2m') red=$(printf '\033[31m') off=$(printf '\033[0m')
else
	bold='' dim='' red='' off=''
fi
step=0
# say: a numbered step, then one or two lines of narration.
say() {
	step=$((step + 1))
	printf '\n%s%d. %s%s\n' "$bold" "$step" "$1" "$off"
	shift
	for line in "$@"; do printf '   %s\n' "$line"; done
}
# show: what we observed, indented under the step.
show() { printf '   %s→%s %s\n' "$dim" "$off" "$*"; }
# run_shown: echo a command, run it, indent its output; fails like the command.
run_shown() {
	local shown="" a
	for a in "$@"; do
		case $a in *[[:space:]]* | '') shown="$shown \"$a\"" ;; *) shown="$shown $a" ;; esac
	done
	printf '   %s$%s%s\n' "$dim" "$shown" "$off"
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/     /'
	return "$rc"
}
current="setting up"
fail() {
	printf '\n%sdemo failed while %s: %s%s\n' "$red" "$current" "$*" "$off" >&2
	for log in "$work"/logs/*.log; do
		[ -s "$log" ] || continue
		printf '%s--- last lines of %s ---%s\n' "$dim" "${log##*/}" "$off" >&2
		tail -n 15 "$log" >&2
	done
	exit 1
}
trap 'fail "a command failed (line $LINENO)"' ERR

# --- tools -------------------------------------------------------------------
# Only what the demo drives: as root on Debian or Ubuntu they are installed
# (a few MB, no test rootfs, no model server); otherwise the apt-get line
# is printed.
"$root/scripts/install-missing.sh" "the demo" dbus-daemon:dbus dbus-monitor:dbus busctl:systemd \
	Xvfb:xvfb xprop:x11-utils xdotool:xdotool openbox:openbox dunst:dunst dunstctl:dunst xterm:xterm ||
	exit 1
for b in antidriftd antidrift; do
	if [ ! -x "$bindir/$b" ]; then
		echo "demo needs $bindir/$b: run make build first (make demo does)" >&2
		exit 1
	fi
done
export PATH="$bindir:$PATH"

# --- the temp dir and teardown -----------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/antidrift-demo.XXXXXX")
mkdir -p "$work/logs" "$work/home" "$work/state" "$work/config/antidrift" "$work/xdg"
pgids=()
cleanup() {
	local rc=$?
	trap - ERR
	set +e
	# Newest first: the watchers and the daemon before the desktop under them.
	local i pg
	for ((i = ${#pgids[@]} - 1; i >= 0; i--)); do
		pg=${pgids[i]}
		kill -TERM -- "-$pg" 2>/dev/null
		for _ in $(seq 50); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pg" 2>/dev/null
	done
	rm -rf "$work"
	if [ "$rc" = 0 ]; then
		printf '\nEverything the demo started is stopped and its temp dir removed.\n'
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# spawn NAME CMD...: start CMD in a process group of its own (so teardown
# takes its children too), output to logs/NAME.log.
spawn() {
	local name=$1
	shift
	setsid "$@" >"$work/logs/$name.log" 2>&1 </dev/null &
	pgids+=("$!")
	last_pid=$!
}

# wait_for WHAT SECONDS CMD...: poll CMD every 0.1s until it succeeds.
wait_for() {
	local what=$1 secs=$2
	shift 2
	local deadline=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${secs}s waiting for $what"
		sleep 0.1
	done
}

# The environment every desktop program gets: HOME and the XDG dirs in the
# temp dir, so nothing reads or writes your own config.
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
export XDG_DATA_HOME="$work/home/.local/share" XDG_CACHE_HOME="$work/home/.cache"
export XDG_CONFIG_DIRS="$work/xdg" XDG_RUNTIME_DIR="$work/home/run"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
unset SESSION_MANAGER DBUS_SYSTEM_BUS_ADDRESS

prop() { busctl --user get-property org.antidrift /org/antidrift/Session1 org.antidrift.Session1 "$1"; }
# owned NAME: someone owns NAME on the bus. (Not busctl status, which also
# wants the owner's credentials and fails where cgroupfs is not mounted.)
owned() { [ "$(busctl --user call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus NameHasOwner s "$1")" = "b true" ]; }

printf '%santidrift demo%s: a virtual desktop in %s\n' "$bold" "$off" "$work"

# --- 1. the bus --------------------------------------------------------------
current="starting the session bus"
say "A private D-Bus session bus" \
	"antidriftd serves org.antidrift on the session bus; this one is ours alone."
cat >"$work/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$work/services</servicedir>
  <policy context="default">
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
EOF
mkdir -p "$work/services"
spawn dbus-daemon dbus-daemon --nofork --config-file="$work/bus.conf"
export DBUS_SESSION_BUS_ADDRESS="unix:path=$work/bus"
wait_for "the bus to listen" 30 busctl --user list
show "listening on $DBUS_SESSION_BUS_ADDRESS"

# --- 2. the X server, window manager and notification daemon -----------------
current="starting the virtual display"
say "A virtual X display with a window manager and a notification daemon" \
	"Xvfb picks a free display; openbox manages the windows; dunst shows notifications."
# -displayfd makes Xvfb pick a free display number and write it to fd 5.
# -noreset keeps the server up when its last client disconnects (without it,
# a client connecting during the reset, like openbox, is refused).
spawn Xvfb Xvfb -displayfd 5 -screen 0 1280x800x24 -nolisten tcp -noreset 5>"$work/display"
wait_for "Xvfb to pick a display" 30 grep -q . "$work/display"
DISPLAY=":$(head -n1 "$work/display")"
export DISPLAY
wait_for "Xvfb to accept clients" 30 xprop -root -notype _NET_ACTIVE_WINDOW
cat >"$work/openbox.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <focus><focusNew>yes</focusNew><followMouse>no</followMouse></focus>
  <placement><policy>Smart</policy></placement>
  <desktops><number>1</number></desktops>
</openbox_config>
EOF
spawn openbox openbox --sm-disable --config-file "$work/openbox.xml"
wm_up() { xprop -root -notype _NET_SUPPORTING_WM_CHECK | grep -q 'window id #'; }
wait_for "openbox to manage the screen" 30 wm_up
# Notifications stay on screen until closed, so the demo can look at them.
cat >"$work/dunstrc" <<'EOF'
[global]
    follow = none
    show_indicators = no
    browser = /bin/true
    dmenu = /bin/true
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
EOF
spawn dunst dunst -config "$work/dunstrc"
wait_for "dunst to own org.freedesktop.Notifications" 30 owned org.freedesktop.Notifications
show "display $DISPLAY, openbox and dunst are up"

# --- 3. two windows ----------------------------------------------------------
current="opening the windows"
say "Two windows: an Editor (the work) and a Distraction" \
	"Their WM_CLASS is what antidrift matches: Editor will be allowed, Distraction not."
# xterm_window CLASS TITLE: open an xterm, set $window to its X window id.
# Its instance is CLASS too (-name): with xterm's own, "xterm", antidrift
# would name both windows by xterm's desktop entry, "XTerm" (docs/drift.md,
# Apps by name).
xterm_window() {
	local class=$1 title=$2
	spawn "xterm-$class" xterm -name "$class" -class "$class" -title "$title" -e sleep 100000
	window=$(timeout 30 xdotool search --sync --onlyvisible --pid "$last_pid" --class "^$class\$" | head -n1) || true
	[ -n "$window" ] || fail "the $class xterm never got a visible window"
}
xterm_window Editor "main.go - editor"
editor=$window
xterm_window Distraction "cat videos"
distraction=$window
timeout 10 xdotool windowactivate --sync "$editor"
show "Editor is window $editor, Distraction is window $distraction; Editor has focus"

# --- 4. the daemon -----------------------------------------------------------
current="starting antidriftd"
say "antidriftd, watching this display" \
	"Its config says drift_grace = \"1s\": one second on a distracting window counts as drift."
cat >"$XDG_CONFIG_HOME/antidrift/config.toml" <<'EOF'
drift_grace = "1s"
EOF
run_shown antidriftd --check-config
spawn antidriftd antidriftd
wait_for "antidriftd to own org.antidrift" 30 owned org.antidrift
sees_editor() { [ "$(prop CurrentClass)" = 's "Editor"' ]; }
wait_for "antidriftd to see the Editor window" 30 sees_editor
show "antidriftd (pid $last_pid) owns org.antidrift; state in $XDG_STATE_HOME/antidrift"

# The witness: every notification the daemon sends, as dbus-monitor sees it.
spawn dbus-monitor dbus-monitor "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"
wait_for "dbus-monitor to start" 30 grep -q NameLost "$work/logs/dbus-monitor.log"

# --- 5. a session --------------------------------------------------------------
current="starting the session"
say "Commit to one next action, with a success condition and a timebox" \
	"Level block: drifting to a window that is not allowed gets a nudge, and the window is iconified."
run_shown antidrift start "Write the demo" --done-when "it runs" --for 20s --allow Editor --enforce block

say "Watch it live: antidrift status --follow" \
	"It prints a line whenever the status changes; its lines are marked 'follow │'."
# Its output goes straight to this terminal, interleaved with the narration.
setsid bash -c 'antidrift status --follow 2>&1 | sed -u "s/^/   follow │ /" | tee "$0"' \
	"$work/logs/follow.log" </dev/null &
pgids+=("$!")
wait_for "status --follow to print its first line" 30 grep -q . "$work/logs/follow.log"

# --- 6. drift ------------------------------------------------------------------
current="drifting"
say "Drift: focus the Distraction window (as a click or alt-tab would)" \
	"After the 1 s grace the daemon nudges, iconifies the Distraction and gives focus back to the Editor."
timeout 10 xdotool windowactivate "$distraction"
iconic() { xprop -id "$distraction" WM_STATE | grep -q 'window state: Iconic'; }
wait_for "the Distraction window to be iconified" 30 iconic
show "Distraction window $distraction: WM_STATE Iconic (iconified)"
editor_back() { xprop -root -notype _NET_ACTIVE_WINDOW | grep -qi "$(printf '0x%x' "$editor")\$"; }
wait_for "the Editor to be active again" 30 editor_back
show "active window: $(printf '0x%x' "$editor") (Editor) again"
minimized() { [ "$(prop MinimizeCount)" != "u 0" ]; }
wait_for "MinimizeCount to count it" 30 minimized
show "MinimizeCount: $(prop MinimizeCount | cut -d' ' -f2)"

current="looking for the nudge"
nudged() { grep -q 'Drifting' "$work/logs/dbus-monitor.log"; }
wait_for "the nudge notification" 30 nudged
show "nudge sent (dbus-monitor): $(grep -m1 -o '"Drifting[^"]*"' "$work/logs/dbus-monitor.log")"
displayed() { [ "$(dunstctl count displayed)" -gt 0 ]; }
wait_for "dunst to display the nudge" 30 displayed
show "dunst is displaying $(dunstctl count displayed) notification(s); closing them moves them to its history:"
dunstctl close-all
in_history() { dunstctl history | grep -q Drifting; }
wait_for "the nudge in dunst's history" 30 in_history
dunstctl history | sed -n '/"summary"/,/"data"/s/.*"data" : \(".*"\).*/\1/p' | while read -r summary; do
	show "dunst history: $summary"
done
run_shown antidrift status

# --- 7. the end of the timebox -------------------------------------------------
current="waiting for the timebox to run out"
say "Let the timebox run out" \
	"The deadline is one timer in the daemon; when it fires the session goes to review (outcome expired)."
in_review() { [ "$(prop State)" = 's "review"' ]; }
wait_for "the session to expire into review" 60 in_review
run_shown antidrift status

current="ending the session"
say "End the session: its summary is sealed into the hash-chained audit log"
end_out=$(antidrift end) || fail "antidrift end failed: $end_out"
printf '%s\n' "$end_out" | sed 's/^/     /'
hash=$(printf '%s\n' "$end_out" | grep -oE '[0-9a-f]{64}' | head -n1) || true
[ -n "$hash" ] || fail "antidrift end printed no audit hash"
show "end hash: $hash"

current="reading the history"
say "History: one sealed session, newest first"
run_shown antidrift history

current="verifying the audit log"
say "Verify: walk the chain and recompute every hash" \
	"(docs/audit.md has the ten lines of Python that check it without antidrift.)"
run_shown antidrift verify || fail "antidrift verify says the chain is broken"
show "verify: ok"
show "audit.jsonl, line 1: $(head -c 150 "$XDG_STATE_HOME/antidrift/audit.jsonl")…"

current="reporting on today"
say "Report: today at a glance" \
	"Read straight from the state directory (no daemon needed): totals, the day's bar, and the" \
	"session's timeline of which window had focus when. Also --week, --json, --html FILE."
run_shown antidrift report --today || fail "antidrift report failed"

current="tearing down"
say "Done" "Stopping everything the demo started."
exit 0
