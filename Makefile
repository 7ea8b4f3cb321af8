# The two commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/pytest -n 2 -q
CARGO ?= cargo
# braid's data plane (Rust): built with the set-up, rebuilt when its sources change.
BRAID_DP := dataplane/target/release/braid-dp
DATAPLANE_SOURCES := $(wildcard dataplane/Cargo.toml dataplane/Cargo.lock dataplane/*/Cargo.toml) $(shell find dataplane/*/src -name "*.rs" 2>/dev/null)

.PHONY: demo test lint typecheck dataplane unit integration ui readme e2e coverage bench clean

# Order-only: a new braid-dp does not reinstall the Python side, but every
# target that needs the set-up first rebuilds braid-dp if its sources changed.
$(STAMP): pyproject.toml | $(BRAID_DP)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(BRAID_DP): $(DATAPLANE_SOURCES)
	cd dataplane && $(CARGO) build --release --locked
	touch $@

demo: $(STAMP)
	$(BIN)/braid demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# braid-dp's own checks: format, lints (warnings are errors), unit tests.
dataplane: $(STAMP)
	cd dataplane && $(CARGO) fmt --check
	cd dataplane && $(CARGO) clippy --locked --all-targets -- -D warnings
	cd dataplane && $(CARGO) test --locked

# Seconds: the pure core, the services over fakes, the adapters' own logic.
unit: $(STAMP)
	$(PYTEST) tests/unit

# Real databases, real gRPC between processes, the REST API and the CLI.
integration: $(STAMP)
	$(PYTEST) tests/integration tests/api tests/cli

# The web interface in headless Chromium against a real `braid serve`;
# skipped without Chromium, failures under CI=true.
ui: $(STAMP)
	$(BIN)/pytest -q tests/ui

# Every command line of README.md, as written, in a fresh directory (one at a
# time: the multi-domain example's agents listen on the file's fixed ports).
readme: $(STAMP)
	$(BIN)/pytest -q tests/readme

# Open vSwitch and Mininet (root); skipped without them, failures under CI=true.
# One at a time: the emulations share host settings (the send buffer, bridge names).
e2e: $(STAMP)
	$(BIN)/pytest -q tests/e2e

test: lint typecheck dataplane unit integration ui readme e2e

# The whole suite under coverage, child processes (agents, servers) included.
coverage: $(STAMP)
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest -n 2 -q tests
	$(BIN)/coverage combine -q
	$(BIN)/coverage report --skip-covered --sort=cover
	$(BIN)/coverage html -q
	@echo "HTML report: htmlcov/index.html"

bench: $(STAMP)
	$(BIN)/python bench/core_bench.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .coverage .coverage.* htmlcov
