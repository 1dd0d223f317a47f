# Firebreak: `make run` serves the app locally on http://127.0.0.1:7071; `make test` runs the whole suite.
# Both set everything up themselves (Python venv in .venv, npm packages in node_modules) and can be re-run.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 7071
DATA   ?= .local

.PHONY: setup run stop status test test-unit bench api-key conformance tools-manifest clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.installed node_modules/.installed

# The host enforces a function key (and the Durable system key) kept in $(DATA)/keys.json, generated on the
# first run and printed with curl/mcp.json examples; /api/health stays anonymous.
run: setup
	$(PY) -m devhost.stack start --data-dir $(DATA)
	$(PY) -m devhost.stack write-settings --data-dir $(DATA)
	$(PY) -m devhost --port $(PORT) --keys-file $(DATA)/keys.json

stop:
	@[ -x $(PY) ] && $(PY) -m devhost.stack stop --data-dir $(DATA) || true

status:
	$(PY) -m devhost.stack status --data-dir $(DATA)

# The test session starts its own emulators on free ports and stops them at the end.
test: setup
	$(PY) -m pytest -q

test-unit: setup
	$(PY) -m pytest -q tests/unit

# pt-query-digest (Debian's percona-toolkit) is the slow-log baseline; installed here when missing.
bench: setup
	@command -v pt-query-digest >/dev/null || (apt-get update -q >/dev/null && apt-get install -y -q percona-toolkit >/dev/null) || echo "percona-toolkit unavailable: the slow-log comparison will say so"
	$(PY) -m benchmarks

conformance: setup
	$(PY) -m pytest -q tests/e2e/test_mcp_conformance.py

# Regenerate the registry snapshot that indexing reads (after adding or changing a tool).
tools-manifest: setup
	$(PY) -m shared.tools.manifest

# make api-key WORKSPACE=my-team USER_ID=alice  (against the stack in local.settings.json)
api-key: setup
	$(PY) -m shared.identity.cli mint --workspace "$(WORKSPACE)" --user "$(USER_ID)" --name "$(NAME)"

clean: stop
	rm -rf $(VENV) node_modules $(DATA) .pytest_cache
