"""Bounded inputs: every entry point refuses oversized text with what, where and the limit,
before any work, and nothing already stored is lost; killed imports end `interrupted`."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

from auditor import limits
from auditor.access import accounts
from auditor.access import erasure as access_erasure
from auditor.access import officer_actions as access_actions
from auditor.access.user import correct_my_memory
from auditor.errors import InputError
from auditor.lifecycle.machine import Lifecycle
from auditor.processes import owner_record
from auditor.scan import findings
from auditor.sources.files import open_source
from auditor.sources.import_stale import reap_stale_imports
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, ImportRun, Memory
from auditor.store.types import utcnow
from auditor.testing import make_record, write_jsonl

LONG = "why " * 10_001  # 40,004 characters: the probe
SECRET_WORD = "zebracorn"  # stands for personal data in a value: never echoed


@pytest.fixture(autouse=True)
def _fast_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        accounts, "_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    )


def add_memory(db: Database, memory_id: str = "m1", subject: str = "user:ana") -> None:
    Lifecycle(db).add(
        make_record(memory_id=memory_id, subject=subject, fact="Ana likes tea"), actor="test"
    )


def memory(db: Database, memory_id: str = "m1") -> Memory | None:
    with db.session() as s:
        return s.get(Memory, memory_id)


def officer(db: Database) -> accounts.Actor:
    accounts.add_user(db, "olga", role="officer", password="a long enough password", by="t")
    return accounts.Actor("olga", "officer", None, "password")


def user(db: Database, subject: str = "user:ana") -> accounts.Actor:
    accounts.add_user(
        db, "ana", role="user", subject=subject, password="a long enough password", by="t"
    )
    return accounts.Actor("ana", "user", subject, "password")


def test_check_chars_names_what_where_size_and_limit_never_the_value() -> None:
    with pytest.raises(InputError) as info:
        limits.check_chars(SECRET_WORD * 10, 20, what="the reason", where="erasure request")
    assert str(info.value) == ("erasure request: the reason is 90 characters, over the limit of 20")
    assert limits.check_chars(None, 1, what="x", where="y") is None
    assert limits.check_chars("ok", 2, what="x", where="y") == "ok"
    with pytest.raises(InputError, match="must be text"):
        limits.check_chars(b"bytes", 10, what="x", where="y")  # type: ignore[arg-type]


def test_lifecycle_reason_is_bounded_and_the_memory_kept(db: Database) -> None:
    add_memory(db)
    with pytest.raises(InputError) as info:
        Lifecycle(db).quarantine("m1", actor="t", reason=LONG + SECRET_WORD)
    message = str(info.value)
    assert message.startswith("memory m1: the reason is 40,013 characters")
    assert "over the limit of 2,000" in message and SECRET_WORD not in message
    stored = memory(db)
    assert stored is not None and stored.status == "active" and stored.version == 1
    Lifecycle(db).quarantine("m1", actor="t", reason="x" * 2000)  # at the limit: fine


def test_the_note_limit_is_a_setting(db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    add_memory(db)
    monkeypatch.setattr(db, "settings", db.settings.model_copy(update={"max_note_chars": 5000}))
    Lifecycle(db).quarantine("m1", actor="t", reason="x" * 4000)
    assert memory(db) is not None and memory(db).status == "quarantined"  # type: ignore[union-attr]


def test_review_note_is_bounded_in_the_service_the_cli_and_findings(
    db: Database, run_cli: Any, db_url: str
) -> None:
    actor = officer(db)
    with pytest.raises(InputError, match=r"^review: the reason is 40,004 characters"):
        access_actions.act_on_findings(db, actor, ["f-1"], "dismiss", reason=LONG)
    with pytest.raises(InputError, match=r"^finding f-1: the note is 40,004 characters"):
        findings.review(db, "f-1", "acknowledge", actor="olga", note=LONG)
    r = run_cli(
        "--database-url", db_url, "review", "f-1", "--acknowledge", "--note", LONG, "--by", "o"
    )
    assert r.code == 2, (r.code, r.err)
    assert "memaudit review --note: the note is 40,004 characters" in r.err
    assert "over the limit of 2,000" in r.err


def test_user_correction_is_bounded_and_the_memory_kept(db: Database) -> None:
    add_memory(db)
    actor = user(db)
    with pytest.raises(InputError) as info:
        correct_my_memory(db, actor, "m1", "tea " * 2_501)
    assert str(info.value) == (
        "correct my memory: the correction is 10,004 characters, over the limit of 10,000"
    )
    with db.session() as s:
        assert [m.memory_id for m in s.scalars(select(Memory))] == ["m1"]
    assert memory(db).status == "active"  # type: ignore[union-attr]
    corrected = correct_my_memory(db, actor, "m1", "Ana likes coffee")
    assert corrected["memory_id"] != "m1"


def test_erasure_reason_is_bounded_in_the_service_and_the_cli(
    db: Database, run_cli: Any, db_url: str
) -> None:
    add_memory(db)
    actor = user(db)
    with pytest.raises(InputError, match=r"^erasure request: the reason is 40,004 characters"):
        access_erasure.request_my_erasure(db, actor, reason=LONG)
    with pytest.raises(InputError, match="the reason is 40,004 characters"):
        access_erasure.erase_subject_now(db, officer(db), "user:ana", reason=LONG)
    r = run_cli(
        "--database-url", db_url, "erase", "user:ana", "--by", "o", "--reason", LONG, "--yes"
    )
    assert r.code == 2 and "the reason is 40,004 characters, over the limit of 2,000" in r.err
    assert memory(db) is not None  # nothing was erased
    with db.session() as s:
        assert s.scalar(select(AuditEvent).where(AuditEvent.action.like("erasure.%"))) is None


def test_import_reports_the_oversized_records_and_keeps_the_rest(
    db: Database, tmp_path: Path
) -> None:
    records = [
        make_record(memory_id="ok1"),
        make_record(memory_id="big", fact="x" * 300_000),
        make_record(memory_id="ns", namespace="n" * 300),
        make_record(memory_id="s" * 200),
        make_record(memory_id="ok2"),
    ]
    path = write_jsonl(tmp_path / "m.jsonl", records)
    report = Importer(db).run(open_source("jsonl", path, db.settings))
    assert (report.inserted, report.skipped) == (2, 3)
    assert report.errors[0].startswith("line 2") and "over the limit of 262,144" in report.errors[0]
    assert report.errors[1].startswith("line 3") and "namespace" in report.errors[1]
    assert report.errors[2].startswith("line 4") and "memory_id" in report.errors[2]
    assert "x" * 100 not in json.dumps(report.errors)
    with db.session() as s:
        assert sorted(s.scalars(select(Memory.memory_id))) == ["ok1", "ok2"]


def test_an_oversized_line_is_reported_by_location(db: Database, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "m.jsonl",
        [make_record(memory_id="ok1"), make_record(memory_id="huge", fact="y" * 2_000_000)],
    )
    report = Importer(db).run(open_source("jsonl", path, db.settings))
    assert report.inserted == 1 and report.skipped == 1
    assert report.errors[0].startswith("line 2"), report.errors


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _running_run(db: Database, counts: dict[str, Any], age: timedelta = timedelta()) -> int:
    with db.write() as s:
        run = ImportRun(source_format="jsonl", location="x", actor="t", counts=counts)
        s.add(run)
        s.flush()
        s.execute(update(ImportRun).where(ImportRun.id == run.id).values(started_at=utcnow() - age))
        return run.id


def status(db: Database, run_id: int) -> str:
    with db.session() as s:
        run = s.get(ImportRun, run_id)
        assert run is not None
        return run.status


def test_a_killed_import_is_marked_interrupted_at_the_next_import(
    db: Database, tmp_path: Path
) -> None:
    me = owner_record()
    dead = _running_run(db, {"owner": {**me, "pid": _dead_pid(), "started": "1"}})
    alive = _running_run(db, {"owner": me})  # this process: still importing
    old_unowned = _running_run(db, {}, age=timedelta(hours=2))
    young_unowned = _running_run(db, {}, age=timedelta(minutes=1))
    other_host = _running_run(
        db,
        {
            "owner": {"host": "elsewhere", "pid": 1, "started": "1"},
            "heartbeat": "2000-01-01T00:00:00Z",
        },
    )
    report = Importer(db).run(
        open_source("jsonl", write_jsonl(tmp_path / "m.jsonl", [make_record()]), db.settings)
    )
    assert report.inserted == 1 and status(db, report.run_id) == "completed"
    assert status(db, dead) == "interrupted"
    assert status(db, old_unowned) == "interrupted"
    assert status(db, other_host) == "interrupted"
    assert status(db, alive) == "running" and status(db, young_unowned) == "running"
    with db.session() as s:
        (ev,) = s.scalars(select(AuditEvent).where(AuditEvent.action == "import.interrupted"))
        assert sorted(ev.target_ids) == sorted(str(i) for i in (dead, old_unowned, other_host))
    assert reap_stale_imports(db) == []  # nothing left to close


def test_a_running_import_records_its_owner_and_heartbeat(db: Database, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    def progress(_consumed: int) -> None:
        with db.session() as s:
            run = s.scalars(select(ImportRun).where(ImportRun.status == "running")).first()
            if run is not None:
                seen.append(dict(run.counts))

    path = write_jsonl(tmp_path / "m.jsonl", [make_record() for _ in range(3)])
    Importer(db).run(open_source("jsonl", path, db.settings), progress=progress)
    assert seen and seen[0]["owner"] == owner_record()
    assert seen[0]["heartbeat"].endswith("Z")


def test_sync_reports_an_oversized_row_and_mirrors_the_rest(db: Database, tmp_path: Path) -> None:
    from sqlalchemy import Column, Integer, MetaData, String, Table, Text, create_engine, insert

    from auditor.sources.live.base import SourceConfig
    from auditor.sources.registry import add_source
    from auditor.sources.sync import sync_source

    url = f"sqlite:///{tmp_path / 'app.db'}"
    engine = create_engine(url)
    table = Table(
        "notes",
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("user_id", String(64)),
        Column("content", Text),
    )
    table.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(table),
            [
                {"id": 1, "user_id": "42", "content": "Prefers tea"},
                {"id": 2, "user_id": "42", "content": "z" * 300_000},
                {"id": 3, "user_id": "7", "content": "Allergic to peanuts"},
            ],
        )
    engine.dispose()
    mapping = {
        "table": "notes",
        "columns": {"id": "id", "subject": "user_id", "text": "content"},
        "subject_prefix": "user:",
    }
    add_source(
        db, SourceConfig(name="app", kind="sql-table", options={"url": url, "mapping": mapping})
    )
    report = sync_source(db, "app")
    assert report.imported["inserted"] == 2, report.as_dict()
    assert len(report.errors) == 1 and "over the limit of 262,144" in report.errors[0]
    assert "z" * 100 not in report.errors[0]
    with db.session() as s:
        facts = sorted(s.scalars(select(Memory.fact)))
    assert facts == ["Allergic to peanuts", "Prefers tea"]


def test_config_file_size_and_nesting_are_bounded(tmp_path: Path) -> None:
    from auditor.config import ConfigError, load_settings

    huge = tmp_path / "huge.toml"
    huge.write_text("# pad\n" * 200_000, encoding="utf-8")  # 1.2 MB
    with pytest.raises(ConfigError, match=r"huge.toml is 1,200,000 bytes, over the limit of"):
        load_settings(config_file=huge)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_settings(config_file=deep)


def test_a_rule_pack_with_too_many_files_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.rulepack.pack import RuleError, load_pack

    monkeypatch.setattr(limits, "MAX_RULE_FILES", 3)
    for i in range(4):
        (tmp_path / f"ma-tst-{i:03d}.yaml").write_text("id: x\n", encoding="utf-8")
    with pytest.raises(RuleError, match="4 rule files, over the limit of 3"):
        load_pack(tmp_path)
