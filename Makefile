# antidrift — see README.md.
GO      ?= go
PREFIX  ?= /usr/local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build test vet run clean test-deps

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/antidriftd ./cmd/antidriftd

# The test command CI runs (.ci/run). It first makes sure the desktop
# pieces the end-to-end tests drive are installed.
test: test-deps
	$(GO) test -race -count=1 ./...

test-deps:
	@./scripts/ensure-test-deps.sh

vet:
	$(GO) vet ./...

# Run the daemon in the foreground on the current session bus. Without a
# desktop session: dbus-run-session -- make run
run: build
	./bin/antidriftd

clean:
	rm -rf bin
