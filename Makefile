# SaveDesk. `make test` is the contract with CI (.ci/run) and with a new developer.
SHELL := /bin/bash
SWIFT ?= swift
export SWIFT_BACKTRACE ?= interactive=no

# System packages the build and the tests need: curses headers, pkg-config, tmux for the
# terminal end-to-end tests, SQLite for the store, PostgreSQL (the store's second engine: the
# tests' second pass, the bench and postgres-demo run it on a throwaway cluster), curl for the
# fuzz stage, Valgrind for the console's start order (`make release`, scripts/console-order.sh).
APT_PACKAGES := libncurses-dev pkg-config tmux libsqlite3-dev postgresql curl valgrind

# A throwaway Python venv (inside .build, never committed) for the tests' Python peers: Apple's
# App Store Server Library (interop of SaveDesk-signed data), schemathesis (the fuzz stage), the
# Prometheus client's exposition parser (the metrics test) and localstripe (a local Stripe for the
# paths it supports, run on 127.0.0.1 with a private folder by scripts/localstripe-loopback.py).
# Versions are pinned so a run can be repeated; the venv's stamp names the list, so a changed list
# installs again.
VENV := .build/python
PYTHON_PACKAGES := schemathesis==4.32.5 hypothesis==6.170.15 app-store-server-library==3.1.2 prometheus-client==0.26.0 localstripe==1.15.10
VENV_STAMP := $(VENV)/.installed-$(shell echo '$(PYTHON_PACKAGES)' | cksum | cut -d' ' -f1)
# The bench's own throwaway venv: Textual, the TUI peer (Benchmarks/textual/customers.py).
BENCH_VENV := .build/bench-python

.PHONY: test build deps bench-deps bench bench-tui demo fuzz fuzz-long postgres-demo test-postgres release

# Installs whatever of a list of Debian packages is missing: with apt-get as root, with sudo where
# it works without a password, otherwise prints the one command to run and stops.
define install_missing
	@missing=""; \
	for pkg in $(1); do \
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
endef

deps:
	$(call install_missing,$(APT_PACKAGES))

# The bench's compiled TUI peers, built offline from Debian's packages: Bubble Tea (Go) and tui-rs
# (Rust, with Debian's vendored crate registry: Benchmarks/tui-rs/.cargo/config.toml, read from the
# folder cargo runs in); cargo itself from Debian only where none is on PATH.
BENCH_APT_PACKAGES := golang-go golang-github-charmbracelet-bubbletea-dev librust-tui-dev librust-crossterm-dev librust-serde-json-dev \
  $(if $(shell command -v cargo),,cargo)
PEERS := .build-peers

bench-deps: deps
	$(call install_missing,$(BENCH_APT_PACKAGES))

$(PEERS)/bubbletea: Benchmarks/bubbletea/main.go | bench-deps
	mkdir -p $(PEERS)
	cd Benchmarks/bubbletea && GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= \
	  GOCACHE=$(abspath $(PEERS))/go-cache go build -o $(abspath $@) main.go

$(PEERS)/tui-rs: Benchmarks/tui-rs/src/main.rs Benchmarks/tui-rs/Cargo.toml | bench-deps
	cd Benchmarks/tui-rs && CARGO_TARGET_DIR=$(abspath $(PEERS))/cargo-target cargo build --release --quiet
	cp $(PEERS)/cargo-target/release/customers $@

build: deps
	$(SWIFT) build

# Release builds (`make release`, and the bench's): every function in a section of its own, so the
# linker can lay out the console's code (below) and leave out more of what nothing calls.
RELEASE := -c release -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
RELEASE_BIN = $$($(SWIFT) build $(RELEASE) --show-bin-path)
# The console's start laid out together: the code it runs when it starts, shows the home screen and
# moves the selection (scripts/console-order.sh: Valgrind's callgrind of such a run on the demo's
# server, looked up in lld's map of the link) comes first in its code, so a start maps a few 64 KB
# windows of it instead of some 200 (12 MB), and takes as few page faults. Made by each release
# build, never committed. Package.swift passes the map's path and then the layout (a linker script)
# to lld when SAVEDESK_CONSOLE_MAP and SAVEDESK_CONSOLE_LAYOUT name them (only the console relinks).
CONSOLE_MAP := .build/console-release.map
CONSOLE_LAYOUT := .build/console-layout.ld

release: deps
	@# Objects a plain `swift build -c release` wrote (no function sections) would stay through the
	@# RELEASE builds below: removed, they are written anew (scripts/release-objects.py says why).
	python3 scripts/release-objects.py $(RELEASE_BIN)
	$(SWIFT) build $(RELEASE) --product savedesk-server
	SAVEDESK_CONSOLE_MAP=$(abspath $(CONSOLE_MAP)) $(SWIFT) build $(RELEASE) --product savedesk
	scripts/console-order.sh $(RELEASE_BIN)/savedesk $(RELEASE_BIN)/savedesk-server $(CONSOLE_MAP) $(CONSOLE_LAYOUT)
	SAVEDESK_CONSOLE_LAYOUT=$(abspath $(CONSOLE_LAYOUT)) $(SWIFT) build $(RELEASE) --product savedesk

# How many tests run at once. Unbounded, Swift Testing starts every test together: on PostgreSQL
# some 160 servers then seed their databases at once, a seed took over a minute and a test's
# request could wait past its client's timeout (a run failed that way). Twelve keep both cores busy:
# the PostgreSQL pass went from 185 s with 162 slow-seed warnings to 123 s with none, on 2 cores.
TEST_WIDTH ?= 12
# The debug console's link map, for ConsoleOrderTests (scripts/console-order.sh needs one).
TEST_CONSOLE_MAP := $(abspath .build/console-debug.map)
TEST_ENV = SAVEDESK_CONSOLE_MAP=$(TEST_CONSOLE_MAP) SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) SAVEDESK_TEST_PYTHON=$(abspath $(VENV))/bin/python

# Suites whose servers keep their data in TestDatabase: `make test` runs them a second time on a
# throwaway PostgreSQL cluster (with the two-instance tests), started for the run and removed after.
POSTGRES_SUITES := SaveDeskServerTests|SaveDeskClientTests|SaveDeskCommandTests|SaveDeskViewModelsTests|SDKContractTests

# The PostgreSQL pass alone.
test-postgres: deps $(VENV_STAMP)
	SAVEDESK_CONSOLE_MAP=$(TEST_CONSOLE_MAP) $(SWIFT) build --build-tests
	$(TEST_ENV) scripts/with-tempdir.sh scripts/summarize-failures.sh scripts/stall-guard.sh scripts/with-postgres.sh $(SWIFT) test --skip-build --filter '$(POSTGRES_SUITES)'

# The backend on a throwaway PostgreSQL cluster, with the demo data (see scripts/postgres-demo.sh).
postgres-demo: deps
	$(SWIFT) build --product savedesk && $(SWIFT) build --product savedesk-server
	scripts/postgres-demo.sh $$($(SWIFT) build --show-bin-path)/savedesk

# The demo: a server with demo customers and the terminal UI on it, in one command.
demo: deps
	$(SWIFT) build --product savedesk && $(SWIFT) build --product savedesk-server
	$$($(SWIFT) build --show-bin-path)/savedesk demo

$(VENV_STAMP):
	test -x $(VENV)/bin/pip || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check $(PYTHON_PACKAGES)
	touch $@

# Every test on SQLite; the server, client, command and view-model suites again on PostgreSQL
# (about 2.5 minutes; scripts/stall-guard.sh runs that pass once more, saying so, if it stops
# making progress for 5 minutes, a stall whose cause is not found yet); then the fuzz stage (schemathesis against a running server, every phase and
# check, a new seed each run: about 2 minutes).
test: deps $(VENV_STAMP)
	SAVEDESK_CONSOLE_MAP=$(TEST_CONSOLE_MAP) $(SWIFT) build --build-tests
	$(TEST_ENV) scripts/with-tempdir.sh scripts/summarize-failures.sh $(SWIFT) test --skip-build
	$(TEST_ENV) scripts/with-tempdir.sh scripts/summarize-failures.sh scripts/stall-guard.sh scripts/with-postgres.sh $(SWIFT) test --skip-build --filter '$(POSTGRES_SUITES)'
	scripts/fuzz.sh $$($(SWIFT) build --show-bin-path)/savedesk $(VENV)/bin/schemathesis

# The fuzz stage alone (FUZZ_SEED=N replays a run; the seed is printed).
fuzz: deps $(VENV_STAMP)
	$(SWIFT) build --product savedesk && $(SWIFT) build --product savedesk-server
	scripts/fuzz.sh $$($(SWIFT) build --show-bin-path)/savedesk $(VENV)/bin/schemathesis

# The fuzz stage for 20 minutes (10 per key), generating until the time is spent.
fuzz-long: deps $(VENV_STAMP)
	$(SWIFT) build --product savedesk && $(SWIFT) build --product savedesk-server
	FUZZ_SECONDS=600 MIN_REQUESTS=0 scripts/fuzz.sh $$($(SWIFT) build --show-bin-path)/savedesk $(VENV)/bin/schemathesis

# Performance figures (not a test): backend req/s and p50/p99 for GET cancel-flow config, a
# durable mutation (SQLite; PostgreSQL with one and two instances, and the statements one costs,
# counted by pg_stat_statements) and customer search at 100k and 1M, next to a bare Hummingbird
# route in the same run, each against its goal; the cancel-flow funnel over 10M responses on both
# engines; the terminal UI next to Textual, Bubble Tea and tui-rs. Release build; a throwaway PostgreSQL cluster.
bench: release $(BENCH_VENV)/.installed $(PEERS)/bubbletea $(PEERS)/tui-rs
	$(SWIFT) build $(RELEASE) --product savedesk-bench
	SAVEDESK_POSTGRES_OPTIONS="-c shared_preload_libraries=pg_stat_statements" \
	  scripts/with-postgres.sh $(RELEASE_BIN)/savedesk-bench --seconds 5 --runs 5 --concurrency 16 \
	  --textual-python $(abspath $(BENCH_VENV))/bin/python --bubbletea $(abspath $(PEERS))/bubbletea --tui-rs $(abspath $(PEERS))/tui-rs

# The terminal UI figures alone (first frame with data, memory, key to frame, bytes per move),
# next to the same screen in Textual, Bubble Tea and tui-rs.
bench-tui: release $(BENCH_VENV)/.installed $(PEERS)/bubbletea $(PEERS)/tui-rs
	$(SWIFT) build $(RELEASE) --product savedesk-bench
	$(RELEASE_BIN)/savedesk-bench --tui-only --textual-python $(abspath $(BENCH_VENV))/bin/python \
	  --bubbletea $(abspath $(PEERS))/bubbletea --tui-rs $(abspath $(PEERS))/tui-rs

$(BENCH_VENV)/.installed:
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install --quiet --disable-pip-version-check textual==8.2.8
	touch $@
