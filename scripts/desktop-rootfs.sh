#!/bin/sh
# Builds, once, the Debian 13 (trixie) root filesystem that the Wayland
# end-to-end tests run real compositors in: sway 1.10, KWin 6.3 and GNOME
# Shell 48 are newer than the host's Debian 12 ones and run headless in it.
# The tests enter it with unshare -m + chroot (internal/testsupport/testenv/rootfs.go).
#
#   desktop-rootfs.sh          build it unless cached; print its path
#   desktop-rootfs.sh --path   print its path if it is built, else exit 1
#
# The cache lives outside the checkout ($ANTIDRIFT_ROOTFS_CACHE, default
# /var/cache/antidrift), keyed by the package list, so a warm machine never
# rebuilds it and a changed list never reuses a stale one. A cold build takes
# about 4 minutes and 1.9 GB. Needs root (mmdebstrap is installed if missing).
set -eu

suite=trixie
mirror=${ANTIDRIFT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Compositors and their tools (sway: foot, swaymsg, grim, wlrctl, wtype;
# KWin: a GTK4 window from python3-gi; GNOME Shell: gjs, gnome-extensions),
# software rendering, the Plasma pieces the panel applet needs, and
# gnome-pomodoro and dbus-test-tool, the peers make bench times GetAll against.
packages="sway foot grim wlrctl wtype kwin-wayland gnome-shell mutter-common-bin dbus dbus-daemon
gjs libglib2.0-bin python3-gi gir1.2-gtk-4.0 libgl1-mesa-dri libegl-mesa0 wayland-utils
dconf-gsettings-backend plasma-workspace kpackagetool6 qml6-module-org-kde-kirigami mako-notifier
libnotify-bin fonts-dejavu-core xwayland qt6-svg-plugins gnome-shell-pomodoro dbus-tests"

# The key's text is the suite and the sorted package list, as it always was,
# so a warm cache stays warm.
. "$(dirname "$0")/rootfs-cache.sh"
rootfs_cached "rootfs-$suite" "the Wayland test rootfs" \
	"$suite $(echo $packages | tr ' ' '\n' | sort | tr '\n' ' ')" "${1:-}"
mmdebstrap --quiet --variant=apt --include="$(echo $packages | tr ' ' ',')" "$suite" "$tmp" "$mirror" >&2
rootfs_done
