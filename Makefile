# SaveDesk. `make test` is the contract with CI (.ci/run) and with a new developer.
SHELL := /bin/bash
SWIFT ?= swift
export SWIFT_BACKTRACE ?= interactive=no

# System packages the build and the tests need: curses headers, pkg-config, tmux for the
# terminal end-to-end tests, SQLite for the store.
APT_PACKAGES := libncurses-dev pkg-config tmux libsqlite3-dev

.PHONY: test build deps bench demo

# Installs whatever of APT_PACKAGES is missing: with apt-get as root, with sudo where it works
# without a password, otherwise prints the one command to run and stops.
deps:
	@missing=""; \
	for pkg in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$pkg" 2>/dev/null | grep -q "ok installed" || missing="$$missing $$pkg"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "Installing missing system packages:$$missing"; \
	if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
	  echo "Missing system packages. Run this once, then try again:"; \
	  echo "  sudo apt-get install -y$$missing"; \
	  exit 1; \
	fi

build: deps
	$(SWIFT) build

# The demo: a server with demo customers and the terminal UI on it, in one command.
demo: deps
	$(SWIFT) build --product savedesk
	$$($(SWIFT) build --show-bin-path)/savedesk demo

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Performance figures (not a test): backend req/s and p50/p99 for GET cancel-flow config and a
# durable mutation, next to a bare Hummingbird route in the same run. Release build.
bench: deps
	$(SWIFT) build -c release --product savedesk-bench
	$(SWIFT) build -c release --product savedesk
	$$($(SWIFT) build -c release --show-bin-path)/savedesk-bench --seconds 5 --runs 5 --concurrency 16
