#!/bin/sh
# Builds, once, the Debian 13 (trixie) root filesystem the packaging tests
# boot a real systemd in: systemd as PID 1 of fresh namespaces, a lingering
# user 1000 whose user manager and session bus (dbus-daemon, or dbus-broker
# when a test enables it) run antidrift as a package installs it. The tests
# boot it on a private overlay of this tree (internal/testsupport/testenv/systemd.go), so
# the cached tree itself is never changed.
#
#   systemd-rootfs.sh          build it unless cached; print its path
#   systemd-rootfs.sh --path   print its path if it is built, else exit 1
#
# It is kept apart from the desktop rootfs (scripts/desktop-rootfs.sh) on
# purpose: a few packages, a minimal variant, and a cache entry of its own,
# $ANTIDRIFT_ROOTFS_CACHE/systemd-trixie-<key> (default /var/cache/antidrift),
# keyed by the package list and the setup below. A cold build takes 140 MB
# of disk and a few minutes (5.7 on a busy 2-core machine, next to the
# desktop rootfs's build). Needs root (mmdebstrap is installed if missing).
set -eu

suite=trixie
# A user manager with its session bus (dbus-user-session: the bus as a user
# unit, the way desktops run it), logind for lingering, dbus-broker for the
# Fedora/Arch-style bus, and apt to install the package under test.
packages="systemd systemd-sysv dbus dbus-user-session libpam-systemd dbus-broker apt"
# What the customize hook does; part of the key, so a change rebuilds.
setup='user=alice uid=1000 linger persistent-journal v1'

. "$(dirname "$0")/rootfs-cache.sh"
rootfs_cached "systemd-$suite" "the systemd test rootfs" \
	"$suite $(echo $packages | tr ' ' '\n' | sort | tr '\n' ' ') $setup" "${1:-}"
mirror=$(debian_mirror) || exit 1
# The user: uid 1000 (written directly: the minimal variant has no useradd),
# lingering, so logind starts user@1000.service at boot
# without a login. The journal persistent: journald splits out per-user
# journals (what `journalctl --user` reads) only on persistent storage.
mmdebstrap --quiet --variant=apt --include="$(echo $packages | tr ' ' ',')" \
	--customize-hook='echo "alice:x:1000:1000:alice:/home/alice:/bin/sh" >> "$1/etc/passwd"' \
	--customize-hook='echo "alice:x:1000:" >> "$1/etc/group" && echo "alice:!:20000::::::" >> "$1/etc/shadow"' \
	--customize-hook='install -d -m 0700 -o 1000 -g 1000 "$1/home/alice"' \
	--customize-hook='mkdir -p "$1/var/lib/systemd/linger" && touch "$1/var/lib/systemd/linger/alice"' \
	--customize-hook='mkdir -p "$1/var/log/journal"' \
	"$suite" "$tmp" "$mirror" >&2
rootfs_done
