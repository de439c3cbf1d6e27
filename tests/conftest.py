"""Fixtures: every store test runs on SQLite and on PostgreSQL.

PostgreSQL comes from ``MEMAUDIT_TEST_PG_URL``. Unset, the PostgreSQL half is skipped with a
visible reason (``-ra`` prints it); set but unreachable, those tests fail. With
``MEMAUDIT_REQUIRE_PG=1`` (CI) an unset URL fails too. Each PostgreSQL test gets its own
schema, migrated from scratch and dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from auditor.config import Settings, load_settings
from auditor.store.db import Database, redact_url

PG_URL = os.environ.get("MEMAUDIT_TEST_PG_URL")
REQUIRE_PG = os.environ.get("MEMAUDIT_REQUIRE_PG") == "1"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("MEMAUDIT_") and not name.startswith(("MEMAUDIT_TEST_", "MEMAUDIT_REQ")):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _encryption_on(_clean_env: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test store is encrypted at rest, as ``memaudit init`` makes new stores: a fresh
    master key and a key folder per test. Opt out with ``MEMAUDIT_ENCRYPTION=off``."""
    monkeypatch.setenv("MEMAUDIT_MASTER_KEY", os.urandom(32).hex())
    monkeypatch.setenv("MEMAUDIT_KEY_DIR", str(tmp_path / "subject-keys"))


@pytest.fixture(autouse=True)
def _fresh_sign_in_limits() -> None:
    """Each test starts with empty sign-in rate windows (they live in the process)."""
    from auditor.access import signin_limits

    signin_limits.reset()


def _pg_url() -> str:
    if not PG_URL:
        if REQUIRE_PG:
            pytest.fail("MEMAUDIT_REQUIRE_PG=1 but MEMAUDIT_TEST_PG_URL is not set")
        pytest.skip("PostgreSQL half skipped: MEMAUDIT_TEST_PG_URL is not set (CI sets it)")
    return PG_URL


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    url = _pg_url()
    engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"))
    try:
        with engine.connect() as conn:
            conn.execute(text("select 1"))
    except Exception as exc:  # noqa: BLE001 - any failure to connect fails the PG half
        pytest.fail(f"PostgreSQL at {redact_url(url)} is unreachable: {exc}")
    finally:
        engine.dispose()
    return url


@pytest.fixture
def pg_schema_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A URL whose search_path is a fresh, empty schema (dropped after the test)."""
    base = make_url(request.getfixturevalue("pg_admin_url")).set(drivername="postgresql+psycopg")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = base.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pg)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty store URL: a SQLite file, or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    url: str = request.getfixturevalue("pg_schema_url")
    return url


@pytest.fixture
def settings(db_url: str) -> Settings:
    return load_settings(database_url=db_url)


@pytest.fixture
def db(settings: Settings) -> Iterator[Database]:
    """A migrated, empty store."""
    database = Database(settings)
    database.upgrade()
    try:
        yield database
    finally:
        database.dispose()


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``memaudit ARGS`` in-process through the real entry point; return code and output."""
    from auditor.cli.main import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 3)
        else:  # pragma: no cover - main always exits
            code = 0
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
