# Sourced by desktop-rootfs.sh and systemd-rootfs.sh: the cache both keep
# their Debian root filesystems in, outside the checkout
# ($ANTIDRIFT_ROOTFS_CACHE, default /var/cache/antidrift), one entry per
# kind, keyed by what goes into it, so a warm machine never rebuilds one and
# a changed list never reuses a stale one.

# rootfs_cached KIND WHAT KEYTEXT [--path]: sets $root (KIND-<sha of
# KEYTEXT> in the cache) and $tmp beside it. When $root is built it prints
# it and exits 0; with --path, or without root, it says why it is not and
# exits 1. Otherwise it returns, mmdebstrap installed and $tmp empty, for
# the caller to build $tmp and call rootfs_done. WHAT names the tree in
# messages; $rootfs_args, when set, is what to run the caller with to build it.
rootfs_cached() {
	kind=$1 what=$2
	cache=${ANTIDRIFT_ROOTFS_CACHE:-/var/cache/antidrift}
	root=$cache/$kind-$(printf '%s\n' "$3" | sha256sum | cut -c1-12)
	if [ -e "$root/.antidrift-ready" ]; then
		echo "$root"
		exit 0
	fi
	if [ "${4:-}" = --path ]; then
		echo "$what is not built: run $0${rootfs_args:+ $rootfs_args} as root" >&2
		exit 1
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "building $what needs root (mmdebstrap)" >&2
		exit 1
	fi
	if ! command -v mmdebstrap >/dev/null 2>&1; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
	fi
	mkdir -p "$cache"
	tmp=$root.partial
	rm -rf "$tmp"
	echo "building $what in $root (a few minutes, once)" >&2
	rootfs_start=$(date +%s)
}

# rootfs_done: gives the built $tmp the machine identity the session bus
# and GLib expect, puts it in $root's place, marks it ready, removes the
# entries of the same kind built for an older key (never another kind's),
# and prints $root.
rootfs_done() {
	[ -s "$tmp/etc/machine-id" ] || cat /proc/sys/kernel/random/uuid | tr -d - > "$tmp/etc/machine-id"
	rm -rf "$root"
	mv "$tmp" "$root"
	touch "$root/.antidrift-ready"
	for old in "$cache/$kind"-*; do
		[ "$old" = "$root" ] || rm -rf "$old"
	done
	echo "built in $(( $(date +%s) - rootfs_start )) s, $(du -sh "$root" | cut -f1)" >&2
	echo "$root"
}

# debian_mirror prints the Debian mirror to build from: $ANTIDRIFT_DEBIAN_MIRROR
# when set, else the one the host's own apt uses (the URIs of its deb822
# .sources files, then its one-line sources.list entries; the first whose path
# ends in /debian), so a machine behind a local mirror or a caching proxy builds
# the test systems from it. The project names no mirror of its own: on a host
# whose apt has no Debian mirror (Ubuntu, say) it says to set the variable.
debian_mirror() {
	if [ -n "${ANTIDRIFT_DEBIAN_MIRROR:-}" ]; then
		echo "$ANTIDRIFT_DEBIAN_MIRROR"
		return 0
	fi
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
		/^[ \t]*#/ { next }
		tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
	[ -n "$m" ] || m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '
		$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\// && $i ~ /\/debian\/?$/) { print $i; exit } }')
	if [ -z "$m" ]; then
		echo "no Debian mirror in this host's apt sources (/etc/apt/sources.list.d/*.sources, /etc/apt/sources.list): set ANTIDRIFT_DEBIAN_MIRROR to one" >&2
		return 1
	fi
	echo "$m"
}
