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

cache=${ANTIDRIFT_ROOTFS_CACHE:-/var/cache/antidrift}
key=$(printf '%s %s\n' "$suite" "$(echo $packages | tr ' ' '\n' | sort | tr '\n' ' ')" | sha256sum | cut -c1-12)
root=$cache/rootfs-$suite-$key
ready=$root/.antidrift-ready

if [ -e "$ready" ]; then
	echo "$root"
	exit 0
fi
if [ "${1:-}" = --path ]; then
	echo "the Wayland test rootfs is not built: run scripts/desktop-rootfs.sh as root (about 4 minutes)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "building the Wayland test rootfs needs root (mmdebstrap, chroot)" >&2
	exit 1
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi
mkdir -p "$cache"
tmp=$root.partial
rm -rf "$tmp"
echo "building the Wayland test rootfs in $root (about 4 minutes, once)" >&2
start=$(date +%s)
mmdebstrap --quiet --variant=apt --include="$(echo $packages | tr ' ' ',')" "$suite" "$tmp" "$mirror" >&2
# Machine identity the session bus and GLib expect.
[ -s "$tmp/etc/machine-id" ] || cat /proc/sys/kernel/random/uuid | tr -d - > "$tmp/etc/machine-id"
rm -rf "$root"
mv "$tmp" "$root"
touch "$ready"
# Roots built for an older package list are never used again.
for old in "$cache"/rootfs-$suite-*; do
	[ "$old" = "$root" ] || rm -rf "$old"
done
echo "built in $(( $(date +%s) - start )) s" >&2
echo "$root"
