# The README's commands. PYTHON / VENV pick the interpreter and its virtualenv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# SAM CLI has a virtualenv of its own (requirements-sam.txt): its pins clash with
# the dev tools'. Telemetry off: the checks talk to no AWS endpoint.
SAM_VENV ?= .venv-sam
SAM := SAM_CLI_TELEMETRY=0 $(SAM_VENV)/bin/sam
# checkov, likewise in a virtualenv of its own (requirements-checkov.txt pins why).
CHECKOV_VENV ?= .venv-checkov
# sam build needs the Lambda runtime's python3.13 on PATH: pyenv's newest 3.13 when
# pyenv has one (its shims exist but fail unless 3.13 is selected), else a
# python3.13 on PATH that runs. Set PYTHON313=/path/to/python3.13 to choose.
PYENV_ROOT ?= $(HOME)/.pyenv
PYTHON313 ?= $(shell for p in $$(ls -d $(PYENV_ROOT)/versions/3.13.*/bin/python3.13 2>/dev/null | sort -rV) $$(command -v python3.13); do "$$p" --version >/dev/null 2>&1 && { echo "$$p"; break; }; done)

# The functions' CPU architecture, one setting for both the build and the deploy: sam
# build fetches the engine layer's compiled wheels for it, and the built template
# (what sam deploy deploys) allows no other (dev/pin_architecture.py), so a deploy
# answered with the other one is refused instead of shipping wheels that cannot load.
ARCH ?= x86_64

# A stand-in for the Lambda python3.13 runtime: that interpreter with boto3 (pinned in
# requirements-lambda-runtime.txt) and nothing else. The packaging tests and
# bench/cold_start.py run the built functions in it, so an import that works only
# because the dev tools are installed fails here as it would in Lambda.
LAMBDA_VENV ?= .venv-lambda
# awslambdaric, the runtime's bootstrap (requirements-lambda-ric.txt), kept apart from
# the stand-in's site-packages as Lambda keeps it in /var/runtime: the packaging tests
# run the built functions under it against a Runtime API stand-in.
LAMBDA_RIC ?= .venv-lambda-ric

.PHONY: install demo test lint docs template build deploy packaging bench client-test

# dev/venv.sh checks the Python first, makes a virtualenv a wrong Python left behind
# again, and prints a line per package while pip works.
$(BIN)/.installed: pyproject.toml dev/venv.sh
	dev/venv.sh $(PYTHON) $(VENV) "signoff and its development tools" -e '.[dev]'
	touch $@

$(SAM_VENV)/.installed: requirements-sam.txt dev/venv.sh
	dev/venv.sh $(PYTHON) $(SAM_VENV) "the SAM CLI" -r requirements-sam.txt
	touch $@

$(CHECKOV_VENV)/.installed: requirements-checkov.txt dev/venv.sh
	dev/venv.sh $(PYTHON) $(CHECKOV_VENV) "checkov" -r requirements-checkov.txt
	touch $@

# No pip inside: .venv/'s pip installs into it (pip --python), so its site-packages
# hold boto3 and boto3's own dependencies only.
$(LAMBDA_VENV)/.installed: requirements-lambda-runtime.txt | $(BIN)/.installed
	@[ -n "$(PYTHON313)" ] || { echo "$(LAMBDA_VENV) needs python3.13 (the Lambda runtime): none found on PATH or under $(PYENV_ROOT)/versions" >&2; exit 1; }
	$(PYTHON313) -m venv --clear --without-pip $(LAMBDA_VENV)
	$(BIN)/python -m pip --python $(LAMBDA_VENV)/bin/python install -q -r requirements-lambda-runtime.txt
	touch $@

$(LAMBDA_RIC)/.installed: requirements-lambda-ric.txt $(LAMBDA_VENV)/.installed
	rm -rf $(LAMBDA_RIC)
	$(BIN)/python -m pip --python $(LAMBDA_VENV)/bin/python install -q --target $(LAMBDA_RIC) -r requirements-lambda-ric.txt
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/signoff demo

# lint-imports: the layers and cycles of pyproject.toml's [tool.importlinter].
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# template.yaml: first the agents it ships (agents/, the AgentsLayer's ContentUri)
# loaded as the functions load them, so a bad notify name or a YAML error fails
# here and not at an agent's first request, a rule naming a tool its agent lacks
# (a warning elsewhere: --strict) fails too, and a redis / database channel whose
# client library neither the layer's requirements nor requirements-channels.txt pins
# fails naming it (signoff check, well under a second);
# then cfn-lint, checkov (offline; .checkov.yaml lists the findings accepted and
# why), SAM's own lint, and a build into .aws-sam/build (the engine
# layer's wheels are fetched for python3.13 and ARCH,
# x86_64 by default). sam needs a region for these, no credentials. --cached
# rebuilds only what changed. Then the agents layer goes into the build with the
# parse of its YAML (dev/agents_layer.py: a deployed cold start reads that instead
# of importing PyYAML; an edited file is parsed as ever). And the engine layer gets
# the client libraries of the channels agents/ configures, no others
# (dev/channel_libraries.py: redis for a redis channel, psycopg for a database one,
# requirements-channels.txt's pins, wheels for python3.13 and ARCH).
template: install $(SAM_VENV)/.installed $(CHECKOV_VENV)/.installed
	$(BIN)/signoff check --strict --agents agents --layer-requirements layers/signoff/requirements.txt --layer-requirements layers/signoff/requirements-channels.txt
	$(BIN)/cfn-lint template.yaml
	$(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml
	$(SAM) validate --lint --region us-east-1
	@[ -n "$(PYTHON313)" ] || { echo "sam build needs python3.13 (the Lambda runtime): none found on PATH or under $(PYENV_ROOT)/versions" >&2; exit 1; }
	PATH="$(dir $(PYTHON313)):$$PATH" $(SAM) build --cached --parameter-overrides Architecture=$(ARCH) $(SAM_BUILD_ARGS)
	$(BIN)/python dev/pin_architecture.py .aws-sam/build/template.yaml $(ARCH)
	$(BIN)/python dev/agents_layer.py .aws-sam/build agents
	$(BIN)/python dev/channel_libraries.py .aws-sam/build agents $(ARCH)
	$(PYTHON313) -m compileall -q -f -j 0 --invalidation-mode unchecked-hash .aws-sam/build

# What to deploy: `make deploy` (or `make build` then the pinned sam yourself). The template's checks and
# sam build, then the bytecode Lambda cannot write itself: /opt and /var/task are
# read-only, so without .pyc every cold start compiles each module it imports (about
# 3x the import time: bench/cold_start.py --no-bytecode). unchecked-hash: the zip's
# timestamps do not matter; -f rewrites every .pyc, so none outlives its source.
# ARCH=arm64 builds for Graviton (and `make deploy ARCH=arm64` deploys it); SAM_BUILD_ARGS
# goes to sam build.
build: template

# The pinned SAM CLI (.venv-sam) deploys what `make build` built: guided the first
# time (it writes samconfig.toml), then with the answers saved there. Credentials
# and region come from the usual AWS environment; DEPLOY_ARGS goes to sam deploy.
deploy: build
	@if [ -f samconfig.toml ]; then \
	  echo "$(SAM) deploy $(DEPLOY_ARGS)"; $(SAM) deploy $(DEPLOY_ARGS); \
	else \
	  echo "$(SAM) deploy --guided $(DEPLOY_ARGS)"; $(SAM) deploy --guided $(DEPLOY_ARGS); \
	fi

# What tests/packaging imports and bench/cold_start.py times: sam build's artifacts
# in .aws-sam/build, run by the Lambda runtime's stand-in (and its awslambdaric).
packaging: template $(LAMBDA_VENV)/.installed $(LAMBDA_RIC)/.installed

# The TypeScript client (clients/typescript, Node.js 20+ and npm): its devDependencies from
# the lockfile (npm ci; node_modules stays in that folder), then node --test: the generated
# event types against protocol/loop-event.schema.json, the committed dist/ (and the
# playground's copy of it) against what src/ builds, and the client against local stacks the
# tests start with this virtualenv's Python (tests/support/node_stack.py).
CLIENT := clients/typescript
client-test: install
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "make test runs the TypeScript client's tests (clients/typescript) with Node.js 20+ and npm: node or npm is not on PATH; install them and run again" >&2; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { echo "the TypeScript client's tests need Node.js 20 or newer; this node is $$(node --version)" >&2; exit 1; }
	cd $(CLIENT) && npm ci --no-audit --no-fund
	cd $(CLIENT) && SIGNOFF_PYTHON="$(abspath $(BIN))/python" npm test

# The documentation site (mkdocs.yml, docs/): built offline into site/ (git-ignored), with
# --strict: a broken link or anchor, or a page missing from nav, fails it. Its HTTP API
# page is drawn from openapi.json at build time (docs/_hooks/openapi.py).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# pytest exits 5 when it collects nothing; that is not a failure of the checks above.
# `packaging` comes first, so the packaging tests find what they import; the TypeScript
# client's tests (client-test) run before pytest.
# PYTEST_ARGS narrows the pytest run (folders, -k …); empty, it is every test. -n auto:
# pytest-xdist, a worker process per core (PYTEST_ARGS="-n 0" runs in one process).
PYTEST_ARGS ?=
test: lint docs packaging client-test
	$(BIN)/python -m pytest -q -n auto $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ]

bench: install packaging
	$(BIN)/python bench/engine_overhead.py
	$(BIN)/python bench/checkpoint_growth.py
	$(BIN)/python bench/notifier_fanout.py
	$(BIN)/python bench/cold_start.py
	$(BIN)/python bench/aws_cost.py
	$(BIN)/python bench/capacity.py
	$(BIN)/python bench/live_latency.py
