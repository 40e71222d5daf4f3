# Every target sets up its own virtual environment, so a fresh clone needs
# nothing but Python 3 and pip: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make bench` also installs the bench extra: the peers it measures against
# (FastMCP; the seed's own SDK, codecraftai-agent-kit, for the executor).
BENCH_STAMP := $(VENV)/.bench-installed
# The integration tests' third-party servers from npm (json-server, and Prism for
# the OpenAPI import), pinned by package-lock.json. Without npm the stamp is not
# made and those tests skip.
NODE_STAMP := node_modules/.installed
# GitHub's full REST description for the OpenAPI bench (npm, 13 MB of it; the
# package is 385 MB, so only `make bench` installs it). Without npm the bench skips.
BENCH_NODE_STAMP := benchmarks/github/node_modules/.installed
# Kubernetes' Swagger 2.0 description, for the same bench and for the test of the
# import's budgets on a large description (npm kubernetes-client, which ships it
# gzipped; 26 MB installed). Without npm that bench part and that test skip.
K8S_STAMP := benchmarks/kubernetes/node_modules/.installed

# The shared limits store's tests start a real redis-server (Debian: apt-get install
# redis-server; .ci/run installs it); without one they skip, saying so. `make
# scale-check` needs it too, and haproxy (apt-get install haproxy).

# The unit tests that start no server, need no npm and wait for nothing: a lane for
# the edit-test loop, not a substitute for `make test` (tests/conftest.py marks them).
FAST := not npm and not server and not slow

.PHONY: demo test test-fast lint typecheck unit examples bench soak scale-check conformance clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $(STAMP)

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

$(NODE_STAMP): package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --no-audit --no-fund --loglevel=error && touch $(NODE_STAMP); \
	else \
		echo "npm not found: the json-server and Prism integration tests will skip"; \
	fi

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: lint typecheck unit examples

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) $(NODE_STAMP) $(K8S_STAMP)
	$(BIN)/python -m pytest

# The shipped definitions' examples, offline against their recordings (docs/testing.md).
examples: $(STAMP)
	$(BIN)/agentkit test tools.d

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "$(FAST)"

$(BENCH_NODE_STAMP): benchmarks/github/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd benchmarks/github && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else \
		echo "npm not found: the OpenAPI import bench will skip"; \
	fi

$(K8S_STAMP): benchmarks/kubernetes/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		cd benchmarks/kubernetes && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else \
		echo "npm not found: the Kubernetes import test and bench part will skip"; \
	fi

bench: $(BENCH_STAMP) $(BENCH_NODE_STAMP) $(K8S_STAMP)
	$(BIN)/python benchmarks/run.py

# `agentkit serve --http` under steady load (32 sessions, four tools) for 8 minutes,
# then FastMCP the same: about 17 minutes; outside `make test` and `make bench`.
# SOAK_ARGS="--minutes 1 --agentkit-only" for a short run of agentkit alone.
SOAK_ARGS ?=
soak: $(BENCH_STAMP)
	$(BIN)/python -m benchmarks.soak $(SOAK_ARGS)

# Two stateless `agentkit serve --http` behind haproxy (apt-get install haproxy);
# outside `make test`.
scale-check: $(STAMP)
	$(BIN)/python scripts/scale_check.py

# The official MCP conformance suite (npm, with its own Node 22) against
# `agentkit serve --http`, on the fast path and with --no-fast-path; `.ci/run`
# runs it after `make test`.
conformance: $(STAMP)
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
	$(BIN)/python scripts/conformance.py

clean:
	rm -rf $(VENV) node_modules benchmarks/github/node_modules benchmarks/kubernetes/node_modules build *.egg-info .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
