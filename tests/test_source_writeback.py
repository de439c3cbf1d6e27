"""Write-back reconciled, not assumed (issue 11, item 3), and the smaller connector-side
items of item 10, with the sql-table connector against real tables (SQLite and, with
MEMAUDIT_TEST_PG_URL, PostgreSQL: the ``db`` and ``app`` fixtures of tests/test_sync.py).

The application's table is written by the test with SQLAlchemy Core; a write-back the
source refuses is simulated the way it happens: the table's status column goes away (a
migration of the application), so the UPDATE fails until it comes back.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from auditor.access.readers import memory_detail
from auditor.erasure import requests as erasure
from auditor.lifecycle.machine import Lifecycle
from auditor.scan.findings import FindingFilter, iter_findings
from auditor.sources.outbox import list_actions, retry_action, run_outbox
from auditor.sources.sync import _due, sync_source
from auditor.sources.writeback import display_status
from auditor.store.db import Database
from auditor.store.models import SourceAction
from tests.test_sync import App, _add, _mid, _seed
from tests.test_sync import app as app  # noqa: F401 - the fixture, used by name

MAX_ATTEMPTS = 5  # MEMAUDIT_SOURCE_ACTION_MAX_ATTEMPTS default


def _break(app: App) -> None:
    """The application renames its status column: memaudit's UPDATE fails."""
    with app.engine.begin() as conn:
        conn.execute(text("ALTER TABLE agent_memories RENAME COLUMN state TO state_old"))


def _mend(app: App) -> None:
    with app.engine.begin() as conn:
        conn.execute(text("ALTER TABLE agent_memories RENAME COLUMN state_old TO state"))


def _drift_findings(db: Database) -> list[dict[str, object]]:
    return [
        f for f in iter_findings(db, FindingFilter(status=None)) if f["rule_id"] == "MA-SRC-005"
    ]


def test_a_failed_quarantine_shows_drifts_retries_and_converges(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(2), actor="reviewer", reason="exposes an address")
    _break(app)
    for _ in range(MAX_ATTEMPTS):
        run_outbox(db)
    failed = list_actions(db)[0]
    assert (failed.action, failed.status, failed.attempts) == ("quarantine", "failed", 5)
    m = memory_detail(db, _mid(2))["memory"]
    assert m["status"] == "quarantined"
    assert m["extra"]["write_back"]["state"] == "failed"
    assert display_status(m["status"], m["extra"]) == (
        "quarantined (held in memaudit, still live in the source (failed))"
    )
    # retry works on a failed action: its item is taken from the memory again
    retry_action(db, failed.id, actor="ops")
    with db.session() as session:
        row = session.get(SourceAction, failed.id)
        assert row is not None and row.status == "pending" and row.external_id == "2"
    _mend(app)
    assert run_outbox(db)["done"] == 1
    assert app.rows()[2]["state"] == "hidden"
    assert "write_back" not in memory_detail(db, _mid(2))["memory"]["extra"]


def test_drift_found_by_a_sync_is_requeued_flagged_and_resolved(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(2), actor="reviewer")
    assert run_outbox(db)["done"] == 1
    # the application serves the row again behind memaudit's back
    app.change(2, 30, state="active")
    report = sync_source(db, "shop", actions=False)
    assert report.reconciled["drift"] == {"quarantine": 1}
    assert report.reconciled["requeued"] == 1
    m = memory_detail(db, _mid(2))["memory"]
    assert m["status"] == "quarantined" and m["extra"]["write_back"]["state"] == "drift"
    drift = _drift_findings(db)
    assert [(f["status"], f["severity"], f["memory_ids"]) for f in drift] == [
        ("open", "high", [_mid(2)])
    ]
    assert "Wisteria" not in str(drift[0]["evidence"])  # no text in the evidence
    pending = [a for a in list_actions(db) if a.status == "pending"]
    assert [(a.action, a.memory_id) for a in pending] == [("quarantine", _mid(2))]
    report = sync_source(db, "shop")  # carries it again; the next sync sees it held
    assert report.actions["done"] == 1 and app.rows()[2]["state"] == "hidden"
    report = sync_source(db, "shop", full=True)
    assert report.reconciled["drift"] == {}
    assert [f["status"] for f in _drift_findings(db)] == ["resolved"]
    assert "write_back" not in memory_detail(db, _mid(2))["memory"]["extra"]


def test_retry_refuses_an_action_a_later_decision_replaced(db: Database, app: App) -> None:
    _seed(app)
    _add(db, app)
    sync_source(db, "shop")
    Lifecycle(db).quarantine(_mid(1), actor="rev")
    _break(app)
    for _ in range(MAX_ATTEMPTS):
        run_outbox(db)
    failed = list_actions(db)[0]
    assert failed.status == "failed"
    with db.write() as session:  # the memory is restored without a write-back source
        row = session.get(SourceAction, failed.id)
        assert row is not None
    Lifecycle(db).restore(_mid(1), actor="rev")  # supersedes the failed quarantine
    assert [(a.action, a.status) for a in list_actions(db)][:2] == [
        ("restore", "pending"),
        ("quarantine", "cancelled"),
    ]
    with pytest.raises(Exception, match="only a failed action"):
        retry_action(db, failed.id, actor="ops")


def test_erasure_reports_text_left_in_a_sqlite_sources_free_pages(
    db: Database, tmp_path: Path
) -> None:
    """The application deleted a row itself (no secure_delete) after memaudit saw it: its
    text stays in the file's free pages; the erasure's byte search reports it."""
    from sqlalchemy import create_engine

    from auditor.sources.live.base import SourceConfig
    from auditor.sources.registry import add_source
    from tests.test_sync import MAPPING, _table

    path = tmp_path / "app-free.db"
    engine = create_engine(f"sqlite:///{path}")
    from sqlalchemy import MetaData

    md = MetaData()
    table = _table(md)
    md.create_all(engine)
    local = App(f"sqlite:///{path}", engine, table)
    secret = "Passport number X1234567 issued in Springfield"
    # a long note: its overflow pages go to the free list when the application deletes it
    local.add(1, "42", "Notes from the call about the lease. " * 200 + secret, 0)
    local.add(2, "42", "Prefers oolong tea in the morning", 1)
    local.add(3, "7", "Allergic to peanuts", 2)
    add_source(
        db,
        SourceConfig(
            name="shop",
            kind="sql-table",
            options={"url": local.url, "mapping": MAPPING},
            write_back=True,
        ),
    )
    sync_source(db, "shop")
    with sqlite3.connect(path) as conn:  # the application, without secure_delete
        conn.execute("PRAGMA secure_delete = OFF")
        conn.execute("DELETE FROM agent_memories WHERE id = 1")
    assert secret.encode() in path.read_bytes()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    sync_source(db, "shop", full=True)  # memaudit keeps its copy (soft-deleted, gone)
    receipt = erasure.erase_subject(db, "user:42", actor="officer")
    shop = receipt.as_dict()["sources"]["shop"]
    assert shop["verified"] is False
    assert any(p.startswith("database file: identifying value") for p in shop["remaining"])
    assert any("every byte" in p for p in shop["searched"])
    assert secret not in str(receipt.as_dict())
    engine.dispose()


def test_every_minute_means_every_minute() -> None:
    """The job fires every 60 s, a little early or late; the attempt is recorded at the
    job's start: the next run one minute later is due (it was every 2 minutes)."""
    start = datetime(2026, 1, 1, 10, 0, 0, 5000, tzinfo=UTC)
    assert _due("every 1m", start, start + timedelta(seconds=59, microseconds=999_000))
    assert not _due("every 1m", start, start + timedelta(seconds=30))
    assert _due("every 5m", start, start + timedelta(minutes=5))


def test_sync_due_records_the_jobs_start_as_the_attempt(db: Database, app: App) -> None:
    from auditor.sources.registry import list_sources
    from auditor.sources.sync import sync_due

    _seed(app)
    _add(db, app, schedule="every 1m")
    t0 = datetime.now(UTC).replace(microsecond=0)
    first = sync_due(db, now=t0)
    assert first["synced"] == 1
    last = (list_sources(db)[0].last_sync or {})["last_attempt_at"]
    assert datetime.fromisoformat(last) == t0
    assert sync_due(db, now=t0 + timedelta(seconds=59, microseconds=500_000))["synced"] == 1
    assert sync_due(db, now=t0 + timedelta(seconds=80))["synced"] == 0
