#!/bin/sh
# Packs antidrift's browser extension (dist/webextension, one Manifest V3
# source for both browsers) as the browsers take it: `make package-panels`.
#
# Usage: scripts/pack-webextension.sh OUTDIR
#
#   OUTDIR/antidrift-browser.xpi   Firefox (about:addons, "Install Add-on From
#                                  File"; unsigned, so Firefox ESR, Developer
#                                  Edition or Nightly with
#                                  xpinstall.signatures.required = false, until
#                                  addons.mozilla.org signs it)
#   OUTDIR/antidrift-browser.zip   Chromium (unzip, then chrome://extensions,
#                                  "Load unpacked"; or the Chrome Web Store)
#
# Both are the same files: the manifest's key fixes Chromium's extension id
# (fopagejekiabnkobjkkggigkgddpcehh, named in the native host's manifest),
# browser_specific_settings.gecko.id Firefox's (browser@antidrift.github.io).
# Entries are sorted and dated SOURCE_DATE_EPOCH, so the same sources give
# the same bytes. Needs zip.
set -eu
umask 022
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: pack-webextension.sh OUTDIR}
command -v zip >/dev/null 2>&1 || { echo "pack-webextension: zip is missing (apt install zip)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/webextension
rm -rf "$stage"
mkdir -p "$stage"
for f in "$root"/dist/webextension/*; do
	[ -f "$f" ] && install -m 0644 "$f" "$stage/"
done
find "$stage" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-946684800}" {} +
for pkg in antidrift-browser.xpi antidrift-browser.zip; do
	rm -f "$out/$pkg"
	(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | zip -q -X -D "$out/$pkg" -@)
done
