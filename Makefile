# antidrift — see README.md.
GO      ?= go
PREFIX  ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# The commands to build: the daemon and the CLI. Built without cgo (every
# dependency is pure Go): a static binary starts faster under bus activation.
CMDS := antidriftd antidrift antidrift-native-host
# Where build puts them (and install, install-user and demo take them from).
BUILDDIR ?= bin

# Where `make install` puts things, under $(DESTDIR) (for packagers: the
# paths baked into the installed files never contain DESTDIR).
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
DBUSDIR     ?= $(DATADIR)/dbus-1
MANDIR      ?= $(DATADIR)/man

# Where `make install-user` puts things: the XDG user directories, which the
# user manager, the session bus and the shells search. As the XDG spec says,
# an empty or relative XDG_CONFIG_HOME / XDG_DATA_HOME means the default.
USER_BINDIR ?= $(HOME)/.local/bin
abs_or       = $(if $(filter /%,$(1)),$(1),$(2))
USER_CONFIG := $(call abs_or,$(XDG_CONFIG_HOME),$(HOME)/.config)
USER_DATA   := $(call abs_or,$(XDG_DATA_HOME),$(HOME)/.local/share)

# The manual pages, section 1: the CLI and the daemon (a user program,
# run by the user manager). Installed as they are; packagers compress them
# (debhelper's dh_compress does).
MAN_PAGES := dist/man/antidrift.1 dist/man/antidriftd.1 dist/man/antidrift-native-host.1

# Shell completions.
COMPLETION_BASH := dist/completions/antidrift.bash
COMPLETION_ZSH  := dist/completions/_antidrift
COMPLETION_FISH := dist/completions/antidrift.fish

# The GNOME Shell extension, the daemon's eyes and hands on GNOME (Mutter
# lets no other program see or act on windows). GNOME Shell finds it by
# its uuid under share/gnome-shell/extensions, at login.
GNOME_EXT        := antidrift@antidrift.github.io
GNOME_EXT_DIR    := dist/gnome-shell/$(GNOME_EXT)
GSCHEMA          := org.gnome.shell.extensions.antidrift.gschema.xml
# Packagers: GSCHEMADIR=$(DATADIR)/glib-2.0/schemas installs the extension's
# settings schema there, uncompiled, for the system's trigger to compile
# (see install_ext). Empty: compiled into the extension's own schemas/.
GSCHEMADIR       ?=

# The browser extension's native messaging host manifests (docs/browsers.md):
# where Firefox and Chromium look for them system-wide (fixed paths, whatever
# the PREFIX) and in the user's home.
NMH_NAME          := org.antidrift.native_host.json
MOZILLA_NMH_DIR   ?= /usr/lib/mozilla/native-messaging-hosts
CHROMIUM_NMH_DIR  ?= /etc/chromium/native-messaging-hosts
USER_MOZILLA_NMH  := $(HOME)/.mozilla/native-messaging-hosts
USER_CHROMIUM_NMH  = $(USER_CONFIG)/chromium/NativeMessagingHosts

# The Plasma 6 applet.
PLASMOID       := org.antidrift.panel
PLASMOID_DIR   := dist/plasma/$(PLASMOID)

# Both as their stores and tools take them (make package-panels): the
# extension's zip for gnome-extensions install and extensions.gnome.org,
# the .plasmoid for kpackagetool6 -i and the KDE Store. install and
# install-user copy the trees these are zipped from (translations included).
EXT_ZIP      := $(BUILDDIR)/$(GNOME_EXT).shell-extension.zip
PLASMOID_PKG := $(BUILDDIR)/$(PLASMOID).plasmoid
PANELS_STAGE := $(BUILDDIR)/panels

# The browser extension as make package-panels packs it
# (scripts/pack-webextension.sh): the unpacked folder Chromium's "Load
# unpacked" takes and the .xpi for Firefox. install and install-user put
# them in share/antidrift: browser/ and antidrift-browser.xpi.
BROWSER_EXT := $(BUILDDIR)/antidrift-browser
BROWSER_XPI := $(BUILDDIR)/antidrift-browser.xpi

.PHONY: all build check-go test vet run clean test-deps demo soak bench lint judge-eval pot \
	package-panels install uninstall install-user uninstall-user package

all: build

# The oldest Go that builds antidrift (go.mod's go line).
GO_MIN := 1.24

build: check-go
	@for c in $(CMDS); do \
		echo CGO_ENABLED=0 $(GO) build -ldflags \"$(LDFLAGS)\" -o $(BUILDDIR)/$$c ./cmd/$$c; \
		CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BUILDDIR)/$$c ./cmd/$$c || exit 1; \
	done

# check-go says which Go is needed, and where to get it, before a build
# fails on an old one with errors about the language.
check-go:
	@v=$$($(GO) env GOVERSION 2>/dev/null) || { \
		echo "make: $(GO) not found. antidrift builds with Go $(GO_MIN) or later:" >&2; \
		echo "  Debian 13, Ubuntu 25.04+: apt install golang-go; Fedora: dnf install golang; Arch: pacman -S go;" >&2; \
		echo "  elsewhere (Debian 12's golang-go is 1.19): https://go.dev/dl/" >&2; exit 1; }; \
	minor=$$(echo "$$v" | sed -n 's/^go1\.\([0-9]*\).*/\1/p'); \
	if [ -n "$$minor" ] && [ "$$minor" -lt $(word 2,$(subst ., ,$(GO_MIN))) ]; then \
		echo "make: $(GO) is $$v; antidrift needs Go $(GO_MIN) or later: https://go.dev/dl/ (README.md, Requirements)" >&2; exit 1; \
	fi

# The test command CI runs (.ci/run). cmd/antidriftd alone takes 32 of the
# 60 minutes a package may (measured warm). It first makes sure the desktop
# pieces the end-to-end tests drive are installed. Cold, that is about 30
# minutes and 6 GB once (a desktop rootfs per Debian suite, built while
# llama-server compiles; cached in /var/cache/antidrift), then the tests:
# docs/development.md.
test: test-deps
	$(GO) test -race -count=1 -timeout 60m ./...

test-deps:
	@./scripts/ensure-test-deps.sh

# The figures of BENCHMARKS.md, measured again (about 13 minutes; it rewrites
# the generated section of that file).
bench: test-deps
	$(GO) run ./bench/cmd/benchreport

# The LLM judge's decisions against the hand-labelled windows of
# testdata/judge-eval.jsonl: accuracy, false-drift rate, p50/p99 latency.
# Point it at any OpenAI-compatible server (not part of make test):
#   make judge-eval ENDPOINT=http://127.0.0.1:11434/v1 MODEL=qwen2.5:3b [ALLOW_REMOTE=1] [VERBOSE=1]
judge-eval:
	@test -n "$(ENDPOINT)" || { echo "usage: make judge-eval ENDPOINT=http://127.0.0.1:8080/v1 [MODEL=name] [ALLOW_REMOTE=1] [VERBOSE=1]" >&2; exit 2; }
	$(GO) run ./bench/cmd/judgeeval -endpoint "$(ENDPOINT)" -model "$(MODEL)" $(if $(ALLOW_REMOTE),-allow-remote) $(if $(VERBOSE),-v)

# The reliability suites of make test, ten times bigger (ANTIDRIFT_SOAK=1):
# 200 crash rounds, 100k fuzzed calls, 20k locked-level walks. Then 20
# minutes of sway + Chromium with a ticking title, focus every 0.3 s: CPU per
# event must stay flat (SOAK_MINUTES=3 for a short look; the per-minute
# table goes to soak-focus.txt).
SOAK_MINUTES ?= 20
soak: test-deps
	ANTIDRIFT_SOAK=1 ANTIDRIFT_SOAK_MINUTES=$(SOAK_MINUTES) ANTIDRIFT_SOAK_OUT=$(CURDIR)/soak-focus.txt \
		$(GO) test -count=1 -timeout $$(( $(SOAK_MINUTES) + 15 ))m -run 'TestSoakFocusCost' -v ./bench/
	ANTIDRIFT_SOAK=1 $(GO) test -race -count=1 -timeout 60m -run 'TestCrashAnywhere|TestDamagedFiles|TestBusFuzz|TestLockedHasNoWayOut' ./cmd/antidriftd/
	$(GO) test -race -count=200 -timeout 60m -run 'TestFullDiskKeepsSummariesPending' ./cmd/antidriftd/

vet:
	$(GO) vet ./...

# ESLint on the GNOME Shell extension. GNOME Shell's own ESLint rules live in
# its repository, not on npm, so dist/gnome-shell/eslint.config.mjs keeps
# the subset that catches bugs; ESLint itself comes from npm into a cache.
ESLINT_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/antidrift/eslint
lint:
	@test -x $(ESLINT_CACHE)/node_modules/.bin/eslint || \
		npm install --prefix $(ESLINT_CACHE) --no-audit --no-fund --silent eslint@9
	cd dist/gnome-shell && $(ESLINT_CACHE)/node_modules/.bin/eslint -c eslint.config.mjs antidrift@antidrift.github.io
	@# The browser extension as addons.mozilla.org checks it (scripts/web-ext.sh).
	./scripts/pack-webextension.sh $(BUILDDIR)
	NO_UPDATE_NOTIFIER=1 "$$(./scripts/web-ext.sh)" lint --no-config-discovery --source-dir $(BUILDDIR)/antidrift-browser.xpi

package-panels:
	./scripts/pack-panels.sh $(BUILDDIR)
	./scripts/pack-webextension.sh $(BUILDDIR)

# The translation templates, extracted from the sources: the extension's
# (gettext domain antidrift) and the applet's (plasma_applet_org.antidrift.panel,
# i18n() in QML). A translator copies one to LANG.po beside it; update an
# existing one with msgmerge -U LANG.po TEMPLATE.pot.
pot:
	xgettext --from-code=UTF-8 --language=JavaScript --keyword=_ --keyword=N_ --keyword=ngettext:1,2 \
		--package-name=antidrift --msgid-bugs-address=https://github.com/antidrift/antidrift/issues \
		--add-comments=Translators --sort-by-file -o dist/gnome-shell/po/antidrift.pot \
		$(sort $(wildcard $(GNOME_EXT_DIR)/*.js $(GNOME_EXT_DIR)/*.mjs))
	xgettext --from-code=UTF-8 --language=JavaScript --keyword=i18n --keyword=i18nc:1c,2 --keyword=i18np:1,2 --keyword=N_ \
		--package-name=antidrift --msgid-bugs-address=https://github.com/antidrift/antidrift/issues \
		--add-comments=Translators --sort-by-file -o dist/plasma/po/plasma_applet_$(PLASMOID).pot \
		$(sort $(wildcard $(PLASMOID_DIR)/contents/ui/*.qml $(PLASMOID_DIR)/contents/ui/*.mjs))

# Run the daemon in the foreground on the current session bus. Without a
# desktop session: dbus-run-session -- make run
run: build
	$(BUILDDIR)/antidriftd

# A guided, headless tour: a private bus, X server, window manager and
# notification daemon in a temp dir, and a short blocking session driven by
# the CLI. As root it apt-installs the few tools it drives (not the test
# dependencies); beyond that it touches nothing outside its temp dir.
demo: build
	./scripts/demo.sh $(BUILDDIR)

clean:
	rm -rf bin

# --- Installing ---------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]   system-wide (as root)
# make install-user                            into ~/.local and ~/.config
# Both build first; under sudo, where go is often not on PATH:
#   sudo env PATH="$PATH" make install

# fill_in writes $(1) to $(2) with @BINDIR@ replaced by $(3), mode 0644.
# install_tw_hook puts the Taskwarrior on-modify hook into $(1)/antidrift/taskwarrior
# (executable), naming the CLI in bindir $(2) and, in its comment, the data
# dir it is in once installed, $(3); a person links it into their own hooks
# directory (docs/tasks.md).
TW_HOOK := antidrift/taskwarrior/on-modify.antidrift
define install_tw_hook
	install -d -m 0755 $(1)/antidrift/taskwarrior
	sed -e 's|@BINDIR@|$(2)|g' -e 's|@DATADIR@|$(3)|g' dist/taskwarrior/on-modify.antidrift.in > $(1)/$(TW_HOOK).tmp
	chmod 0755 $(1)/$(TW_HOOK).tmp
	mv -f $(1)/$(TW_HOOK).tmp $(1)/$(TW_HOOK)
endef

define fill_in
	install -d -m 0755 $(dir $(2))
	sed -e 's|@BINDIR@|$(3)|g' $(1) > $(2).tmp
	chmod 0644 $(2).tmp
	mv -f $(2).tmp $(2)
endef

# install_ext puts the extension into the extensions directory $(1), as
# packed, with its settings schema compiled (GNOME Shell reads only the
# compiled form; gnome-extensions install compiles it the same way).
# With $(2), a system's schema directory, the schema goes there instead,
# uncompiled: the distribution's package trigger (dpkg's, rpm's, pacman's
# glib2 hook) compiles that directory, and a compiled file in the package
# would go stale.
define install_ext
	rm -rf $(1)/$(GNOME_EXT)
	install -d -m 0755 $(1)
	cp -R $(PANELS_STAGE)/$(GNOME_EXT) $(1)/$(GNOME_EXT)
	$(if $(2),install -D -m 0644 $(1)/$(GNOME_EXT)/schemas/$(GSCHEMA) $(2)/$(GSCHEMA) && rm -rf $(1)/$(GNOME_EXT)/schemas,\
	if command -v glib-compile-schemas >/dev/null 2>&1; then glib-compile-schemas $(1)/$(GNOME_EXT)/schemas; \
	else echo "glib-compile-schemas (libglib2.0-bin) is missing: the GNOME indicator needs $(1)/$(GNOME_EXT)/schemas compiled" >&2; fi)
endef

# uninstall_ext removes the extension's directory (named by its uuid:
# nothing else lives there).
define uninstall_ext
	rm -rf $(1)/$(GNOME_EXT)
endef

# install_plasmoid copies the applet into the plasmoids directory $(1).
define install_plasmoid
	rm -rf $(1)/$(PLASMOID)
	install -d -m 0755 $(1)
	cp -R $(PANELS_STAGE)/$(PLASMOID) $(1)/$(PLASMOID)
endef

define uninstall_plasmoid
	rm -rf $(1)/$(PLASMOID)
endef

# install_browser_ext puts the browser extension into antidrift's data
# directory $(1): the unpacked folder as browser/, and the .xpi.
define install_browser_ext
	rm -rf $(1)/browser
	install -d -m 0755 $(1)/browser
	install -m 0644 $(BROWSER_EXT)/* $(1)/browser/
	install -m 0644 $(BROWSER_XPI) $(1)/antidrift-browser.xpi
endef

# uninstall_browser_ext removes them, and the data directory once empty.
define uninstall_browser_ext
	rm -rf $(1)/browser
	rm -f $(1)/antidrift-browser.xpi
	rmdir $(1) 2>/dev/null || true
endef

install: build package-panels
	install -d -m 0755 $(DESTDIR)$(BINDIR)
	for c in $(CMDS); do install -m 0755 $(BUILDDIR)/$$c $(DESTDIR)$(BINDIR)/$$c || exit 1; done
	$(call fill_in,dist/antidrift.service.in,$(DESTDIR)$(USERUNITDIR)/antidrift.service,$(BINDIR))
	$(call fill_in,dist/org.antidrift.service.in,$(DESTDIR)$(DBUSDIR)/services/org.antidrift.service,$(BINDIR))
	install -D -m 0644 dist/org.antidrift.Session1.xml $(DESTDIR)$(DBUSDIR)/interfaces/org.antidrift.Session1.xml
	install -D -m 0644 $(COMPLETION_BASH) $(DESTDIR)$(DATADIR)/bash-completion/completions/antidrift
	install -D -m 0644 $(COMPLETION_ZSH) $(DESTDIR)$(DATADIR)/zsh/site-functions/_antidrift
	install -D -m 0644 $(COMPLETION_FISH) $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/antidrift.fish
	install -d -m 0755 $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1
	$(call install_ext,$(DESTDIR)$(DATADIR)/gnome-shell/extensions,$(if $(GSCHEMADIR),$(DESTDIR)$(GSCHEMADIR)))
	$(call install_plasmoid,$(DESTDIR)$(DATADIR)/plasma/plasmoids)
	$(call install_browser_ext,$(DESTDIR)$(DATADIR)/antidrift)
	$(call install_tw_hook,$(DESTDIR)$(DATADIR),$(BINDIR),$(DATADIR))
	$(call fill_in,dist/native-messaging/firefox.json.in,$(DESTDIR)$(MOZILLA_NMH_DIR)/$(NMH_NAME),$(BINDIR))
	$(call fill_in,dist/native-messaging/chromium.json.in,$(DESTDIR)$(CHROMIUM_NMH_DIR)/$(NMH_NAME),$(BINDIR))

# Removes exactly what install puts in place, and no directories but the
# extension's own.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/antidriftd $(DESTDIR)$(BINDIR)/antidrift \
		$(DESTDIR)$(BINDIR)/antidrift-native-host \
		$(DESTDIR)$(MOZILLA_NMH_DIR)/$(NMH_NAME) $(DESTDIR)$(CHROMIUM_NMH_DIR)/$(NMH_NAME) \
		$(DESTDIR)$(USERUNITDIR)/antidrift.service \
		$(DESTDIR)$(DBUSDIR)/services/org.antidrift.service \
		$(DESTDIR)$(DBUSDIR)/interfaces/org.antidrift.Session1.xml \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/antidrift \
		$(DESTDIR)$(DATADIR)/zsh/site-functions/_antidrift \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/antidrift.fish \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_PAGES)))
	$(call uninstall_ext,$(DESTDIR)$(DATADIR)/gnome-shell/extensions)
	$(if $(GSCHEMADIR),rm -f $(DESTDIR)$(GSCHEMADIR)/$(GSCHEMA))
	$(call uninstall_plasmoid,$(DESTDIR)$(DATADIR)/plasma/plasmoids)
	rm -f $(DESTDIR)$(DATADIR)/$(TW_HOOK)
	rmdir $(DESTDIR)$(DATADIR)/antidrift/taskwarrior 2>/dev/null || true
	$(call uninstall_browser_ext,$(DESTDIR)$(DATADIR)/antidrift)

# reload tells the user manager about the new or removed unit; without one
# (no session, su, a container) it says what to run later instead of failing.
define reload
	@if command -v systemctl >/dev/null 2>&1 && systemctl --user daemon-reload 2>/dev/null; then \
		echo "systemctl --user daemon-reload: done"; \
	else \
		echo "no systemd user manager reachable from here; in your desktop session run:"; \
		echo "    systemctl --user daemon-reload"; \
	fi
endef

install-user: build package-panels
	@case "$(HOME)" in /?*) ;; *) echo "install-user: HOME is not set to an absolute path" >&2; exit 1 ;; esac
	install -d -m 0755 $(USER_BINDIR)
	for c in $(CMDS); do install -m 0755 $(BUILDDIR)/$$c $(USER_BINDIR)/$$c || exit 1; done
	$(call fill_in,dist/antidrift.service.in,$(USER_CONFIG)/systemd/user/antidrift.service,$(USER_BINDIR))
	$(call fill_in,dist/org.antidrift.service.in,$(USER_DATA)/dbus-1/services/org.antidrift.service,$(USER_BINDIR))
	install -D -m 0644 dist/org.antidrift.Session1.xml $(USER_DATA)/dbus-1/interfaces/org.antidrift.Session1.xml
	install -D -m 0644 $(COMPLETION_BASH) $(USER_DATA)/bash-completion/completions/antidrift
	install -D -m 0644 $(COMPLETION_ZSH) $(USER_DATA)/zsh/site-functions/_antidrift
	install -D -m 0644 $(COMPLETION_FISH) $(USER_DATA)/fish/vendor_completions.d/antidrift.fish
	@# man-db finds ~/.local/share/man through ~/.local/bin on PATH.
	install -d -m 0755 $(USER_DATA)/man/man1
	install -m 0644 $(MAN_PAGES) $(USER_DATA)/man/man1
	$(call install_ext,$(USER_DATA)/gnome-shell/extensions)
	$(call install_browser_ext,$(USER_DATA)/antidrift)
	$(call install_tw_hook,$(USER_DATA),$(USER_BINDIR),$(USER_DATA))
	$(call fill_in,dist/native-messaging/firefox.json.in,$(USER_MOZILLA_NMH)/$(NMH_NAME),$(USER_BINDIR))
	$(call fill_in,dist/native-messaging/chromium.json.in,$(USER_CHROMIUM_NMH)/$(NMH_NAME),$(USER_BINDIR))
	@# Plasma's own installer where there is one (it also tells a running
	@# Plasma); a plain copy to the same place elsewhere.
	if command -v kpackagetool6 >/dev/null 2>&1; then \
		kpackagetool6 --type Plasma/Applet --upgrade $(PLASMOID_PKG) >/dev/null 2>&1 || \
		kpackagetool6 --type Plasma/Applet --install $(PLASMOID_PKG); \
	else rm -rf $(USER_DATA)/plasma/plasmoids/$(PLASMOID) && install -d -m 0755 $(USER_DATA)/plasma/plasmoids && \
		cp -R $(PANELS_STAGE)/$(PLASMOID) $(USER_DATA)/plasma/plasmoids/$(PLASMOID); fi
	$(reload)
	@echo "installed. The daemon starts on the first call to it (D-Bus activation);"
	@echo "to start it with every graphical session:  systemctl --user enable --now antidrift"
	@echo "make sure $(USER_BINDIR) is on your PATH (man antidrift then finds its page too),"
	@echo "and $(USER_DATA)/zsh/site-functions in zsh's fpath."
	@echo "on GNOME: log out and back in (GNOME Shell finds new extensions at login), then"
	@echo "    gnome-extensions enable $(GNOME_EXT)"
	@echo "on Plasma: right-click the panel, Add or Manage Widgets, and drag in antidrift."
	@echo "in Firefox: install $(USER_DATA)/antidrift/antidrift-browser.xpi; in Chromium: Load unpacked"
	@echo "    $(USER_DATA)/antidrift/browser (docs/browsers.md says which Firefox takes it and how)."

uninstall-user:
	@case "$(HOME)" in /?*) ;; *) echo "uninstall-user: HOME is not set to an absolute path" >&2; exit 1 ;; esac
	-@command -v systemctl >/dev/null 2>&1 && systemctl --user disable --now antidrift.service 2>/dev/null || true
	rm -f $(USER_BINDIR)/antidriftd $(USER_BINDIR)/antidrift \
		$(USER_BINDIR)/antidrift-native-host \
		$(USER_MOZILLA_NMH)/$(NMH_NAME) $(USER_CHROMIUM_NMH)/$(NMH_NAME) \
		$(USER_CONFIG)/systemd/user/antidrift.service \
		$(USER_DATA)/dbus-1/services/org.antidrift.service \
		$(USER_DATA)/dbus-1/interfaces/org.antidrift.Session1.xml \
		$(USER_DATA)/bash-completion/completions/antidrift \
		$(USER_DATA)/zsh/site-functions/_antidrift \
		$(USER_DATA)/fish/vendor_completions.d/antidrift.fish \
		$(addprefix $(USER_DATA)/man/man1/,$(notdir $(MAN_PAGES)))
	$(call uninstall_ext,$(USER_DATA)/gnome-shell/extensions)
	-@command -v kpackagetool6 >/dev/null 2>&1 && kpackagetool6 --type Plasma/Applet --remove $(PLASMOID) >/dev/null 2>&1 || true
	$(call uninstall_plasmoid,$(USER_DATA)/plasma/plasmoids)
	rm -f $(USER_DATA)/$(TW_HOOK)
	rmdir $(USER_DATA)/antidrift/taskwarrior 2>/dev/null || true
	$(call uninstall_browser_ext,$(USER_DATA)/antidrift)
	$(reload)
	@echo "your sessions' state in $${XDG_STATE_HOME:-$$HOME/.local/state}/antidrift is kept."

# --- The Debian package -------------------------------------------------------
# make package   bin/antidrift_<version>_amd64.deb, built by debian/rules
#
# Built the Debian way (dpkg-buildpackage, debhelper) on a clean copy of the
# checkout in $(BUILDDIR)/deb, with the Go modules vendored into it so the
# build itself needs no network, then checked with lintian (errors fail).
# The Go toolchain is the one first on PATH and must be 1.24 or newer: Debian
# 13's golang-go is; on Debian 12 put an upstream Go first on PATH. Needs
# dpkg-dev and debhelper (and lintian for the check).
#
# The package version is `git describe`'s in Debian's spelling
# (scripts/deb-version.sh); antidrift --version prints the git describe
# itself (VERSION).
DEB_VERSION ?= $(shell ./scripts/deb-version.sh '$(VERSION)')
# LINTIAN= skips the check (the tests build packages they install, not ship).
LINTIAN     ?= lintian
DEB_ARCH    ?= $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_STAGE   := $(BUILDDIR)/deb
DEB_SRC     := $(DEB_STAGE)/antidrift-$(DEB_VERSION)
DEB_FILE    := antidrift_$(DEB_VERSION)_$(DEB_ARCH).deb

package: check-go-package package-panels
	@command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || \
		{ echo "make package needs dpkg-dev and debhelper: apt-get install dpkg-dev debhelper" >&2; exit 1; }
	rm -rf $(DEB_STAGE)
	mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard | \
		tar --null --files-from=- --ignore-failed-read -cf - | tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && GOFLAGS=-mod=mod $(GO) mod vendor
	{ printf 'antidrift (%s) unstable; urgency=medium\n\n  * Built from git %s.\n\n -- %s  %s\n\n' \
		'$(DEB_VERSION)' '$(VERSION)' "$$(sed -n 's/^Maintainer: //p' debian/control)" "$$(date -R)"; \
		cat debian/changelog; } > $(DEB_SRC)/debian/changelog
	@# -d: the Go that builds is the one on PATH (checked above), which
	@# golang-any in Build-Depends cannot see when it is not Debian's.
	cd $(DEB_SRC) && PATH="$$(dirname "$$(command -v $(GO))"):$$PATH" ANTIDRIFT_VERSION='$(VERSION)' \
		GOCACHE="$$($(GO) env GOCACHE)" dpkg-buildpackage -us -uc -d
	@if [ -z "$(LINTIAN)" ]; then :; elif command -v $(LINTIAN) >/dev/null; then \
		echo $(LINTIAN) --fail-on error $(DEB_STAGE)/antidrift_$(DEB_VERSION)_$(DEB_ARCH).changes; \
		$(LINTIAN) --fail-on error $(DEB_STAGE)/antidrift_$(DEB_VERSION)_$(DEB_ARCH).changes || exit 1; \
	else echo "lintian is not installed: the package is not checked" >&2; fi
	cp $(DEB_STAGE)/$(DEB_FILE) $(BUILDDIR)/$(DEB_FILE)
	@# The unpacked tree is in the source package; left here, its vendored
	@# modules would be walked by gofmt and grep.
	rm -rf $(DEB_SRC)
	@echo "built $(BUILDDIR)/$(DEB_FILE)"

# --- Fedora and Arch packages -------------------------------------------------
# make dist   bin/antidrift-<git describe>.tar.gz: the source with its Go
#             modules vendored, from which both packages build offline
# make rpm    bin/antidrift-<version>-1.<arch>.rpm and .src.rpm (Copr builds
#             from the .src.rpm), from dist/rpm/antidrift.spec by rpmbuild -ba,
#             then checked with rpmlint (RPMLINT= skips it)
# make arch   bin/antidrift-<version>-1-<arch>.pkg.tar.zst, from
#             dist/arch/PKGBUILD by makepkg, staged in bin/arch/ with the
#             tarball; on Arch `make arch MAKEPKG_FLAGS=-si` also installs it
#             (makepkg -si)
#
# Both build with `make install` as the .deb does, and ship the same files
# (installed/distros_test.go compares the three). The version written into
# the spec and the PKGBUILD is the .deb's, in each format's spelling: RPM
# takes Debian's (~ sorts before, as in dpkg); pacman has no ~, so
# 0~565.gabc1234 is 0.r565.gabc1234 and 1.2.0+5.gabc1234 is 1.2.0.r5.gabc1234.
DIST_NAME    := antidrift-$(VERSION)
DIST_TAR      = $(BUILDDIR)/$(DIST_NAME).tar.gz
RPM_VERSION   = $(DEB_VERSION)
ARCH_VERSION  = $(subst ~,.r,$(subst +,.r,$(DEB_VERSION)))
RPM_STAGE    := $(BUILDDIR)/rpm
ARCH_STAGE   := $(BUILDDIR)/arch
RPMLINT      ?= rpmlint
# Off an RPM distribution (rpm does not own itself there) rpmbuild cannot
# check BuildRequires, and without pacman makepkg cannot check makedepends:
# the Go check below stands in, as for make package. Debian's rpm also
# runs its brp-compress, a bash script, with dash, where it compresses no
# manual page: there it is run with bash.
RPM_DISTRO      = $(shell rpm -q rpm >/dev/null 2>&1 && echo yes)
RPMBUILD_FLAGS ?= $(if $(RPM_DISTRO),,--nodeps --define '__brp_compress /bin/bash %{_rpmconfigdir}/brp-compress %{?_prefix}')
# (makepkg also looks pacman up before anything else: off Arch, PACMAN=true
# stands in for the dependency checks --nodeps skips.)
PACMAN_FOUND    = $(shell command -v pacman >/dev/null 2>&1 && echo yes)
MAKEPKG_FLAGS  ?= -f $(if $(PACMAN_FOUND),,--nodeps)
# The tarball's dates, for the same bytes from the same tree.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 946684800)

.PHONY: dist rpm arch check-go-package

# The packages are built with the Go first on PATH, whatever the
# distribution's build dependencies say (make package, rpm, arch).
check-go-package:
	@v=$$($(GO) env GOVERSION) && [ "$$(printf 'go1.24\n%s\n' "$$v" | sort -V | head -1)" = go1.24 ] || \
		{ echo "make $(MAKECMDGOALS) needs Go 1.24 or newer first on PATH, found $$v" >&2; exit 1; }

dist: check-go-package
	rm -rf $(BUILDDIR)/dist-stage
	mkdir -p $(BUILDDIR)/dist-stage/$(DIST_NAME)
	git ls-files -z --cached --others --exclude-standard | \
		tar --null --files-from=- --ignore-failed-read -cf - | tar -xf - -C $(BUILDDIR)/dist-stage/$(DIST_NAME)
	cd $(BUILDDIR)/dist-stage/$(DIST_NAME) && GOFLAGS=-mod=mod $(GO) mod vendor
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) \
		-C $(BUILDDIR)/dist-stage -cf - $(DIST_NAME) | gzip -n > $(DIST_TAR)
	rm -rf $(BUILDDIR)/dist-stage
	@echo "built $(DIST_TAR)"

rpm: dist
	@command -v rpmbuild >/dev/null || { echo "make rpm needs rpmbuild: dnf install rpm-build (Debian: apt-get install rpm)" >&2; exit 1; }
	rm -rf $(RPM_STAGE)
	mkdir -p $(RPM_STAGE)/SOURCES $(RPM_STAGE)/SPECS
	cp $(DIST_TAR) $(RPM_STAGE)/SOURCES/
	@# The versions filled in, and a changelog entry for this build (as
	@# make package adds to debian/changelog).
	sed -e 's|^Version:\( *\).*|Version:\1$(RPM_VERSION)|' -e 's|^%global describe .*|%global describe $(VERSION)|' \
		-e "s|^%changelog\$$|%changelog\n* $$(LC_ALL=C date -u '+%a %b %d %Y') $$(sed -n 's/^Maintainer: //p' debian/control) - $(RPM_VERSION)-1\n- Built from git $(VERSION).\n|" \
		dist/rpm/antidrift.spec > $(RPM_STAGE)/SPECS/antidrift.spec
	@# _buildshell: the spec's scripts are bash, as on Fedora.
	PATH="$$(dirname "$$(command -v $(GO))"):$$PATH" GOCACHE="$$($(GO) env GOCACHE)" \
		rpmbuild -ba $(RPMBUILD_FLAGS) --define '_buildshell /bin/bash' --define '_topdir $(abspath $(RPM_STAGE))' $(RPM_STAGE)/SPECS/antidrift.spec
	@if [ -z "$(RPMLINT)" ]; then :; elif command -v $(RPMLINT) >/dev/null; then \
		echo $(RPMLINT) -c dist/rpm/rpmlint.toml -r dist/rpm/antidrift.rpmlintrc $(RPM_STAGE)/SPECS/antidrift.spec $(RPM_STAGE)/RPMS/*/*.rpm $(RPM_STAGE)/SRPMS/*.rpm; \
		$(RPMLINT) -c dist/rpm/rpmlint.toml -r dist/rpm/antidrift.rpmlintrc $(RPM_STAGE)/SPECS/antidrift.spec $(RPM_STAGE)/RPMS/*/*.rpm $(RPM_STAGE)/SRPMS/*.rpm || exit 1; \
	else echo "rpmlint is not installed: the package is not checked" >&2; fi
	cp $(RPM_STAGE)/RPMS/*/*.rpm $(RPM_STAGE)/SRPMS/*.rpm $(BUILDDIR)/
	@# The unpacked tree, with its vendored modules, is in the .src.rpm; left
	@# here it would be walked by gofmt and grep (as make package says).
	rm -rf $(RPM_STAGE)/BUILD $(RPM_STAGE)/BUILDROOT
	@cd $(RPM_STAGE) && for f in RPMS/*/*.rpm SRPMS/*.rpm; do echo "built $(BUILDDIR)/$${f##*/}"; done

# makepkg refuses to run as root: as root, make arch runs it as
# MAKEPKG_USER, in a stage directory given to that user, with its Go build
# cache there too unless MAKEPKG_GOCACHE names one the user may write.
# make's BUILDDIR, in the environment, is unset for makepkg, which would
# read it as where to build.
MAKEPKG_USER    ?= nobody
MAKEPKG_GOCACHE ?= $(abspath $(ARCH_STAGE))/.gocache

arch: dist
	@command -v makepkg >/dev/null || { echo "make arch needs makepkg (pacman; Debian: apt-get install makepkg)" >&2; exit 1; }
	rm -rf $(ARCH_STAGE)
	mkdir -p $(ARCH_STAGE)
	cp $(DIST_TAR) $(ARCH_STAGE)/
	sed -e 's|^pkgver=.*|pkgver=$(ARCH_VERSION)|' -e 's|^_describe=.*|_describe=$(VERSION)|' \
		-e "s|^sha256sums=.*|sha256sums=('$$(sha256sum $(DIST_TAR) | cut -d' ' -f1)')|" \
		dist/arch/PKGBUILD > $(ARCH_STAGE)/PKGBUILD
	if [ "$$(id -u)" = 0 ]; then \
		chown -R $(MAKEPKG_USER) $(ARCH_STAGE) && \
		as="setpriv --reuid=$(MAKEPKG_USER) --regid=$$(id -g $(MAKEPKG_USER)) --clear-groups \
			env HOME=$(abspath $(ARCH_STAGE)) GOCACHE=$(MAKEPKG_GOCACHE)"; \
	fi; \
	cd $(ARCH_STAGE) && PATH="$$(dirname "$$(command -v $(GO))"):$$PATH" PKGEXT=.pkg.tar.zst \
		env -u BUILDDIR $(if $(PACMAN_FOUND),,PACMAN=true) $$as makepkg $(MAKEPKG_FLAGS)
	cp $(ARCH_STAGE)/antidrift-$(ARCH_VERSION)-*.pkg.tar.zst $(BUILDDIR)/
	rm -rf $(ARCH_STAGE)/src $(ARCH_STAGE)/pkg
	@echo "built $(BUILDDIR)/$$(cd $(ARCH_STAGE) && ls antidrift-$(ARCH_VERSION)-*.pkg.tar.zst)"
