#!/bin/sh
# Packs the panels as their desktops' stores and tools take them:
# `make package-panels`.
#
# Usage: scripts/pack-panels.sh OUTDIR
#
#   OUTDIR/antidrift@antidrift.github.io.shell-extension.zip
#       the GNOME Shell extension as `gnome-extensions pack` makes it: its
#       code and the interface XML its proxy reads at the top, the settings
#       schema as source only (schemas/; gnome-extensions install and
#       extensions.gnome.org compile it), and the translations compiled
#       (locale/LANG/LC_MESSAGES/antidrift.mo, from dist/gnome-shell/po).
#   OUTDIR/org.antidrift.panel.plasmoid
#       the Plasma applet for kpackagetool6 -i and the KDE Store: a zip of
#       the package with metadata.json at the top and its translations in
#       contents/locale (from dist/plasma/po).
#
# The trees they are zipped from stay in OUTDIR/panels/, where make install
# copies them from. Entries are sorted and dated SOURCE_DATE_EPOCH (default:
# 2000-01-01) so the same sources give the same bytes. Needs zip and msgfmt.
set -eu
umask 022

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: pack-panels.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ext=antidrift@antidrift.github.io
applet=org.antidrift.panel
for tool in zip msgfmt; do
	command -v $tool >/dev/null 2>&1 || { echo "pack-panels: $tool is missing (apt install zip gettext)" >&2; exit 1; }
done

stage=$out/panels
rm -rf "$stage"
mkdir -p "$stage/$ext/schemas" "$stage/$applet"

# compile_po PODIR DOMAIN LOCALEDIR: each PODIR/LANG.po to
# LOCALEDIR/LANG/LC_MESSAGES/DOMAIN.mo, checked (msgfmt -c) on the way.
compile_po() {
	for po in "$1"/*.po; do
		[ -e "$po" ] || continue
		lang=$(basename "$po" .po)
		mkdir -p "$3/$lang/LC_MESSAGES"
		msgfmt -c -o "$3/$lang/LC_MESSAGES/$2.mo" "$po"
	done
}

# zip_tree DIR ZIP: DIR's files (no directory entries, as gnome-extensions
# pack writes them), sorted, with fixed dates and no extra attributes.
zip_tree() {
	find "$1" -exec touch -h -d "@${SOURCE_DATE_EPOCH:-946684800}" {} +
	rm -f "$2"
	(cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | zip -q -X -D "$2" -@)
}

src=$root/dist/gnome-shell/$ext
for f in "$src"/*; do
	[ -f "$f" ] && install -m 0644 "$f" "$stage/$ext/"
done
install -m 0644 "$src"/schemas/*.gschema.xml "$stage/$ext/schemas/"
compile_po "$root/dist/gnome-shell/po" antidrift "$stage/$ext/locale"
zip_tree "$stage/$ext" "$out/$ext.shell-extension.zip"

src=$root/dist/plasma/$applet
(cd "$src" && find . -type f) | while read -r f; do
	install -D -m 0644 "$src/$f" "$stage/$applet/$f"
done
compile_po "$root/dist/plasma/po" "plasma_applet_$applet" "$stage/$applet/contents/locale"
zip_tree "$stage/$applet" "$out/$applet.plasmoid"
