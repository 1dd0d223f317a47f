# Firebreak: `make run` serves the app locally on http://127.0.0.1:7071; `make test` runs the whole suite.
# Both set everything up themselves (Python venv in .venv, npm packages in node_modules) and can be re-run.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 7071
DATA   ?= .local
PORT_BASE ?=
STACK_ARGS = --data-dir $(DATA) $(if $(PORT_BASE),--port-base $(PORT_BASE))
# The real Python worker (azure-functions-runtime) needs Python 3.13: the first of these that runs it.
# pyenv's shim names python3.13 even when it is not the selected version, hence the versions folder.
WORKER_PYTHON ?= $(shell for p in python3.13 $$HOME/.pyenv/versions/3.13*/bin/python3.13 /usr/local/bin/python3.13 /usr/bin/python3.13; do \
	"$$p" -c 'import sys; assert sys.version_info[:2] == (3, 13)' >/dev/null 2>&1 && { echo "$$p"; break; }; done)
WORKER_VENV := .venv-worker
INFRA_VENV  := .venv-infra
UV_VERSION  := 0.13.9

.PHONY: setup run stop status lint test test-unit bench api-key conformance manifest package clean worker-venv infra-venv lock lock-check clean-venvs

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Direct dependencies come from requirements*.txt, every version (transitive ones too) from the lock.
$(VENV)/.installed: requirements.txt requirements-dev.txt requirements.lock | $(PY)
	$(PY) -m pip install -q -r requirements-dev.txt -c requirements.lock
	touch $@

# A separate venv for the real-worker test: the worker and the app's dependencies for Python 3.13.
$(WORKER_VENV)/.installed: requirements.txt requirements-worker.txt requirements-worker.lock
	@[ -n "$(WORKER_PYTHON)" ] || { echo "make: the real-worker test needs Python 3.13 (azure-functions-runtime requires it): 'pyenv install 3.13' or set WORKER_PYTHON=/path/to/python3.13" >&2; exit 1; }
	rm -rf $(WORKER_VENV)
	$(WORKER_PYTHON) -m venv $(WORKER_VENV)
	$(WORKER_VENV)/bin/python -m pip install -q -r requirements-worker.txt -c requirements-worker.lock
	touch $@

worker-venv: $(WORKER_VENV)/.installed

# checkov for the infra checks (tests/infra), in its own venv: it pins packaging<24, which pytest 9 cannot share.
$(INFRA_VENV)/.installed: requirements-infra.txt requirements-infra.lock
	rm -rf $(INFRA_VENV)
	$(PYTHON) -m venv $(INFRA_VENV)
	$(INFRA_VENV)/bin/python -m pip install -q -r requirements-infra.txt -c requirements-infra.lock
	touch $@

infra-venv: $(INFRA_VENV)/.installed

# Regenerate both locks after editing requirements*.txt (uv in its own venv, .venv-tools).
lock:
	[ -x .venv-tools/bin/uv ] || { $(PYTHON) -m venv .venv-tools && .venv-tools/bin/python -m pip install -q uv==$(UV_VERSION); }
	.venv-tools/bin/uv pip compile --quiet --universal --python-version 3.11 requirements-dev.txt -o requirements.lock
	.venv-tools/bin/uv pip compile --quiet --python-version 3.13 requirements-worker.txt -o requirements-worker.lock
	.venv-tools/bin/uv pip compile --quiet --python-version 3.11 requirements-infra.txt -o requirements-infra.lock

# The locks match the requirements' pins, and both venvs match their lock.
lock-check: setup worker-venv infra-venv
	$(PY) -m devhost.lockcheck --installed requirements.lock $(PY) --installed requirements-worker.lock $(WORKER_VENV)/bin/python \
		--installed requirements-infra.lock $(INFRA_VENV)/bin/python

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV)/.installed node_modules/.installed

# The host enforces a function key (and the Durable system key) kept in $(DATA)/keys.json, generated on the
# first run and printed with curl/mcp.json examples; /api/health stays anonymous.
# A second stack beside the first: make run PORT=7072 DATA=.local2 PORT_BASE=20000 (emulators on 20000-20003); the
# data directory remembers its ports, so stop and status need only DATA.
run: setup manifest
	$(PY) -m devhost.stack start $(STACK_ARGS)
	$(PY) -m devhost.stack write-settings $(STACK_ARGS)
	$(PY) -m devhost --port $(PORT) --keys-file $(DATA)/keys.json --data-dir $(DATA)

stop:
	@if [ -x $(PY) ]; then $(PY) -m devhost.stack stop $(STACK_ARGS); else echo "nothing was running (no venv)"; fi

status:
	$(PY) -m devhost.stack status $(STACK_ARGS)

# Lint, format, types and the import layers (configuration in pyproject.toml). Every step runs, so one
# report shows all findings; the target fails if any step did.
lint: setup
	@rc=0; \
	$(VENV)/bin/ruff check . || rc=1; \
	$(VENV)/bin/ruff format --check . || rc=1; \
	$(VENV)/bin/mypy || rc=1; \
	$(VENV)/bin/lint-imports || rc=1; \
	exit $$rc

# Lint first (seconds), then the suite on TEST_WORKERS processes (pytest-xdist; each file stays on one worker, so
# its module-scoped hosts start once); each worker starts its own emulators on free ports and stops them.
TEST_WORKERS ?= 2
# The three venvs and node_modules are independent: built side by side (most of a fresh clone's setup time).
test:
	$(MAKE) --no-print-directory -j4 setup worker-venv infra-venv
	$(MAKE) --no-print-directory lock-check lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25

test-unit: setup worker-venv
	$(PY) -m pytest -q tests/unit

# pt-query-digest (Debian's percona-toolkit) is the slow-log baseline; installed here when missing.
bench: setup
	@command -v pt-query-digest >/dev/null || (apt-get update -q >/dev/null && apt-get install -y -q percona-toolkit >/dev/null) || echo "percona-toolkit unavailable: the slow-log comparison will say so"
	$(PY) -m benchmarks

conformance: setup
	$(PY) -m pytest -q tests/e2e/test_mcp_conformance.py

# Regenerate the registry snapshot that indexing reads (after adding or changing a tool).
manifest: setup
	$(PY) -m shared.app.manifest

# dist/firebreak.zip: the app plus its locked dependencies as Linux wheels, for zip deploy without a remote build.
package: setup manifest
	$(PY) -m devhost.package --out dist/firebreak.zip

# make api-key WORKSPACE=my-team USER_ID=alice  (against the stack in local.settings.json)
api-key: setup
	$(PY) -m shared.app.api_keys_cli mint --workspace "$(WORKSPACE)" --user "$(USER_ID)" --name "$(NAME)"

clean-venvs:
	rm -rf $(VENV) $(WORKER_VENV) $(INFRA_VENV) .venv-tools

clean: stop clean-venvs
	rm -rf node_modules $(DATA) .pytest_cache dist
