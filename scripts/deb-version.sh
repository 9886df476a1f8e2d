#!/bin/sh
# Prints the Debian package version for the git version $1 (git describe
# --tags --always --dirty, as the Makefile's VERSION): tag v1.2.0 is 1.2.0,
# five commits later 1.2.0+5.gabc1234, a dirty tree adds .dirty; with no tag
# yet, the commit count orders snapshots: 0~412.gabc1234. A native package's
# version may not contain '-', and each must sort above the one before.
set -eu
v=${1:?usage: deb-version.sh GIT-DESCRIBE}
case $v in
v[0-9]* | [0-9]*.*)
	echo "${v#v}" | sed -e 's/-/+/' -e 's/-/./g' ;;
*)
	echo "0~$(git rev-list --count HEAD 2>/dev/null || echo 0).g$v" | sed -e 's/-/./g' ;;
esac
