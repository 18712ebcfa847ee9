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
# The dashboard's chart library, vendored from node_modules (pinned in package.json) with its licences
# and served by the service itself (no CDN).
VENDOR    := api/dashboard/static/vendor
VENDOR_OK := $(VENDOR)/chart.umd.min.js
# Headless Chromium for the dashboard's browser tests (Debian's package; Playwright never downloads one).
CHROMIUM  := /usr/bin/chromium
# jq: the documentation's examples use it (tests/integration/test_docs_examples.py runs them).
JQ        := /usr/bin/jq
# The MCP server's test tools (Node 22 from npm, the MCP conformance suite, the MCP Inspector CLI):
# their own package.json, installed for the tests only (make run does not need them).
MCP_NPM_OK := tools/mcp/node_modules/.installed
# The TypeScript SDK (sdk/typescript, npm @agentledger/sdk): its own package.json and lock, with Node 22 from
# npm for its tests.
SDK_TS     := sdk/typescript
SDK_TS_OK  := $(SDK_TS)/node_modules/.installed

.PHONY: install postgresql compile run reset docs docs-check test test-postgresql lint typecheck slither pytest conformance mcp-tools sdk-ts sdk-types bench gas clean

install: $(PY_OK) $(NPM_OK) $(VENDOR_OK) postgresql

# The PostgreSQL backend's tests start a throwaway cluster (tests/pg_kit.py): initdb and pg_ctl from the
# system's PostgreSQL, installed from Debian's packages when neither PATH nor /usr/lib/postgresql has them.
postgresql:
	@if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql; \
	fi

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

$(VENDOR_OK): $(NPM_OK)
	mkdir -p $(VENDOR)
	cp node_modules/chart.js/dist/chart.umd.min.js $(VENDOR)/chart.umd.min.js
	cp node_modules/chart.js/LICENSE.md $(VENDOR)/chart.js.LICENSE.md
	cp node_modules/@kurkle/color/LICENSE.md $(VENDOR)/kurkle-color.LICENSE.md

# Installed only when missing, as root, without questions (the machines' user is root).
$(JQ):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq

$(CHROMIUM):
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium

compile: install
	$(PY) -m scripts.compile

run: compile
	$(PY) -m scripts.run

# The next `make run` starts from nothing: a new local chain and an empty SQLite database.
reset: install
	$(PY) -m scripts.reset

# The documentation site (mkdocs.yml, docs/): served with live reload on 127.0.0.1:8000, or built strict
# (a broken link, page or anchor fails). Material for MkDocs warns about its end of life (May 2027)
# on every build: silenced, the decision is in the note.
DOCS_ENV := NO_MKDOCS_2_WARNING=1
docs: compile
	$(DOCS_ENV) $(VENV)/bin/mkdocs serve -a 127.0.0.1:8000

docs-check: compile
	$(DOCS_ENV) $(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

lint: install
	$(PY) -m ruff check .

typecheck: install
	$(PY) -m mypy

# The whole suite on SQLite (the tests taking the `database` fixture on PostgreSQL too), then the
# integration suite again on PostgreSQL (test-postgresql below). Each on TEST_WORKERS pytest-xdist
# workers, each worker with its own anvil and cluster: the tests mostly wait (blocks, child processes,
# loopback servers), so two workers on 2 cores take about 0.7x the time of one.
TEST_WORKERS ?= 2
PG_SUITE := AGENTLEDGER_TEST_BACKEND=postgresql $(PY) -m pytest -n $(TEST_WORKERS) tests/integration

pytest: compile $(CHROMIUM) $(JQ) $(MCP_NPM_OK) $(SDK_TS_OK)
	$(PY) -m pytest -n $(TEST_WORKERS)
	$(PG_SUITE)

mcp-tools: $(MCP_NPM_OK)

$(MCP_NPM_OK): tools/mcp/package.json tools/mcp/package-lock.json
	@# `node` 22 is an npm package shipping the binary (the suite and the Inspector need Node >= 22.19;
	@# the system Node may be older); npm skips its install script, the binary works without it.
	cd tools/mcp && npm install --no-audit --no-fund --no-save
	touch $@

sdk-ts: $(SDK_TS_OK)

$(SDK_TS_OK): $(SDK_TS)/package.json $(SDK_TS)/package-lock.json
	cd $(SDK_TS) && npm ci --no-audit --no-fund
	touch $@

# The SDK's types, regenerated from the document the service serves (tests/integration/test_sdk_typescript.py
# fails when the checked-in ones differ).
sdk-types: install $(SDK_TS_OK)
	$(PY) -m scripts.openapi_document > $(SDK_TS)/openapi.json.tmp
	cd $(SDK_TS) && node_modules/node/bin/node scripts/generate.mjs openapi.json.tmp src/generated
	rm -f $(SDK_TS)/openapi.json.tmp

# The MCP conformance suite's server scenarios and the Inspector CLI against the running service.
conformance: install $(MCP_NPM_OK)
	$(PY) -m pytest tests/integration/test_mcp_conformance.py

# Static analysis of the contracts, offline, on the build-info scripts.compile writes; fails on any
# High or Medium finding not explained in the code or in tools/slither/triage.json.
slither: compile $(SLITHER_OK)
	$(SLITHER_VENV)/bin/python tools/slither/check.py

$(SLITHER_OK): tools/slither/requirements.txt
	$(PYTHON) -m venv $(SLITHER_VENV)
	$(SLITHER_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(SLITHER_VENV)/bin/python -m pip install --quiet -r tools/slither/requirements.txt
	touch $@

test: lint typecheck slither docs-check pytest

# The integration suite with every SQLite file a test opens on PostgreSQL instead (tests/pg_redirect.py;
# the few tests of SQLite's own machinery are deselected with their reason); the second half of `make test`.
test-postgresql: compile $(CHROMIUM) $(JQ) $(MCP_NPM_OK) $(SDK_TS_OK)
	$(PG_SUITE)

bench: compile
	$(PY) -m benchmarks.gas_table

clean:
	rm -rf contracts/build var .pytest_cache .mypy_cache .ruff_cache $(VENDOR)
