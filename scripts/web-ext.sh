#!/bin/sh
# Installs, once, Mozilla's web-ext from npm into a cache outside the
# checkout, and prints the path of its command. `web-ext lint` runs
# addons-linter, the checks addons.mozilla.org runs on every upload: make
# test (dist.TestWebExtLint) and make lint run it on the packed .xpi.
#
#   web-ext.sh          install it unless cached; print the command's path
#   web-ext.sh --path   print the command's path if it is installed, else exit 1
#
# The cache is $ANTIDRIFT_WEBEXT_CACHE, default
# ${XDG_CACHE_HOME:-~/.cache}/antidrift/web-ext-VERSION (where make lint
# keeps ESLint too). Needs npm (Debian: apt-get install npm) and the
# network the first time.
set -eu

version=10.7.0
cache=${ANTIDRIFT_WEBEXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/antidrift/web-ext-$version}
bin=$cache/node_modules/.bin/web-ext

if [ -x "$bin" ] && [ -e "$cache/.antidrift-ready" ]; then
	echo "$bin"
	exit 0
fi
if [ "${1:-}" = --path ]; then
	echo "web-ext (npm) is not installed: run scripts/web-ext.sh (installs web-ext $version into $cache)" >&2
	exit 1
fi
command -v npm >/dev/null 2>&1 || {
	echo "web-ext.sh: npm is missing (apt-get install npm)" >&2
	exit 1
}
mkdir -p "$cache"
npm install --prefix "$cache" --no-audit --no-fund --silent "web-ext@$version" >&2
"$bin" --version >/dev/null
touch "$cache/.antidrift-ready"
echo "$bin"
