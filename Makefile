# memaudit: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Two set-ups: `make run` needs only the package (daemon, dashboard, SQLite); `make test`
# adds the extras the tests drive (dev tools, live-source libraries, mem0 with PyTorch, the
# browser). Each has its own stamp, so `make run` never waits for the test set-up.
RUN_STAMP  := $(VENV)/.run-stamp
TEST_STAMP := $(VENV)/.test-stamp
# PyTorch is needed only by the mem0 extra (sentence-transformers), so only by `make test`.
# The CPU build is named explicitly: `+cpu` is not on PyPI, so an ordinary machine fetches it
# from PyTorch's CPU index (make test TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu)
# instead of silently pulling the multi-GB CUDA build; this machine has the wheel on disk.
TORCH           ?= torch==2.13.0+cpu
TORCH_INDEX_URL ?=

.PHONY: run test test-pg setup setup-run bench lint clean help bytecode

help:
	@echo "make run    - set up the package alone (first time), create the SQLite store, load the demo, run the daemon and the dashboard"
	@echo "make test   - set up the test extras too (first time), run the whole test suite"
	@echo "make lint   - ruff, mypy (strict) and the import contracts (lint-imports)"
	@echo "make bench  - import throughput benchmark (see benchmarks/)"

# The package alone, installed with uv (a single Rust binary from PyPI, put in the venv by
# pip): it fetches and unpacks the ~100 wheels in parallel, several times faster than pip,
# which keeps a cold `make run` within its two minutes. UV_NATIVE_TLS: the system's CA store.
# UV_COMPILE_BYTECODE: uv writes no .pyc files by default (pip does), and where
# PYTHONDONTWRITEBYTECODE is set Python never caches them either: every `memaudit` command
# would compile SQLAlchemy, pydantic ... from source, most of a listing's start-up
# (benchmarks/startup_bench.py: 1.6 s CPU for `findings` instead of 0.65 s).
$(RUN_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memaudit needs Python >= 3.11; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet 'uv>=0.5'
	UV_NATIVE_TLS=1 UV_COMPILE_BYTECODE=1 $(BIN)/python -m uv pip install --quiet --python $(BIN)/python -e .
	@touch $(RUN_STAMP)

# memaudit's own bytecode: the editable install leaves the package's sources in the checkout,
# which no installer compiles, and with PYTHONDONTWRITEBYTECODE every process (each scan,
# each worker spawned, each CLI test) would compile them again (0.1-0.2 s of each start-up
# here). compileall skips what is up to date; __pycache__ is ignored by git.
bytecode: $(RUN_STAMP)
	@$(BIN)/python -m compileall -q auditor dashboard

# The test extras with pip: it honours the machine's pip configuration (local wheel folders,
# constraints), which is where this machine keeps the CPU build of PyTorch.
$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL)) '$(TORCH)'
	$(BIN)/python -m pip install --quiet -e '.[dev,sources,mem0]'
	@# The browser test drives Debian's chromium (never `playwright install`).
	@if [ ! -x /usr/bin/chromium ] && [ "$${MEMAUDIT_SKIP_BROWSER:-}" != 1 ]; then \
	  echo "installing Debian's chromium for the browser test"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=; \
	  elif command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	  else echo "error: /usr/bin/chromium is missing and this is neither root nor has sudo: run 'apt-get install chromium' as root, or set MEMAUDIT_SKIP_BROWSER=1 to skip the browser test" >&2; exit 1; fi; \
	  command -v apt-get >/dev/null 2>&1 || { echo "error: /usr/bin/chromium is missing and there is no apt-get: install Chromium at /usr/bin/chromium, or set MEMAUDIT_SKIP_BROWSER=1" >&2; exit 1; }; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium \
	    || { $$sudo apt-get update && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; } \
	    || { echo "error: could not install chromium with apt-get; install it by hand, or set MEMAUDIT_SKIP_BROWSER=1 to skip the browser test" >&2; exit 1; }; \
	  test -x /usr/bin/chromium || { echo "error: chromium installed but /usr/bin/chromium is missing" >&2; exit 1; }; \
	fi
	@touch $(TEST_STAMP)

setup: $(TEST_STAMP)
setup-run: $(RUN_STAMP)

# The daemon scans the demo store at once, then on schedule, and the dashboard serves
# http://127.0.0.1:8501 (demo accounts: their passwords are printed the first time, or
# come from MEMAUDIT_DEMO_OFFICER_PASSWORD / MEMAUDIT_DEMO_USER_PASSWORD). Ctrl-C stops both.
# In another terminal: .venv/bin/memaudit findings ; curl localhost:9464/healthz
run: $(RUN_STAMP) bytecode
	$(BIN)/memaudit init --demo
	$(BIN)/memaudit summary
	@$(BIN)/memaudit dashboard --demo-accounts --port $${MEMAUDIT_DASHBOARD_PORT:-8501} & dash=$$!; \
	trap 'kill -TERM $$dash 2>/dev/null' INT TERM; \
	$(BIN)/memaudit daemon --health-port $${MEMAUDIT_HEALTH_PORT:-9464}; status=$$?; \
	kill -TERM $$dash 2>/dev/null; wait $$dash; exit $$status

test: $(TEST_STAMP) bytecode
	$(BIN)/python -m pytest

# The PostgreSQL half alone (the plain `make test` runs it too when MEMAUDIT_TEST_PG_URL is set).
test-pg: $(TEST_STAMP) bytecode
	MEMAUDIT_TEST_PG_URL=$${MEMAUDIT_TEST_PG_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test} \
		$(BIN)/python -m pytest -m pg

lint: $(TEST_STAMP)
	$(BIN)/ruff check auditor tests benchmarks dashboard
	$(BIN)/ruff format --check auditor tests benchmarks dashboard
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: $(RUN_STAMP)
	$(BIN)/python benchmarks/import_bench.py --records 100000

clean:
	rm -rf $(VENV) memaudit.db memaudit.db-wal memaudit.db-shm .pytest_cache
	find auditor dashboard -name __pycache__ -prune -exec rm -rf {} +
