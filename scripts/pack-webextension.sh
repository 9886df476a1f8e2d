#!/bin/sh
# Packs antidrift's browser extension (dist/webextension, one Manifest V3
# source for both browsers) as the browsers take it: `make package-panels`.
#
# Usage: scripts/pack-webextension.sh OUTDIR
#
#   OUTDIR/antidrift-browser/      Chromium's unpacked extension: the folder
#                                  chrome://extensions, "Load unpacked" takes
#                                  (make install copies it to
#                                  share/antidrift/browser/)
#   OUTDIR/antidrift-browser.zip   the same files zipped
#   OUTDIR/antidrift-browser.xpi   Firefox (about:addons, "Install Add-on From
#                                  File"; unsigned until addons.mozilla.org
#                                  signs it, so Firefox ESR, Developer Edition
#                                  or Nightly with xpinstall.signatures.required
#                                  = false, or a temporary load in
#                                  about:debugging: docs/browsers.md)
#
# The files are the same but for one line of the manifest: the .xpi's
# background has only "scripts" (Firefox runs background.js as an event
# page and ignores "service_worker", which addons.mozilla.org's linter
# warns about), Chromium's has both (Chromium runs the service worker and
# ignores "scripts"). The manifest's key fixes Chromium's extension id
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

# zip_tree DIR ZIP: DIR's files, sorted, dated SOURCE_DATE_EPOCH, without
# directory entries or extra attributes.
zip_tree() {
	find "$1" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-946684800}" {} +
	rm -f "$2"
	(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | zip -q -X -D "$2" -@)
}

stage=$out/antidrift-browser
firefox=$out/.antidrift-browser-firefox
rm -rf "$stage" "$firefox" "$out/webextension"
mkdir -p "$stage"
for f in "$root"/dist/webextension/*; do
	[ -f "$f" ] && install -m 0644 "$f" "$stage/"
done
zip_tree "$stage" "$out/antidrift-browser.zip"

# Firefox's manifest: the background line without "service_worker".
cp -R "$stage" "$firefox"
bg='"background": { "service_worker": "background.js", "scripts": \["background.js"\] },'
grep -q "^  $bg\$" "$stage/manifest.json" || {
	echo "pack-webextension: manifest.json's background line is not $bg" >&2
	exit 1
}
sed -i "s|^  $bg\$|  \"background\": { \"scripts\": [\"background.js\"] },|" "$firefox/manifest.json"
if grep -q service_worker "$firefox/manifest.json"; then
	echo "pack-webextension: the .xpi's manifest still names a service worker" >&2
	exit 1
fi
zip_tree "$firefox" "$out/antidrift-browser.xpi"
rm -rf "$firefox"
