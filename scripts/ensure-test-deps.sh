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
	notify-send:libnotify-bin xterm:xterm busctl:systemd chromium:chromium firefox-esr:firefox-esr \
	zip:zip msgfmt:gettext xgettext:gettext locale-gen:locales \
	/usr/libexec/at-spi-bus-launcher:at-spi2-core \
	dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian mmdebstrap:mmdebstrap \
	man:man-db nroff:groff-base || [ "$(id -u)" != 0 ]

# The Wayland compositors run from a Debian 13 rootfs, built once and cached
# outside the checkout (scripts/desktop-rootfs.sh says how and where).
if [ "$(id -u)" = 0 ]; then
	"$here/desktop-rootfs.sh" >/dev/null
elif ! "$here/desktop-rootfs.sh" --path >/dev/null 2>&1; then
	echo "the Wayland end-to-end tests need a Debian 13 rootfs: run sudo $here/desktop-rootfs.sh" >&2
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
