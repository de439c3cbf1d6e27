# memaudit: the two set-up commands are `make run` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test test-pg setup bench lint clean help

help:
	@echo "make run    - set up (first time), create the SQLite store, load the demo, run the main job"
	@echo "make test   - set up (first time), run the whole test suite"
	@echo "make lint   - ruff and mypy (strict)"
	@echo "make bench  - import throughput benchmark (see benchmarks/)"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memaudit needs Python >= 3.11; set PYTHON=python3.11")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

# The daemon scans the demo store at once, then on schedule; Ctrl-C stops it cleanly.
# In another terminal: .venv/bin/memaudit findings ; curl localhost:9464/healthz
run: $(STAMP)
	$(BIN)/memaudit init --demo
	$(BIN)/memaudit summary
	$(BIN)/memaudit daemon --health-port $${MEMAUDIT_HEALTH_PORT:-9464}

test: $(STAMP)
	$(BIN)/python -m pytest

# The PostgreSQL half alone (the plain `make test` runs it too when MEMAUDIT_TEST_PG_URL is set).
test-pg: $(STAMP)
	MEMAUDIT_TEST_PG_URL=$${MEMAUDIT_TEST_PG_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/test} \
		$(BIN)/python -m pytest -m pg

lint: $(STAMP)
	$(BIN)/ruff check auditor tests benchmarks
	$(BIN)/ruff format --check auditor tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/import_bench.py --records 100000

clean:
	rm -rf $(VENV) memaudit.db memaudit.db-wal memaudit.db-shm .pytest_cache
