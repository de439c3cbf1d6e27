"""Schema and migrations: the migrations build exactly the models, upgrades keep data."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from auditor.config import load_settings
from auditor.errors import ConfigError, StoreError
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import HEAD_REVISION, Database
from auditor.store.models import Base, Memory, foreign_table
from auditor.testing import make_record


def test_migrations_match_the_models(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(
                conn,
                opts={
                    "compare_type": True,
                    "include_object": lambda o, name, type_, r, c: (
                        not (type_ == "table" and foreign_table(name))
                    ),
                },
            ),
            Base.metadata,
        )
    assert diff == []


def test_upgrade_from_first_revision_keeps_memories(db_url: str) -> None:
    db = Database(load_settings(database_url=db_url))
    cfg = db.alembic_config()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    with db.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO memories (memory_id, subject, namespace, kind, category, fact, "
                "trust_tier, status, status_source, created_at, updated_at, access_count, "
                "content_hash, extra, version) VALUES ('old', 'user:a', 'd', 'semantic', 'note', "
                "'kept', 'user', 'active', 'source', :t, :t, 0, 'h', '{}', 1)"
            ),
            {"t": datetime(2026, 1, 1, 12, 0)},
        )
    before, after = db.upgrade()
    assert (before, after) == ("0001", db.head_revision())
    m = Lifecycle(db).get("old")
    assert m.fact == "kept" and m.changed_at == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    db.dispose()


def test_require_schema_names_the_fix(tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    with pytest.raises(StoreError, match="memaudit init"):
        db.require_schema()
    db.upgrade()
    db.require_schema()
    db.dispose()


def test_the_recorded_head_revision_is_alembics_head(tmp_path: Path) -> None:
    # require_schema compares with HEAD_REVISION instead of loading Alembic: a new
    # migration must move it too
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    assert HEAD_REVISION == db.head_revision()
    db.dispose()


def test_current_revision_reads_what_alembic_reads(db_url: str) -> None:
    db = Database(load_settings(database_url=db_url))

    def alembics() -> str | None:
        with db.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    assert db.current_revision() is None and alembics() is None
    cfg = db.alembic_config()
    for revision in ("0001", "0003", "head"):
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
        assert db.current_revision() == alembics() is not None
    assert db.current_revision() == HEAD_REVISION
    db.require_schema()
    db.dispose()


def test_require_schema_names_an_old_schema(tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    cfg = db.alembic_config()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
    with pytest.raises(StoreError, match=f"at schema 0005, this memaudit needs {HEAD_REVISION}"):
        db.require_schema()
    db.dispose()


def test_missing_sqlite_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="folder does not exist"):
        Database(load_settings(database_url=f"sqlite:///{tmp_path / 'no' / 'x.db'}"))


def test_naive_datetimes_from_code_are_refused(db: Database) -> None:
    Lifecycle(db).add(make_record(memory_id="a"), actor="t")
    with pytest.raises(StoreError), db.write() as s:
        m = s.get(Memory, "a")
        assert m is not None
        m.expires_at = datetime(2026, 1, 1)  # naive
        s.flush()
