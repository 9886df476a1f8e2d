#!/bin/sh
# Usage: scripts/install-missing.sh WHO TOOL:PACKAGE...
#
# Installs the Debian packages that provide the missing TOOLs: with apt-get
# when run as root, else prints the apt-get line for them and exits 1. WHO
# names what needs them ("the demo", "end-to-end tests"). Exits 0 when
# every tool is there (or was just installed).
set -eu

who=$1
shift
missing=""
for pair in "$@"; do
	tool=${pair%%:*}
	pkg=${pair#*:}
	if ! command -v "$tool" >/dev/null 2>&1; then
		case " $missing " in *" $pkg "*) ;; *) missing="$missing $pkg" ;; esac
	fi
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing what $who needs:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
	exit 0
fi
echo "$who needs:$missing" >&2
echo "install with: sudo apt-get install -y$missing  (Debian, Ubuntu; README.md lists Fedora and Arch names)" >&2
exit 1
