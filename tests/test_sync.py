"""The sync engine with the sql-table connector, against real tables (SQLite and PostgreSQL).

Each test gets a memaudit store (``db``: a SQLite file, or a fresh PostgreSQL schema) and
an application table of the same dialect in a store of its own (a second SQLite file, or
a second fresh schema), written and read by the test with SQLAlchemy Core, never through
the code under test.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    DateTime,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    func,
    insert,
    make_url,
    select,
    text,
    update,
)

from auditor.config import load_settings
from auditor.daemon.runner import JobContext, Metrics, run_job
from auditor.erasure import requests as erasure
from auditor.lifecycle.machine import Lifecycle
from auditor.sources.live.base import SourceConfig, memory_id_for
from auditor.sources.live.sql_table import SqlTableConnector
from auditor.sources.outbox import list_actions, run_outbox
from auditor.sources.registry import add_source, watermark_name
from auditor.sources.sync import sync_source
from auditor.store.db import Database
from auditor.store.models import AuditEvent, ImportRun, Memory, SourceAction, SourceWatermark

T0 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
MAPPING: dict[str, Any] = {
    "table": "agent_memories",
    "columns": {
        "id": "id",
        "subject": "user_id",
        "text": "content",
        "created_at": "created_at",
        "updated_at": "updated_at",
        "expires_at": "expires_at",
        "supersedes": "replaces_id",
        "status": "state",
    },
    "subject_prefix": "user:",
    "namespace": "shop-bot",
    "source_type": "inferred",
    "status_values": {"active": "active", "archived": "deleted", "hidden": "quarantined"},
}


@dataclass
class App:
    """The application's own table, driven by the test."""

    url: str
    engine: Engine
    table: Table

    def add(self, rid: int, user: str, content: str, minutes: int = 0, **more: Any) -> None:
        stamp = T0 + timedelta(minutes=minutes)
        row = {
            "id": rid,
            "user_id": user,
            "content": content,
            "created_at": stamp,
            "updated_at": stamp,
            "state": "active",
            **more,
        }
        with self.engine.begin() as conn:
            conn.execute(insert(self.table).values(**row))

    def change(self, rid: int, minutes: int, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                update(self.table)
                .where(self.table.c.id == rid)
                .values(updated_at=T0 + timedelta(minutes=minutes), **values)
            )

    def drop(self, rid: int) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(self.table).where(self.table.c.id == rid))

    def rows(self) -> dict[int, dict[str, Any]]:
        with self.engine.connect() as conn:
            return {r.id: dict(r._mapping) for r in conn.execute(select(self.table))}


def _table(metadata: MetaData) -> Table:
    return Table(
        "agent_memories",
        metadata,
        Column("id", Integer, primary_key=True),
        Column("user_id", String(64), nullable=False),
        Column("content", Text, nullable=False),
        Column("created_at", DateTime(timezone=True)),
        Column("updated_at", DateTime(timezone=True)),
        Column("expires_at", DateTime(timezone=True)),
        Column("replaces_id", Integer),
        Column("state", String(16)),
    )


@pytest.fixture
def app(db: Database, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[App]:
    if db.dialect == "sqlite":
        url = f"sqlite:///{tmp_path / 'app.db'}"
        engine = create_engine(url)
        schema = None
    else:
        base = make_url(request.getfixturevalue("pg_admin_url")).set(
            drivername="postgresql+psycopg"
        )
        schema = f"app_{uuid.uuid4().hex[:12]}"
        admin = create_engine(base)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        admin.dispose()
        url = base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(
            hide_password=False
        )
        engine = create_engine(url)
    metadata = MetaData()
    table = _table(metadata)
    metadata.create_all(engine)
    try:
        yield App(url, engine, table)
    finally:
        engine.dispose()
        if schema is not None:
            admin = create_engine(base)
            with admin.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            admin.dispose()


def _add(db: Database, app: App, *, write_back: bool = True, **more: Any) -> None:
    add_source(
        db,
        SourceConfig(
            name="shop",
            kind="sql-table",
            options={"url": app.url, "mapping": MAPPING},
            write_back=write_back,
            **more,
        ),
    )


def _seed(app: App) -> None:
    app.add(1, "42", "Prefers oolong tea in the morning", 0)
    app.add(2, "42", "Lives at 12 Wisteria Lane, Springfield", 1)
    app.add(3, "7", "Allergic to peanuts", 2)
    app.add(4, "42", "Old address: 9 Elm Street", 3, state="archived")


def _mid(ext: int | str) -> str:
    return memory_id_for("shop", str(ext))


def _memories(db: Database) -> dict[str, Memory]:
    with db.session() as session:
        return {m.memory_id: m for m in session.scalars(select(Memory))}


def _cursor(db: Database) -> str | None:
    with db.session() as session:
        mark = session.get(SourceWatermark, watermark_name("shop"))
        return None if mark is None else mark.position


def test_first_sync_mirrors_the_table_with_provenance(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    report = sync_source(db, "shop")
    assert report.status == "completed", report.as_dict()
    assert report.mode == "full" and report.pulled == 4
    assert report.imported["inserted"] == 4 and report.deletions_checked
    got = _memories(db)
    assert set(got) == {_mid(i) for i in (1, 2, 3, 4)}
    m = got[_mid(2)]
    assert m.subject == "user:42" and m.fact == "Lives at 12 Wisteria Lane, Springfield"
    assert m.namespace == "shop-bot" and m.source_type == "inferred" and m.trust_tier == "agent"
    assert m.source_uri == "sql-table://shop/2" and m.external_id == "2" and m.origin == "sync"
    assert m.extra["source_name"] == "shop" and m.extra["source_kind"] == "sql-table"
    assert m.extra["external_id"] == "2" and m.extra["source_status"] == "live"
    assert m.updated_at == T0 + timedelta(minutes=1)
    archived = got[_mid(4)]
    assert archived.status == "deleted" and archived.status_source == "source"
    assert archived.extra["source_status"] == "deleted"
    assert archived.extra["source_status_value"] == "archived"
    with db.session() as session:
        run = session.get(ImportRun, report.import_run_id)
        assert run is not None and run.status == "completed" and run.counts["inserted"] == 4
        assert run.location == "source shop (sql-table)"
    assert _cursor(db) is not None


def test_resync_is_idempotent(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    with db.session() as session:
        events = session.scalar(select(func.count()).select_from(AuditEvent))
        versions = {m.memory_id: m.version for m in session.scalars(select(Memory))}
    again = sync_source(db, "shop")
    assert again.mode == "incremental" and again.pulled == 0 and again.status == "completed"
    full = sync_source(db, "shop", full=True)
    assert full.pulled == 4 and full.imported["unchanged"] == 4
    assert full.imported["inserted"] == full.imported["updated"] == 0 and full.gone == 0
    with db.session() as session:
        assert {m.memory_id: m.version for m in session.scalars(select(Memory))} == versions
        changes = session.scalar(
            select(func.count())
            .select_from(AuditEvent)
            .where(AuditEvent.seq > events, AuditEvent.action.like("memory.%"))
        )
    assert changes == 0


def test_incremental_sync_sees_changes_deletions_and_returns(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    app.change(1, 30, content="Prefers green tea now")
    app.drop(3)
    app.add(5, "7", "Works night shifts", 31)
    report = sync_source(db, "shop")
    assert report.mode == "incremental" and report.pulled == 2
    assert report.imported["updated"] == 1 and report.imported["inserted"] == 1
    assert report.deletions_checked and report.gone == 1
    got = _memories(db)
    assert got[_mid(1)].fact == "Prefers green tea now"
    gone = got[_mid(3)]
    assert gone.status == "deleted" and gone.extra["gone_from_source"]
    assert gone.extra["source_status"] == "gone"
    with db.session() as session:
        event = session.scalars(
            select(AuditEvent)
            .where(AuditEvent.action == "memory.deleted")
            .order_by(AuditEvent.seq.desc())
        ).first()
    assert event is not None and event.actor == "memaudit-sync"
    assert event.target_ids == [_mid(3)] and event.details["reason"] == "gone from source"
    # a second sync does not count it again
    assert sync_source(db, "shop").gone == 0
    # the row comes back (restored from the application's backup): mirrored again
    app.add(3, "7", "Allergic to peanuts", 40)
    back = sync_source(db, "shop")
    assert back.imported["updated"] == 1
    again = _memories(db)[_mid(3)]
    assert again.status == "active" and "gone_from_source" not in again.extra


def test_an_already_archived_row_that_disappears_is_only_marked(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    app.drop(4)
    report = sync_source(db, "shop")
    assert report.gone == 0 and report.gone_marked == 1
    assert _memories(db)[_mid(4)].extra["source_status"] == "gone"


def test_a_crash_mid_pull_keeps_the_cursor_and_the_next_sync_resumes(
    db_url: str, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(load_settings(database_url=db_url, import_batch_size=2))
    try:
        for rid in range(1, 8):
            app.add(rid, "42" if rid % 2 else "7", f"Fact number {rid} about the subject", rid)
        _add(db, app)
        real_pull = SqlTableConnector.pull

        def crashing(self: SqlTableConnector, cursor: str | None) -> Iterator[Any]:
            for n, item in enumerate(real_pull(self, cursor), 1):
                if n == 4:
                    raise ConnectionError("source connection lost")
                yield item

        monkeypatch.setattr(SqlTableConnector, "pull", crashing)
        failed = sync_source(db, "shop")
        assert failed.status == "failed" and "ConnectionError" in (failed.error or "")
        assert failed.cursor == "kept" and _cursor(db) is None
        # the batch before the failure is kept whole; the failing batch left nothing
        assert set(_memories(db)) == {_mid(1), _mid(2)}
        with db.session() as session:
            runs = session.scalars(select(ImportRun)).all()
        assert [r.status for r in runs] == ["failed"]

        monkeypatch.setattr(SqlTableConnector, "pull", real_pull)
        resumed = sync_source(db, "shop")
        assert resumed.status == "completed" and resumed.mode == "full"
        assert resumed.imported["inserted"] == 5 and resumed.imported["unchanged"] == 2
        assert set(_memories(db)) == {_mid(i) for i in range(1, 8)}
        before = _cursor(db)
        assert before is not None
        assert sync_source(db, "shop").pulled == 0

        # a crash during a later incremental pull leaves that cursor exactly as it was
        for rid in range(8, 14):
            app.add(rid, "42", f"Later fact number {rid}", 100 + rid)
        monkeypatch.setattr(SqlTableConnector, "pull", crashing)
        again = sync_source(db, "shop")
        assert again.status == "failed" and again.mode == "incremental"
        assert _cursor(db) == before
        assert len(_memories(db)) == 9  # one more whole batch (8, 9) was kept
        monkeypatch.setattr(SqlTableConnector, "pull", real_pull)
        done = sync_source(db, "shop")
        assert done.mode == "incremental" and done.pulled == 6
        assert done.imported["inserted"] == 4 and done.imported["unchanged"] == 2
        assert len(_memories(db)) == 13 and _cursor(db) != before
    finally:
        db.dispose()


def test_quarantine_and_restore_are_carried_into_the_table(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(2), actor="reviewer.kim", reason="exposes an address")
    with db.session() as session:
        row = session.scalars(select(SourceAction)).one()
    assert (row.action, row.status, row.external_id) == ("quarantine", "pending", "2")
    # a sync before the outbox ran keeps the reviewer's status
    sync_source(db, "shop", actions=False)
    assert _memories(db)[_mid(2)].status == "quarantined"
    assert app.rows()[2]["state"] == "active"
    result = run_outbox(db)
    assert result["done"] == 1
    assert app.rows()[2]["state"] == "hidden"
    assert {r: v["state"] for r, v in app.rows().items()} == {
        1: "active",
        2: "hidden",
        3: "active",
        4: "archived",
    }
    done = list_actions(db)[0]
    assert done.status == "done" and done.memory_id == _mid(2)
    with db.session() as session:
        assert session.get(SourceAction, done.id).external_id is None  # type: ignore[union-attr]
    Lifecycle(db).restore(_mid(2), actor="reviewer.kim")
    assert run_outbox(db)["done"] == 1
    assert app.rows()[2]["state"] == "active"
    # the next sync sees the source's own state and changes nothing of the reviewer's
    sync_source(db, "shop", full=True)
    assert _memories(db)[_mid(2)].status == "active"


def test_quarantine_then_restore_before_the_outbox_carries_the_restore(
    db: Database, app: App
) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(1), actor="rev")
    Lifecycle(db).restore(_mid(1), actor="rev")
    # the last decision is carried (idempotent in the source); the earlier one is superseded
    assert run_outbox(db)["done"] == 1
    assert [(a.action, a.status) for a in list_actions(db)] == [
        ("restore", "done"),
        ("quarantine", "cancelled"),
    ]
    assert app.rows()[1]["state"] == "active"


def test_restore_then_quarantine_does_what_the_last_action_says(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(1), actor="rev")
    run_outbox(db)
    assert app.rows()[1]["state"] == "hidden"
    Lifecycle(db).restore(_mid(1), actor="rev")
    Lifecycle(db).quarantine(_mid(1), actor="rev")
    assert run_outbox(db)["done"] == 1
    assert app.rows()[1]["state"] == "hidden"
    assert _memories(db)[_mid(1)].status == "quarantined"
    assert "write_back" not in (_memories(db)[_mid(1)].extra or {})


def test_no_write_back_source_is_never_written(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app, write_back=False)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(2), actor="rev")
    assert list_actions(db) == []
    run_outbox(db)
    assert app.rows()[2]["state"] == "active"


def test_erasure_deletes_every_row_of_the_subject_and_verifies(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(1), actor="rev")  # pending when the erasure comes
    receipt = erasure.erase_subject(db, "user:42", actor="officer.lee")
    data = receipt.as_dict()
    shop = data["sources"]["shop"]
    assert shop["status"] == "done" and shop["verified"] is True
    assert shop["counts"] == {"agent_memories": 3} and shop["remaining"] == []
    assert receipt.ok and data["verification"]["ok"], data["verification"]
    assert erasure.verify_receipt(data)
    # nothing of user 42 is left in the source table (read by the test itself)
    rows = app.rows()
    assert set(rows) == {3}
    assert all("42" not in str(v) for r in rows.values() for v in r.values() if v is not None)
    with db.session() as session:
        actions = session.scalars(select(SourceAction)).all()
    assert {a.action: a.status for a in actions} == {"quarantine": "cancelled", "erase": "done"}
    assert all(a.subject is None and a.external_id is None for a in actions)
    # a later sync does not bring anything back, and the other subject stays
    report = sync_source(db, "shop", full=True)
    assert report.imported["inserted"] == 0
    assert {m.subject for m in _memories(db).values()} == {"user:7"}


def test_an_erasure_the_source_cannot_verify_fails_the_receipt(db: Database, app: App) -> None:
    _seed(app)
    app.add(9, "7", "My friend user:42 recommended the tea shop", 9)
    _add(db, app)
    sync_source(db, "shop")
    receipt = erasure.erase_subject(db, "user:42", actor="officer.lee")
    data = receipt.as_dict()
    shop = data["sources"]["shop"]
    assert shop["verified"] is False and shop["status"] == "pending"
    assert shop["remaining"] == ["agent_memories.content: subject id (1 rows)"]
    assert not receipt.ok
    assert 9 in app.rows()  # another subject's row is reported, not deleted
    # the waiting action still holds the subject, so memaudit's own search reports it too
    hits = {h["place"] for h in data["verification"]["hits"]}
    assert any("source_actions.subject" in place for place in hits), hits
    app.drop(9)
    retried = run_outbox(db)
    assert retried["done"] == 1
    with db.session() as session:
        row = session.scalars(select(SourceAction)).one()
    assert row.status == "done" and row.subject is None and row.result["verified"] is True
    later = erasure.verify_erasure(db, "user:42")
    # user 7's own memory still mentions user:42 (reported, a person decides): only that
    assert {h.place for h in later.hits} & {"table source_actions.subject"} == set()
    assert any("memories.fact" in h.place for h in later.hits)


def test_a_removed_row_source_stays_safe_when_the_table_is_emptied(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    for rid in (1, 2, 3, 4):
        app.drop(rid)
    report = sync_source(db, "shop", full=True)
    assert report.gone == 0 and not report.deletions_checked
    assert report.status == "completed_with_errors"
    assert "returned no items" in report.errors[0]
    assert _memories(db)[_mid(1)].status == "active"


def test_an_unreachable_source_fails_cleanly(db: Database, tmp_path: Path) -> None:
    add_source(
        db,
        SourceConfig(
            name="shop",
            kind="sql-table",
            options={"url": f"sqlite:///{tmp_path / 'missing.db'}", "mapping": MAPPING},
        ),
    )
    report = sync_source(db, "shop")
    assert report.status == "failed"
    assert report.error == "source 'shop': the SQLite file does not exist"
    assert not (tmp_path / "missing.db").exists()
    assert _memories(db) == {}


def test_sqlite_text_timestamps_and_iso_t_format(db: Database, tmp_path: Path) -> None:
    """The source is a SQLite table that stores timestamps as text (either store backend)."""
    path = tmp_path / "t.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE notes (nid TEXT PRIMARY KEY, who TEXT, body TEXT, changed TEXT)"
        )
        conn.exec_driver_sql(
            "INSERT INTO notes VALUES ('a', 'user:1', 'first', '2026-01-01T10:00:00Z'), "
            "('b', 'user:1', 'second', '2026-01-01T10:00:00Z')"
        )
    mapping = {
        "table": "notes",
        "columns": {"id": "nid", "subject": "who", "text": "body", "updated_at": "changed"},
        "subject_prefix": "",
    }
    add_source(
        db,
        SourceConfig(
            name="notes", kind="sql-table", options={"url": f"sqlite:///{path}", "mapping": mapping}
        ),
    )
    assert sync_source(db, "notes").imported["inserted"] == 2
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO notes VALUES ('c', 'user:1', 'third', '2026-01-01T10:00:00Z')"
        )
    report = sync_source(db, "notes")
    assert report.pulled == 1 and report.imported["inserted"] == 1  # same time, later id
    with db.session() as session:
        m = session.get(Memory, memory_id_for("notes", "c"))
    assert m is not None and m.updated_at == datetime(2026, 1, 1, 10, tzinfo=UTC)
    engine.dispose()


def test_daemon_job_syncs_due_sources_then_runs_the_outbox(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app, schedule="every 15m")
    ctx = JobContext(db, db.settings, Metrics())
    first = run_job("source_sync", ctx)
    assert first["synced"] == 1 and first["results"]["shop"]["status"] == "completed"
    assert first["results"]["shop"]["inserted"] == 4
    Lifecycle(db).quarantine(_mid(3), actor="rev")
    second = run_job("source_sync", ctx)
    assert second["synced"] == 0  # not due again for 15 minutes
    assert second["actions"]["done"] == 1 and app.rows()[3]["state"] == "hidden"
    with db.write() as session:  # fifteen minutes later
        mark = session.get(SourceWatermark, watermark_name("shop"))
        assert mark is not None
        old = (datetime.now(UTC) - timedelta(minutes=16)).isoformat()
        mark.details = {**mark.details, "last_attempt_at": old}
    app.add(6, "7", "Plays the cello", 60)
    third = run_job("source_sync", ctx)
    assert third["synced"] == 1 and third["results"]["shop"]["inserted"] == 1


def test_daemon_job_skips_disabled_and_off_sources(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app, schedule="off")
    result = run_job("source_sync", JobContext(db, db.settings, Metrics()))
    assert result["synced"] == 0 and _memories(db) == {}


def test_a_stopped_sync_keeps_its_cursor(db: Database, app: App) -> None:
    for rid in range(1, 251):
        app.add(rid, str(rid % 5), f"Fact {rid} worth remembering", rid)
    _add(db, app)
    calls = {"n": 0}

    def stop_soon() -> bool:
        calls["n"] += 1
        return calls["n"] >= 2  # asked to stop at the second check (item 200)

    report = sync_source(db, "shop", should_stop=stop_soon)
    assert report.status == "stopped" and report.cursor == "kept"
    assert _cursor(db) is None and not report.deletions_checked
    kept = len(_memories(db))
    assert 0 < kept < 250
    finished = sync_source(db, "shop")
    assert finished.status == "completed" and finished.imported["unchanged"] == kept
    assert len(_memories(db)) == 250
