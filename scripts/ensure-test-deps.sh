#!/bin/sh
# Makes sure the tools the end-to-end tests drive are installed: installs
# the Debian packages that provide missing ones when run as root, otherwise
# prints the exact apt-get line and carries on (the tests then skip, or fail
# under ANTIDRIFT_E2E=require, naming what is missing).
set -eu

here=$(dirname "$0")
# tool:package pairs. A missing tool is not fatal here: the tests that need
# it skip (or fail under ANTIDRIFT_E2E=require), naming it.
"$here/install-missing.sh" "end-to-end tests" dbus-daemon:dbus dbus-monitor:dbus gdbus:libglib2.0-bin \
	Xvfb:xvfb xprop:x11-utils xdotool:xdotool wmctrl:wmctrl openbox:openbox dunst:dunst \
	notify-send:libnotify-bin /usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd:xfce4-notifyd xfconf-query:xfconf xterm:xterm busctl:systemd chromium:chromium firefox-esr:firefox-esr \
	node:nodejs zip:zip msgfmt:gettext xgettext:gettext locale-gen:locales \
	/usr/libexec/at-spi-bus-launcher:at-spi2-core \
	dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian mmdebstrap:mmdebstrap \
	rpmbuild:rpm rpmlint:rpmlint makepkg:makepkg fakeroot:fakeroot bsdtar:libarchive-tools \
	man:man-db nroff:groff-base || [ "$(id -u)" != 0 ]

# Two real Syncthing instances carry the sync_dir tests' copies between two
# daemons (cmd/antidriftd/sync_test.go): Debian's package, on loopback only.
"$here/install-missing.sh" "the sync_dir tests" syncthing:syncthing || [ "$(id -u)" != 0 ]

# A real Taskwarrior (Debian's package) for the task source and its hook
# (tasks/taskwarrior, cmd/antidriftd/tasks_test.go).
"$here/install-missing.sh" "the Taskwarrior tests" task:taskwarrior || [ "$(id -u)" != 0 ]

# web-ext lint checks the browser extension as addons.mozilla.org does
# (dist.TestWebExtLint): web-ext from npm, into a cache (scripts/web-ext.sh).
"$here/install-missing.sh" "the browser extension's lint" npm:npm node:nodejs || [ "$(id -u)" != 0 ]
"$here/web-ext.sh" >/dev/null || echo "the browser extension's lint test needs web-ext: run $here/web-ext.sh" >&2

# The desktops run from one Debian rootfs per suite (Debian 13, testing,
# unstable), built once each and cached outside the checkout
# (scripts/desktop-rootfs.sh says how and where). Building them is network-
# and disk-bound, so as root they are built one after another in the
# background while llama-server compiles (CPU-bound) below.
suites=$("$here/desktop-rootfs.sh" --suites)
rootfs_pid=
if [ "$(id -u)" = 0 ]; then
	(for s in $suites; do "$here/desktop-rootfs.sh" "$s" >/dev/null || exit 1; done) &
	rootfs_pid=$!
else
	for s in $suites; do
		"$here/desktop-rootfs.sh" "$s" --path >/dev/null 2>&1 ||
			echo "the desktop end-to-end tests need the $s rootfs: run sudo $here/desktop-rootfs.sh $s" >&2
	done
fi

# The package's tests boot a real systemd from a small Debian 13 rootfs of
# their own (scripts/systemd-rootfs.sh; about 140 MB, a few minutes cold).
if [ "$(id -u)" = 0 ]; then
	"$here/systemd-rootfs.sh" >/dev/null
elif ! "$here/systemd-rootfs.sh" --path >/dev/null 2>&1; then
	echo "the package's systemd tests need a Debian 13 rootfs: run sudo $here/systemd-rootfs.sh" >&2
fi

# The LLM judge's tests talk to llama.cpp's llama-server with a tiny model,
# built once and cached outside the checkout (scripts/llama-server.sh says
# how and where; about 9 minutes on 2 cores when the cache is cold).
if [ "$(id -u)" = 0 ]; then
	"$here/llama-server.sh" >/dev/null
elif ! "$here/llama-server.sh" --path >/dev/null 2>&1; then
	echo "the LLM judge's real-server tests need llama-server: run sudo $here/llama-server.sh" >&2
fi

# The desktop rootfs trees, built meanwhile.
if [ -n "$rootfs_pid" ] && ! wait "$rootfs_pid"; then
	echo "building the desktop test rootfs failed" >&2
	exit 1
fi
