#!/bin/sh
# Builds, once per Debian suite, the root filesystem that the desktop
# end-to-end tests run real compositors and window managers in. The host runs
# Debian 12, whose desktops are older than what people run; these run
# headless from a rootfs instead:
#
#   trixie (Debian 13, stable): sway 1.10, KWin 6.3, GNOME Shell 48, and the
#           X11 window managers xfwm4 4.20, marco and muffin (under the host's Xvfb)
#   forky  (Debian 14, testing): sway 1.12, labwc 0.20, KWin 6.7, GNOME Shell 50
#   sid    (unstable): GNOME Shell 51, and Firefox (159) with
#           xdg-native-messaging-proxy for the Flatpak native-messaging test
#
# The tests enter one with unshare -m + chroot (internal/testsupport/testenv/rootfs.go).
#
#   desktop-rootfs.sh [SUITE]          build it unless cached; print its path
#   desktop-rootfs.sh [SUITE] --path   print its path if it is built, else exit 1
#   desktop-rootfs.sh --suites         print the suites, one a line
#
# SUITE defaults to trixie. The cache lives outside the checkout
# ($ANTIDRIFT_ROOTFS_CACHE, default /var/cache/antidrift), one entry per
# suite, keyed by the suite and its package list, so a warm machine never
# rebuilds one and a changed list never reuses a stale one. A cold build
# takes a few minutes and about 2 GB each. Needs root (mmdebstrap is
# installed if missing).
set -eu

suites="trixie forky sid"
if [ "${1:-}" = --suites ]; then
	echo $suites | tr ' ' '\n'
	exit 0
fi
suite=trixie
case "${1:-}" in
"" | --path) ;;
*) suite=$1; shift ;;
esac

# What every suite's GNOME Shell needs: gjs, gnome-extensions, a GTK4 window
# from python3-gi, gdbus, software rendering, fonts.
gnome="gnome-shell mutter-common-bin dbus dbus-daemon gjs libglib2.0-bin python3-gi gir1.2-gtk-4.0
libgl1-mesa-dri libegl-mesa0 wayland-utils dconf-gsettings-backend libnotify-bin fonts-dejavu-core xwayland"
# The wlroots compositors and their tools (foot, swaymsg, grim, wlrctl,
# wtype), KWin, and the Plasma pieces the panel applet needs: plasma-workspace
# alone, as a person on a Plasma desktop has it (never plasma5support by hand:
# the applet must do without it where Plasma does).
wayland="sway foot grim wlrctl wtype kwin-wayland plasma-workspace kpackagetool6
qml6-module-org-kde-kirigami mako-notifier qt6-svg-plugins"
aptopt=
case $suite in
trixie)
	# gnome-shell-pomodoro and dbus-test-tool are the peers make bench times
	# GetAll against; xfwm4, marco and muffin are the window managers of
	# XFCE, MATE and Cinnamon, run under the host's Xvfb, with the settings
	# schemas marco and muffin refuse to start without (their desktops'
	# settings daemons ship them); dunst 1.12, whose pause levels let
	# antidrift's nudges through a quiet session (the host's may be 1.9).
	packages="$gnome $wayland gnome-shell-pomodoro dbus-tests xfwm4 marco mate-settings-daemon-common
muffin cinnamon-settings-daemon dunst" ;;
forky)
	packages="$gnome $wayland labwc" ;;
sid)
	# Firefox 157+ reaches a host-installed native host through
	# xdg-native-messaging-proxy (docs/browsers.md, Flatpak): unstable ships both.
	packages="$gnome firefox xdg-native-messaging-proxy" ;;
*)
	echo "desktop-rootfs.sh: unknown suite $suite (one of: $suites)" >&2
	exit 2 ;;
esac
case $suite in
trixie) ;;
# The registry's testing and unstable Release files are past their
# Valid-Until date; what they list is still what those suites ship.
*) aptopt='Acquire::Check-Valid-Until "false"' ;;
esac

# The key's text is the suite and the sorted package list, as it always was,
# so a warm cache stays warm.
. "$(dirname "$0")/rootfs-cache.sh"
rootfs_args=$suite
rootfs_cached "rootfs-$suite" "the $suite desktop test rootfs" \
	"$suite $(echo $packages | tr ' ' '\n' | sort | tr '\n' ' ')" "${1:-}"
mirror=$(debian_mirror) || exit 1
mmdebstrap --quiet --variant=apt ${aptopt:+--aptopt="$aptopt"} \
	--include="$(echo $packages | tr ' ' ',')" "$suite" "$tmp" "$mirror" >&2
rootfs_done
