# memaudit: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test test-pg setup bench lint clean help

help:
	@echo "make run    - set up (first time), create the SQLite store, load the demo, run the daemon and the dashboard"
	@echo "make test   - set up (first time), run the whole test suite"
	@echo "make lint   - ruff and mypy (strict)"
	@echo "make bench  - import throughput benchmark (see benchmarks/)"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memaudit needs Python >= 3.11; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# torch first, pinned to the CPU build on this machine's disk: the mem0 extra's
	@# sentence-transformers would otherwise pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
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
	@touch $(STAMP)

setup: $(STAMP)

# The daemon scans the demo store at once, then on schedule, and the dashboard serves
# http://127.0.0.1:8501 (demo accounts: their passwords are printed the first time, or
# come from MEMAUDIT_DEMO_OFFICER_PASSWORD / MEMAUDIT_DEMO_USER_PASSWORD). Ctrl-C stops both.
# In another terminal: .venv/bin/memaudit findings ; curl localhost:9464/healthz
run: $(STAMP)
	$(BIN)/memaudit init --demo
	$(BIN)/memaudit summary
	@$(BIN)/memaudit dashboard --demo-accounts --port $${MEMAUDIT_DASHBOARD_PORT:-8501} & dash=$$!; \
	trap 'kill -TERM $$dash 2>/dev/null' INT TERM; \
	$(BIN)/memaudit daemon --health-port $${MEMAUDIT_HEALTH_PORT:-9464}; status=$$?; \
	kill -TERM $$dash 2>/dev/null; wait $$dash; exit $$status

test: $(STAMP)
	$(BIN)/python -m pytest

# The PostgreSQL half alone (the plain `make test` runs it too when MEMAUDIT_TEST_PG_URL is set).
test-pg: $(STAMP)
	MEMAUDIT_TEST_PG_URL=$${MEMAUDIT_TEST_PG_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test} \
		$(BIN)/python -m pytest -m pg

lint: $(STAMP)
	$(BIN)/ruff check auditor tests benchmarks dashboard
	$(BIN)/ruff format --check auditor tests benchmarks dashboard
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/import_bench.py --records 100000

clean:
	rm -rf $(VENV) memaudit.db memaudit.db-wal memaudit.db-shm .pytest_cache
