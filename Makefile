# Quick start: `make run` (build and evaluate the benchmark) and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := $(CURDIR)/.venv
UI_PORT ?= 4200
CACHE ?= $(CURDIR)/.cache

export PATH := $(VENV)/bin:$(PATH)
export PREFECT_HOME ?= $(CACHE)/prefect
export DVC_SITE_CACHE_DIR ?= $(CACHE)/dvc-site
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_UI_V2_ENABLED := false
export DO_NOT_TRACK := 1
export DVC_NO_ANALYTICS := 1
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120

# While this checkout's `make ui` server is up, every flow run reports to it. A server is this
# checkout's only if `make ui` started it here (flows/ui.py: its pid, port and this checkout's path in
# $(CACHE)/prefect-ui.json); whatever else answers on UI_PORT is never used.
UI := $(PYTHON) -m flows.ui --cache $(CACHE) --port $(UI_PORT)
UI_URL := $(shell $(UI) url 2>/dev/null)
ifneq ($(UI_URL),)
export PREFECT_API_URL := $(UI_URL)
endif

.PHONY: install bubblewrap chromium run test docs bench reliability mutation crash-safety fuzz lint ui ui-stop api-url clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev]'
	touch $@

bubblewrap:
	@command -v bwrap >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing bubblewrap (the agent sandbox)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap; \
	else \
		echo "bubblewrap (the agent sandbox) is missing. Run: sudo apt-get install -y bubblewrap"; \
		exit 1; \
	fi

# Headless Chromium is how the tests look at the Prefect UI.
chromium:
	@command -v chromium >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ]; then \
		echo "installing chromium (headless checks of the Prefect UI)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "chromium is missing: the UI tests will be skipped (sudo apt-get install -y chromium)"; \
	fi

install: $(VENV)/.installed bubblewrap

# Ends with an 80-column summary: score [CI], outcomes and validity gates per agent (the full numbers:
# dvc metrics show; the report: processed/reports/index.html). flows/make_run.py: `dvc repro` reporting
# to this checkout's Prefect server (started unless up; one it started is stopped at the end, KEEP_UI=1
# keeps it), and a stop signal to make ends the whole run with nothing left behind.
run: install
	@exec python -m flows.make_run --cache $(CACHE) --port $(UI_PORT) $(if $(KEEP_UI),--keep-ui)

# As root, the sandbox and attack tests run a second time with the harness as an ordinary user.
# The tests start their own Prefect servers: a `make ui` server left up (make run starts one) is not theirs.
# Two workers, one module each at a time, longest module first (tests/conftest.py): the end-to-end
# module's tiny build (~8 min) runs beside the rest of the suite. TEST_WORKERS=0 runs in one process.
# setpriv --pdeathsig: make passes no SIGTERM on, so pytest asks the kernel for one when make ends, and
# its session guard (tests/scibench_testing/session_guard.py) ends what the tests started.
TEST_WORKERS ?= 2
test: install chromium
	exec setpriv --pdeathsig TERM -- env -u PREFECT_API_URL pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)
	@if [ "$$(id -u)" = 0 ]; then echo "sandbox and attack tests as an ordinary user:"; bash tests/unprivileged.sh; fi

# The docs site (mkdocs.yml): the generated counts first (docs/generated/catalog.md from the catalog and
# the registries), then a strict build into site/: a broken link or anchor, or a page missing from the
# nav, fails it.
docs: install
	python -m stages.docs_figures
	NO_MKDOCS_2_WARNING=1 mkdocs build --strict

# The attack catalog and the sandbox's start overhead -> processed/metrics/reliability.json.
reliability: install
	python -m benchmarks.reliability

# Full-scale CAMELS ingest vs the pandas per-file loop and a polars multi-file floor (one run), the
# sandbox's start overhead, and the evaluation harness (overhead per query, scoring throughput, an
# LLM agent against a 1 s-latency scripted model, Dask scale-out of the oracle) and the construction
# flow (annotator runs through the harness vs back to back without it; build hours; Dask scale-out:
# the whole construction twice, on 1 then 2 local workers): need `make run` first.
# Last, the full SDA-style generation (6,000 instances; processed/metrics/bench_generation.json).
# Last of all, the whole build at BENCH_PROFILE (default full: ~2 h on two cores) from a fresh copy of
# the checkout, timed stage by stage into processed/metrics/bench_construction.json (build_<profile>).
BENCH_PROFILE ?= full
bench: install
	python -m benchmarks.ingest
	python -m benchmarks.reliability
	python -m benchmarks.evaluation
	python -m benchmarks.construction
	python -m benchmarks.generation
	python -m benchmarks.build --profile $(BENCH_PROFILE)

# Mutation testing: each module in benchmarks/mutation.py's MODULE_TESTS (the one list of modules and the
# tests that cover them) against only those tests; counts in processed/metrics/mutation.json.
# A subset: make mutation MODULES="stages/scoring/query stages/construction/scopes.py"
MODULES ?=
mutation: install
	python -m benchmarks.mutation --work $(CACHE)/mutation $(MODULES)

# kill -9 at 24 seeded random points of an oracle run, a killed Prefect server and a full disk, on
# the tiny benchmark (~20 min); figures in processed/metrics/crash_safety.json.
crash-safety: install
	SCIBENCH_CRASH_METRICS=1 pytest -m slow -p no:cacheprovider tests/test_crash_safety.py

# Fuzz every reader and the answer parser with 10,000 mutated inputs in total (tests/fuzz, profile
# fuzz-full); cases, crashes and time per target in processed/metrics/fuzz.json.
fuzz: install
	SCIBENCH_FUZZ=full SCIBENCH_FUZZ_REPORT=processed/metrics/fuzz.json pytest -p no:cacheprovider tests/fuzz

# ruff, then the import contracts of pyproject.toml ([tool.importlinter]; tests/test_import_contracts.py runs them too).
lint: install
	ruff check stages flows tests catalog benchmarks
	lint-imports --no-cache

# This checkout's Prefect server and UI; a server of another checkout (or anyone's) on UI_PORT is
# named and left alone, and this one starts on the next free port.
ui: install
	@$(UI) start --log $(CACHE)/prefect-ui.log

api-url:
	@echo "$(PREFECT_API_URL)"

# Stops this checkout's server only.
ui-stop:
	@$(UI) stop

clean:
	rm -rf raw/synthetic processed/sources processed/repositories processed/benchmark processed/runs
