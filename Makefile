# agentledger: `make run` starts everything locally; `make test` runs lint, types and tests.
# Both install what they need (Python venv with pinned packages, npm ci for anvil/solc/OZ).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PY_OK  := $(VENV)/.installed
NPM_OK := node_modules/.installed
# slither needs web3 < 8 (the service pins web3 8): it gets a virtualenv of its own.
SLITHER_VENV := .venv-slither
SLITHER_OK   := $(SLITHER_VENV)/.installed

.PHONY: install compile run test lint typecheck slither pytest bench gas clean

install: $(PY_OK) $(NPM_OK)

$(PY_OK): pyproject.toml constraints.txt sdk/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]' -e ./sdk
	touch $@

$(NPM_OK): package.json package-lock.json
	@# not `npm ci`: the registry here lacks the other platforms' optional anvil packages, which
	@# `npm ci` insists on; `npm install` honours the lock for everything it can resolve.
	npm install --no-audit --no-fund --no-save
	touch $@

compile: install
	$(PY) -m scripts.compile

run: compile
	$(PY) -m scripts.run

lint: install
	$(PY) -m ruff check .

typecheck: install
	$(PY) -m mypy

pytest: compile
	$(PY) -m pytest

# Static analysis of the contracts, offline, on the build-info scripts.compile writes; fails on any
# High or Medium finding not explained in the code or in tools/slither/triage.json.
slither: compile $(SLITHER_OK)
	$(SLITHER_VENV)/bin/python tools/slither/check.py

$(SLITHER_OK): tools/slither/requirements.txt
	$(PYTHON) -m venv $(SLITHER_VENV)
	$(SLITHER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SLITHER_VENV)/bin/python -m pip install --quiet -r tools/slither/requirements.txt
	touch $@

test: lint typecheck slither pytest

bench: compile
	$(PY) -m benchmarks.gas_table

clean:
	rm -rf contracts/build var .pytest_cache .mypy_cache .ruff_cache
