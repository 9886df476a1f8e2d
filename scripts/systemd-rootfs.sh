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
mirror=${ANTIDRIFT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# A user manager with its session bus (dbus-user-session: the bus as a user
# unit, the way desktops run it), logind for lingering, dbus-broker for the
# Fedora/Arch-style bus, and apt to install the package under test.
packages="systemd systemd-sysv dbus dbus-user-session libpam-systemd dbus-broker apt"
# What the customize hook does; part of the key, so a change rebuilds.
setup='user=alice uid=1000 linger persistent-journal v1'

cache=${ANTIDRIFT_ROOTFS_CACHE:-/var/cache/antidrift}
key=$(printf '%s %s %s\n' "$suite" "$(echo $packages | tr ' ' '\n' | sort | tr '\n' ' ')" "$setup" | sha256sum | cut -c1-12)
root=$cache/systemd-$suite-$key
ready=$root/.antidrift-ready

if [ -e "$ready" ]; then
	echo "$root"
	exit 0
fi
if [ "${1:-}" = --path ]; then
	echo "the systemd test rootfs is not built: run scripts/systemd-rootfs.sh as root (a few minutes)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "building the systemd test rootfs needs root (mmdebstrap)" >&2
	exit 1
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi
mkdir -p "$cache"
tmp=$root.partial
rm -rf "$tmp"
echo "building the systemd test rootfs in $root (a few minutes, once)" >&2
start=$(date +%s)
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
[ -s "$tmp/etc/machine-id" ] || cat /proc/sys/kernel/random/uuid | tr -d - > "$tmp/etc/machine-id"
rm -rf "$root"
mv "$tmp" "$root"
touch "$ready"
# Trees built for an older list or setup are never used again. Only this
# script's own entries: the desktop rootfs is not ours to remove.
for old in "$cache"/systemd-$suite-*; do
	[ "$old" = "$root" ] || rm -rf "$old"
done
echo "built in $(( $(date +%s) - start )) s, $(du -sh "$root" | cut -f1)" >&2
echo "$root"
