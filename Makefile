# agentledger: `make run` starts everything locally; `make test` runs lint, types and tests.
# Both install what they need (Python venv with pinned packages, npm ci for anvil/solc/OZ).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PY_OK  := $(VENV)/.installed
NPM_OK := node_modules/.installed

.PHONY: install compile run test lint typecheck pytest bench gas clean

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

test: lint typecheck pytest

bench: compile
	$(PY) -m benchmarks.gas_table

clean:
	rm -rf contracts/build var .pytest_cache .mypy_cache .ruff_cache
