# antidrift — see README.md.
GO      ?= go
PREFIX  ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# The commands to build: the daemon and the CLI. Built without cgo (every
# dependency is pure Go): a static binary starts faster under bus activation.
CMDS := antidriftd antidrift
# Where build puts them (and install, install-user and demo take them from).
BUILDDIR ?= bin

# Where `make install` puts things, under $(DESTDIR) (for packagers: the
# paths baked into the installed files never contain DESTDIR).
BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
DBUSDIR     ?= $(DATADIR)/dbus-1

# Where `make install-user` puts things: the XDG user directories, which the
# user manager, the session bus and the shells search. As the XDG spec says,
# an empty or relative XDG_CONFIG_HOME / XDG_DATA_HOME means the default.
USER_BINDIR ?= $(HOME)/.local/bin
abs_or       = $(if $(filter /%,$(1)),$(1),$(2))
USER_CONFIG := $(call abs_or,$(XDG_CONFIG_HOME),$(HOME)/.config)
USER_DATA   := $(call abs_or,$(XDG_DATA_HOME),$(HOME)/.local/share)

# Shell completions.
COMPLETION_BASH := dist/completions/antidrift.bash
COMPLETION_ZSH  := dist/completions/_antidrift
COMPLETION_FISH := dist/completions/antidrift.fish

# The GNOME Shell extension, the daemon's eyes and hands on GNOME (Mutter
# lets no other program see or act on windows). GNOME Shell finds it by
# its uuid under share/gnome-shell/extensions, at login.
GNOME_EXT        := antidrift@antidrift.github.io
GNOME_EXT_DIR    := dist/gnome-shell/$(GNOME_EXT)
GNOME_EXT_FILES  := $(notdir $(wildcard $(GNOME_EXT_DIR)/*.js $(GNOME_EXT_DIR)/*.mjs $(GNOME_EXT_DIR)/*.json $(GNOME_EXT_DIR)/*.css))
GNOME_EXT_SCHEMA := org.gnome.shell.extensions.antidrift.gschema.xml

# The Plasma 6 applet. Its format.mjs is the GNOME extension's (a link in
# the checkout); installing copies what it points to.
PLASMOID       := org.antidrift.panel
PLASMOID_DIR   := dist/plasma/$(PLASMOID)
PLASMOID_FILES := metadata.json $(patsubst $(PLASMOID_DIR)/%,%,$(wildcard $(PLASMOID_DIR)/contents/ui/*))

.PHONY: all build test vet run clean test-deps demo soak bench lint judge-eval \
	install uninstall install-user uninstall-user install-gnome-extension

all: build

build:
	@for c in $(CMDS); do \
		echo CGO_ENABLED=0 $(GO) build -ldflags \"$(LDFLAGS)\" -o $(BUILDDIR)/$$c ./cmd/$$c; \
		CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BUILDDIR)/$$c ./cmd/$$c || exit 1; \
	done

# The test command CI runs (.ci/run). It first makes sure the desktop
# pieces the end-to-end tests drive are installed.
test: test-deps
	$(GO) test -race -count=1 -timeout 30m ./...

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

# Run the daemon in the foreground on the current session bus. Without a
# desktop session: dbus-run-session -- make run
run: build
	$(BUILDDIR)/antidriftd

# A guided, headless tour: a private bus, X server, window manager and
# notification daemon in a temp dir, and a short blocking session driven by
# the CLI. Touches nothing outside its temp dir.
demo: test-deps build
	./scripts/demo.sh $(BUILDDIR)

clean:
	rm -rf bin

# --- Installing ---------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]   system-wide (as root)
# make install-user                            into ~/.local and ~/.config
# Both build first; under sudo, where go is often not on PATH:
#   sudo env PATH="$PATH" make install

# fill_in writes $(1) to $(2) with @BINDIR@ replaced by $(3), mode 0644.
define fill_in
	install -d -m 0755 $(dir $(2))
	sed -e 's|@BINDIR@|$(3)|g' $(1) > $(2).tmp
	chmod 0644 $(2).tmp
	mv -f $(2).tmp $(2)
endef

# install_ext puts the extension into the extensions directory $(1): its
# code, the interface XML its proxy is built from, and its settings schema,
# compiled (GNOME Shell reads only the compiled form).
define install_ext
	install -d -m 0755 $(1)/$(GNOME_EXT)/schemas
	for f in $(GNOME_EXT_FILES); do install -m 0644 $(GNOME_EXT_DIR)/$$f $(1)/$(GNOME_EXT)/$$f || exit 1; done
	install -m 0644 dist/org.antidrift.Session1.xml $(1)/$(GNOME_EXT)/org.antidrift.Session1.xml
	install -m 0644 $(GNOME_EXT_DIR)/schemas/$(GNOME_EXT_SCHEMA) $(1)/$(GNOME_EXT)/schemas/$(GNOME_EXT_SCHEMA)
	if command -v glib-compile-schemas >/dev/null 2>&1; then glib-compile-schemas $(1)/$(GNOME_EXT)/schemas; \
	else echo "glib-compile-schemas (libglib2.0-bin) is missing: the GNOME indicator needs $(1)/$(GNOME_EXT)/schemas compiled" >&2; fi
endef

# uninstall_ext removes them, and the extension's own directories (named by
# its uuid: nothing else lives there, and GNOME Shell would complain about
# an extension directory without metadata.json).
define uninstall_ext
	rm -f $(addprefix $(1)/$(GNOME_EXT)/,$(GNOME_EXT_FILES) org.antidrift.Session1.xml schemas/$(GNOME_EXT_SCHEMA) schemas/gschemas.compiled)
	rmdir $(1)/$(GNOME_EXT)/schemas $(1)/$(GNOME_EXT) 2>/dev/null || true
endef

# The extension alone, into EXTENSIONS_DIR: how the tests' GNOME Shell gets
# it, so it runs what make install puts in place.
install-gnome-extension:
	@test -n "$(EXTENSIONS_DIR)" || { echo "install-gnome-extension: set EXTENSIONS_DIR" >&2; exit 1; }
	$(call install_ext,$(EXTENSIONS_DIR))

# install_plasmoid copies the applet into the plasmoids directory $(1).
define install_plasmoid
	for f in $(PLASMOID_FILES); do install -D -m 0644 $(PLASMOID_DIR)/$$f $(1)/$(PLASMOID)/$$f || exit 1; done
endef

define uninstall_plasmoid
	rm -f $(addprefix $(1)/$(PLASMOID)/,$(PLASMOID_FILES))
	rmdir $(1)/$(PLASMOID)/contents/ui $(1)/$(PLASMOID)/contents $(1)/$(PLASMOID) 2>/dev/null || true
endef

install: build
	install -d -m 0755 $(DESTDIR)$(BINDIR)
	for c in $(CMDS); do install -m 0755 $(BUILDDIR)/$$c $(DESTDIR)$(BINDIR)/$$c || exit 1; done
	$(call fill_in,dist/antidrift.service.in,$(DESTDIR)$(USERUNITDIR)/antidrift.service,$(BINDIR))
	$(call fill_in,dist/org.antidrift.service.in,$(DESTDIR)$(DBUSDIR)/services/org.antidrift.service,$(BINDIR))
	install -D -m 0644 dist/org.antidrift.Session1.xml $(DESTDIR)$(DBUSDIR)/interfaces/org.antidrift.Session1.xml
	install -D -m 0644 $(COMPLETION_BASH) $(DESTDIR)$(DATADIR)/bash-completion/completions/antidrift
	install -D -m 0644 $(COMPLETION_ZSH) $(DESTDIR)$(DATADIR)/zsh/site-functions/_antidrift
	install -D -m 0644 $(COMPLETION_FISH) $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/antidrift.fish
	$(call install_ext,$(DESTDIR)$(DATADIR)/gnome-shell/extensions)
	$(call install_plasmoid,$(DESTDIR)$(DATADIR)/plasma/plasmoids)

# Removes exactly what install puts in place, and no directories but the
# extension's own.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/antidriftd $(DESTDIR)$(BINDIR)/antidrift \
		$(DESTDIR)$(USERUNITDIR)/antidrift.service \
		$(DESTDIR)$(DBUSDIR)/services/org.antidrift.service \
		$(DESTDIR)$(DBUSDIR)/interfaces/org.antidrift.Session1.xml \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/antidrift \
		$(DESTDIR)$(DATADIR)/zsh/site-functions/_antidrift \
		$(DESTDIR)$(DATADIR)/fish/vendor_completions.d/antidrift.fish
	$(call uninstall_ext,$(DESTDIR)$(DATADIR)/gnome-shell/extensions)
	$(call uninstall_plasmoid,$(DESTDIR)$(DATADIR)/plasma/plasmoids)

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

install-user: build
	@case "$(HOME)" in /?*) ;; *) echo "install-user: HOME is not set to an absolute path" >&2; exit 1 ;; esac
	install -d -m 0755 $(USER_BINDIR)
	for c in $(CMDS); do install -m 0755 $(BUILDDIR)/$$c $(USER_BINDIR)/$$c || exit 1; done
	$(call fill_in,dist/antidrift.service.in,$(USER_CONFIG)/systemd/user/antidrift.service,$(USER_BINDIR))
	$(call fill_in,dist/org.antidrift.service.in,$(USER_DATA)/dbus-1/services/org.antidrift.service,$(USER_BINDIR))
	install -D -m 0644 dist/org.antidrift.Session1.xml $(USER_DATA)/dbus-1/interfaces/org.antidrift.Session1.xml
	install -D -m 0644 $(COMPLETION_BASH) $(USER_DATA)/bash-completion/completions/antidrift
	install -D -m 0644 $(COMPLETION_ZSH) $(USER_DATA)/zsh/site-functions/_antidrift
	install -D -m 0644 $(COMPLETION_FISH) $(USER_DATA)/fish/vendor_completions.d/antidrift.fish
	$(call install_ext,$(USER_DATA)/gnome-shell/extensions)
	@# Plasma's own installer where there is one (it also tells a running
	@# Plasma); a plain copy to the same place elsewhere.
	if command -v kpackagetool6 >/dev/null 2>&1; then \
		stage=$$(mktemp -d) && $(call install_plasmoid,$$stage) && \
		{ kpackagetool6 --type Plasma/Applet --upgrade $$stage/$(PLASMOID) >/dev/null 2>&1 || \
		  kpackagetool6 --type Plasma/Applet --install $$stage/$(PLASMOID); }; rc=$$?; rm -rf $$stage; exit $$rc; \
	else $(call install_plasmoid,$(USER_DATA)/plasma/plasmoids); fi
	$(reload)
	@echo "installed. The daemon starts on the first call to it (D-Bus activation);"
	@echo "to start it with every graphical session:  systemctl --user enable --now antidrift"
	@echo "make sure $(USER_BINDIR) is on your PATH, and $(USER_DATA)/zsh/site-functions in zsh's fpath."
	@echo "on GNOME: log out and back in (GNOME Shell finds new extensions at login), then"
	@echo "    gnome-extensions enable $(GNOME_EXT)"
	@echo "on Plasma: right-click the panel, Add or Manage Widgets, and drag in antidrift."

uninstall-user:
	@case "$(HOME)" in /?*) ;; *) echo "uninstall-user: HOME is not set to an absolute path" >&2; exit 1 ;; esac
	-@command -v systemctl >/dev/null 2>&1 && systemctl --user disable --now antidrift.service 2>/dev/null || true
	rm -f $(USER_BINDIR)/antidriftd $(USER_BINDIR)/antidrift \
		$(USER_CONFIG)/systemd/user/antidrift.service \
		$(USER_DATA)/dbus-1/services/org.antidrift.service \
		$(USER_DATA)/dbus-1/interfaces/org.antidrift.Session1.xml \
		$(USER_DATA)/bash-completion/completions/antidrift \
		$(USER_DATA)/zsh/site-functions/_antidrift \
		$(USER_DATA)/fish/vendor_completions.d/antidrift.fish
	$(call uninstall_ext,$(USER_DATA)/gnome-shell/extensions)
	-@command -v kpackagetool6 >/dev/null 2>&1 && kpackagetool6 --type Plasma/Applet --remove $(PLASMOID) >/dev/null 2>&1 || true
	$(call uninstall_plasmoid,$(USER_DATA)/plasma/plasmoids)
	$(reload)
	@echo "your sessions' state in $${XDG_STATE_HOME:-$$HOME/.local/state}/antidrift is kept."
